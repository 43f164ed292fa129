#!/usr/bin/env node
// @ts-check
/**
 * The benchmark's target server (docs: /work/shared/docs/benchmarks.md, "Target").
 *
 *   GET  /stats   → {"hits": n, "distinct": d, "repeated": [[url, count], ...]}   (not a hit)
 *   GET  /seen?key=<path?query> → {"key", "count", "t"}                            (not a hit)
 *   POST /reset   → {"ok": true}   (zeroes every counter)
 *   GET  /*       → {"ok": true, "path": "/step1", "n": <hit counter after this hit>}
 *
 * Listens on 127.0.0.1 on a free port. Run standalone (`node bench/target.mjs [port]`, prints
 * `TARGET_PORT=<port>`) or forked with an IPC channel: it then sends `{type: "ready", port}` to the
 * parent and, for hits whose path the parent asked to watch (`{type: "watch", paths: ["/ready"]}`),
 * `{type: "hit", url, path, t}` where `t = performance.timeOrigin + performance.now()` (epoch ms,
 * sub-millisecond) taken when the request arrived.
 */
import { createServer } from "node:http";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * @typedef {object} TargetHit
 * @property {string} url path and query, as requested
 * @property {string} path path only
 * @property {number} t epoch milliseconds (fractional) when the request arrived
 */

/**
 * @typedef {object} TargetOptions
 * @property {(hit: TargetHit) => void} [onHit] called for every counted hit whose path is watched
 * @property {Set<string>} [watch] paths passed to onHit (all when undefined)
 */

/**
 * Creates the target server (not listening yet).
 * @param {TargetOptions} [options]
 */
export function createTarget(options = {}) {
  let hits = 0;
  /** @type {Map<string, {count: number, t: number}>} per path+query: hit count and time of the first hit */
  let seen = new Map();
  const watch = options.watch;

  /**
   * @param {import("node:http").ServerResponse} res
   * @param {number} status
   * @param {unknown} body
   */
  function send(res, status, body) {
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  }

  const server = createServer((req, res) => {
    const t = performance.timeOrigin + performance.now();
    const url = req.url ?? "/";
    const queryAt = url.indexOf("?");
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    // Drain any body before answering so keep-alive connections stay usable.
    req.resume();
    req.on("end", () => {
      if (req.method === "POST" && path === "/reset") {
        hits = 0;
        seen = new Map();
        return send(res, 200, { ok: true });
      }
      if (req.method !== "GET") return send(res, 405, { ok: false, error: "method not allowed" });
      if (path === "/stats") {
        const repeated = [...seen].filter(([, s]) => s.count > 1).map(([key, s]) => [key, s.count]);
        return send(res, 200, { hits, distinct: seen.size, repeated });
      }
      if (path === "/seen") {
        const key = new URL(url, "http://target").searchParams.get("key") ?? "";
        const entry = seen.get(key);
        return send(res, 200, { key, count: entry?.count ?? 0, t: entry?.t ?? null });
      }
      hits += 1;
      const entry = seen.get(url);
      if (entry) entry.count += 1;
      else seen.set(url, { count: 1, t });
      if (options.onHit && (!watch || watch.has(path))) options.onHit({ url, path, t });
      send(res, 200, { ok: true, path, n: hits });
    });
  });
  server.keepAliveTimeout = 60_000;
  return server;
}

/**
 * Starts the target on 127.0.0.1.
 * @param {number} [port] 0 (default) picks a free port
 * @param {TargetOptions} [options]
 * @returns {Promise<{ server: import("node:http").Server, port: number }>}
 */
export function listenTarget(port = 0, options = {}) {
  const server = createTarget(options);
  return new Promise((done, fail) => {
    server.once("error", fail);
    server.listen({ port, host: "127.0.0.1" }, () => {
      const address = server.address();
      if (address === null || typeof address === "string") return fail(new Error("target: no TCP address"));
      done({ server, port: address.port });
    });
  });
}

async function main() {
  const port = Number(process.argv[2] ?? 0);
  /** @type {Set<string>} */
  const watch = new Set();
  const send = process.send?.bind(process);
  const { port: actual } = await listenTarget(port, {
    watch,
    onHit: send ? (hit) => send({ type: "hit", ...hit }) : undefined,
  });
  if (send) {
    process.on("message", (/** @type {any} */ message) => {
      if (message?.type === "watch" && Array.isArray(message.paths)) {
        watch.clear();
        for (const p of message.paths) watch.add(String(p));
      }
    });
    // The parent going away ends this process too.
    process.on("disconnect", () => process.exit(0));
    send({ type: "ready", port: actual });
  }
  console.log(`TARGET_PORT=${actual}`);
  for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.on(signal, () => process.exit(0));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`[target] ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
