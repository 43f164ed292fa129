/// <reference types="node" />
/**
 * Ports for the servers the end-to-end tests start (wrangler's dev server, `npm start`), which bind them seconds after
 * the port is chosen, in another process.
 *
 * A port the kernel picked (bind to port 0, read, close) is free only at that instant: it comes from the kernel's
 * ephemeral range, the one it hands to every socket bound to port 0 and every outgoing connection, so until wrangler
 * binds it any other process may get it, not least the workerd of an e2e file running beside (Miniflare binds several
 * loopback sockets to port 0 as it starts). wrangler then waits silently and never answers ready, or the test talks
 * to another file's server. So ports are handed out from below that range, where the kernel never picks one, each
 * vitest worker from a slice of its own (files running at once are in different workers), and within a process never
 * twice; a port something listens on is passed over.
 */
import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";

/** Ports from here up to the ephemeral range are handed out: above the usual services' (3000, 5432, 8080, 8787...). */
const HANDED_OUT_FROM = 20_000;
/** Slices of that span: more than the vitest workers the suite runs, so that each has one of its own. */
const SLICES = 16;
/** A slice smaller than this means the ephemeral range was set unusually low: the kernel picks the port then. */
const MIN_SLICE = 64;
/** Linux's default ephemeral range, where /proc does not say. */
const DEFAULT_EPHEMERAL: readonly [number, number] = [32_768, 60_999];

/** The kernel's ephemeral port range, inclusive (Linux's /proc; its default elsewhere). */
export function ephemeralRange(): readonly [number, number] {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // not Linux
  }
  return DEFAULT_EPHEMERAL;
}

/** The vitest worker this process is (1 to maxWorkers), else a number of its own. */
function workerSlot(): number {
  const pool = Number(process.env["VITEST_POOL_ID"]);
  return Number.isInteger(pool) && pool > 0 ? pool : process.pid;
}

/** The ports worker `slot` hands out, inclusive; undefined when there is no room below the ephemeral range. */
export function portSlice(slot: number, ephemeral = ephemeralRange()): { first: number; last: number } | undefined {
  const size = Math.floor((ephemeral[0] - HANDED_OUT_FROM) / SLICES);
  if (size < MIN_SLICE) return undefined;
  const first = HANDED_OUT_FROM + (slot % SLICES) * size;
  return { first, last: first + size - 1 };
}

/** Ports this process has handed out (or found taken), never handed out again. */
const handedOut = new Set<number>();

/** Whether a server can listen on 127.0.0.1:`port` now (and none else on it). */
async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  const listening = await new Promise<boolean>((done) => {
    server.once("error", () => done(false));
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => done(true));
  });
  if (listening) await new Promise((done) => server.close(done));
  return listening;
}

/** A port the kernel picks (the fallback where there is no room below its ephemeral range). */
async function kernelPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done, fail) => server.once("error", fail).listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * A port nobody listens on, that no other caller in this process, no other vitest worker of this run, and no port the
 * kernel picks for anyone will be given: from this worker's slice, starting at `offset` into it (random by default, so
 * that two runs at once, each with its worker 1, do not walk the slice in step).
 */
export async function freePort(slot = workerSlot(), offset?: number): Promise<number> {
  const slice = portSlice(slot);
  if (slice === undefined) return kernelPort();
  const size = slice.last - slice.first + 1;
  const start = offset ?? randomInt(size);
  for (let step = 0; step < size; step++) {
    const port = slice.first + ((start + step) % size);
    if (handedOut.has(port)) continue;
    // Marked before the check awaits, so a call made meanwhile takes another.
    handedOut.add(port);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port left in ${slice.first}-${slice.last}`);
}
