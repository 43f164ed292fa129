// @ts-check
/**
 * Runs bench/target.mjs as a separate Node process (forked, with an IPC channel) and gives the runner
 * a handle on it: its port, its counters, and the arrival time of watched hits (timestamps taken in the
 * target process, epoch milliseconds with sub-millisecond precision).
 */
import { fork } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const TARGET = join(dirname(fileURLToPath(import.meta.url)), "target.mjs");

/**
 * @typedef {object} TargetStats
 * @property {number} hits counted hits since the last reset
 * @property {number} distinct distinct path+query strings hit
 * @property {[string, number][]} repeated path+query strings hit more than once, with their counts
 */

/**
 * @typedef {object} TargetHandle
 * @property {number} port
 * @property {number} pid
 * @property {(paths: string[]) => void} watch report hits on these paths over IPC
 * @property {(url: string, timeoutMs: number) => Promise<number>} waitHit resolves with the arrival time of the first hit of `url` (path+query)
 * @property {() => Promise<TargetStats>} stats
 * @property {() => Promise<void>} reset
 * @property {() => void} stop
 */

/**
 * @param {number} [startTimeoutMs]
 * @returns {Promise<TargetHandle>}
 */
export function forkTarget(startTimeoutMs = 10_000) {
  const child = fork(TARGET, ["0"], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  /** @type {Map<string, number>} url → arrival time of the first hit */
  const arrived = new Map();
  /** @type {Map<string, (t: number) => void>} */
  const waiters = new Map();

  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  process.on("exit", stop);

  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      stop();
      fail(new Error(`the target did not start within ${startTimeoutMs} ms`));
    }, startTimeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`the target exited (code ${code}, signal ${signal})`));
    });
    child.on("message", (/** @type {any} */ message) => {
      if (message?.type === "hit") {
        if (!arrived.has(message.url)) arrived.set(message.url, message.t);
        const waiter = waiters.get(message.url);
        if (waiter) {
          waiters.delete(message.url);
          waiter(message.t);
        }
        return;
      }
      if (message?.type !== "ready") return;
      clearTimeout(timer);
      const port = Number(message.port);
      const base = `http://127.0.0.1:${port}`;
      done({
        port,
        pid: /** @type {number} */ (child.pid),
        watch: (paths) => child.send({ type: "watch", paths }),
        waitHit(url, timeoutMs) {
          const t = arrived.get(url);
          if (t !== undefined) return Promise.resolve(t);
          return new Promise((ok, ko) => {
            const timeout = setTimeout(() => {
              waiters.delete(url);
              ko(new Error(`the target saw no ${url} within ${timeoutMs} ms`));
            }, timeoutMs);
            waiters.set(url, (at) => {
              clearTimeout(timeout);
              ok(at);
            });
          });
        },
        async stats() {
          const response = await fetch(`${base}/stats`, { signal: AbortSignal.timeout(5000) });
          return /** @type {TargetStats} */ (await response.json());
        },
        async reset() {
          const response = await fetch(`${base}/reset`, { method: "POST", signal: AbortSignal.timeout(5000) });
          await response.arrayBuffer();
          arrived.clear();
        },
        stop,
      });
    });
  });
}
