import type { TestProject } from "vitest/node";
import { createTargetServer } from "./target-server";

/** Starts the loopback target server for the whole run and hands its port to the tests. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = createTargetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  project.provide("targetPort", typeof address === "object" && address ? address.port : 0);
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
}
