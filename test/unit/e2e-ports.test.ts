// The ports the end-to-end harness hands its servers (test/e2e/ports.ts): never one the kernel may give anyone else
// meanwhile, never the same twice, never one something listens on.
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ephemeralRange, freePort, portSlice } from "../e2e/ports";

const listening: Server[] = [];
afterEach(async () => {
  for (const server of listening.splice(0)) await new Promise((done) => server.close(done));
});

/** Listens on 127.0.0.1:`port` until the test ends. */
async function occupy(port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((done, fail) => server.once("error", fail).listen({ port, host: "127.0.0.1", exclusive: true }, done));
  listening.push(server);
}

const [ephemeralLow, ephemeralHigh] = ephemeralRange();
const outsideEphemeral = (port: number) => port < ephemeralLow || port > ephemeralHigh;

describe("freePort", () => {
  it("hands out ports outside the kernel's ephemeral range, so no socket bound to port 0 nor outgoing connection takes one before the server binds it", async () => {
    const ports = await Promise.all(Array.from({ length: 8 }, () => freePort()));
    expect(ports.filter((port) => !outsideEphemeral(port))).toEqual([]);
  });

  it("never hands two concurrent calls the same port, nor a port handed out before", async () => {
    const first = await Promise.all(Array.from({ length: 40 }, () => freePort(3, 0)));
    const second = await Promise.all(Array.from({ length: 40 }, () => freePort(3, 0)));
    expect(new Set([...first, ...second]).size).toBe(80);
    // Each was free when handed out: all can be listened on together.
    for (const port of [...first, ...second]) await occupy(port);
  });

  it("gives each vitest worker a slice of its own, so files running beside each other never share a port", () => {
    const slices = Array.from({ length: 16 }, (_, index) => portSlice(index + 1)!);
    for (const slice of slices) expect(outsideEphemeral(slice.first) && outsideEphemeral(slice.last)).toBe(true);
    const sorted = [...slices].sort((a, b) => a.first - b.first);
    for (let index = 1; index < sorted.length; index++) expect(sorted[index]!.first).toBeGreaterThan(sorted[index - 1]!.last);
  });

  it("passes over a port something else listens on", async () => {
    const slice = portSlice(5)!;
    // The port it would start at is taken by another process's server.
    await occupy(slice.first + 7);
    const port = await freePort(5, 7);
    expect(port).toBe(slice.first + 8);
  });

  it("lets the kernel pick where the ephemeral range leaves no room below it", () => {
    expect(portSlice(1, [1024, 65535])).toBeUndefined();
  });
});
