import { exportJWK, generateKeyPair } from "jose";
import type { TestProject } from "vitest/node";
import { createTargetServer } from "./target-server";

/**
 * Starts the loopback target server for the whole run and hands its port to the tests. It also acts
 * as a local OAuth issuer: a fresh key pair whose public half it serves as `/jwks.json`; tests get
 * the private half to sign tokens with.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: "issuer-key-1", alg: "RS256", use: "sig" };
  project.provide("oauthPrivateJwk", JSON.stringify({ ...(await exportJWK(privateKey)), kid: "issuer-key-1", alg: "RS256" }));
  // A key of the same type the issuer never signs with, served first by /jwks.json?decoy=N (N times, under other kids).
  const decoy = await generateKeyPair("RS256", { extractable: true });
  const decoyJwk = { ...(await exportJWK(decoy.publicKey)), kid: "decoy-key-1", alg: "RS256", use: "sig" };
  const server = createTargetServer({ jwks: { keys: [publicJwk] }, decoyJwk });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  project.provide("targetPort", typeof address === "object" && address ? address.port : 0);
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
}
