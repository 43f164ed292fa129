// @ts-check
/**
 * A small JSON client for the engine's API over keep-alive HTTP/1.1 (node:http), every request bounded
 * by a timeout (AbortSignal.timeout). Only 127.0.0.1 URLs are accepted.
 */
import { Agent, request } from "node:http";

/**
 * @typedef {object} Reply
 * @property {number} status
 * @property {string} contentType
 * @property {string} text raw body
 * @property {any} json parsed body, or undefined when it is not JSON
 */

/**
 * @typedef {object} Client
 * @property {(method: string, path: string, body?: unknown, timeoutMs?: number) => Promise<Reply>} call
 * @property {() => void} close
 */

/**
 * @param {string} baseUrl e.g. http://127.0.0.1:8787
 * @param {Record<string, string>} [headers] sent on every request (e.g. X-API-Key)
 * @param {{ maxSockets?: number, defaultTimeoutMs?: number }} [options]
 * @returns {Client}
 */
export function createClient(baseUrl, headers = {}, options = {}) {
  const base = new URL(baseUrl);
  if (base.hostname !== "127.0.0.1") throw new Error(`the benchmark only talks to 127.0.0.1, not ${base.hostname}`);
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 64 });
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 10_000;

  /** @type {Client["call"]} */
  function call(method, path, body, timeoutMs = defaultTimeoutMs) {
    const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    /** @type {Record<string, string | number>} */
    const h = { ...headers, accept: "application/json, text/plain" };
    if (payload !== undefined) {
      h["content-type"] = "application/json";
      h["content-length"] = Buffer.byteLength(payload);
    }
    return new Promise((done, fail) => {
      const req = request(
        { host: base.hostname, port: base.port, method, path, headers: h, agent, signal: AbortSignal.timeout(timeoutMs) },
        (res) => {
          /** @type {Buffer[]} */
          const chunks = [];
          res.on("data", (chunk) => chunks.push(chunk));
          res.on("error", fail);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let json;
            try {
              json = text === "" ? undefined : JSON.parse(text);
            } catch {
              json = undefined;
            }
            done({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), text, json });
          });
        },
      );
      req.on("error", (error) => {
        fail(error.name === "AbortError" ? new Error(`${method} ${path}: no answer within ${timeoutMs} ms`) : error);
      });
      req.end(payload);
    });
  }

  return { call, close: () => agent.destroy() };
}

/**
 * Throws unless the reply has a 2xx status.
 * @param {Reply} reply
 * @param {string} what
 * @returns {Reply}
 */
export function expectOk(reply, what) {
  if (reply.status < 200 || reply.status > 299) throw new Error(`${what}: HTTP ${reply.status} ${reply.text.slice(0, 500)}`);
  return reply;
}
