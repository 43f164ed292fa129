import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { gzipSync } from "node:zlib";

/**
 * A real HTTP server on 127.0.0.1 that workflows call in tests, so HTTP tasks are exercised over
 * the network instead of through a mocked fetch. Routes:
 *  - `ANY /echo…`           → 200 JSON of {method, path, query, headers, body}
 *  - `ANY /status/<code>[?say=…]` → that status with JSON body {code} (or that text)
 *  - `GET /slow?ms=N`       → 200 after N ms
 *  - `GET /hang`            → never answers (until the server closes)
 *  - `GET /text[?body=…&type=…]` → "plain words", or that body, as text/plain (or that content type)
 *  - `GET /binary`          → 4 bytes of image/png
 *  - `GET /invalid-json`    → application/json that does not parse
 *  - `GET /huge?bytes=N`    → N bytes of text
 *  - `GET /deep-json?depth=N` → application/json of N nested arrays (`[[…]]`)
 *  - `ANY /count/<key>…`    → 200 {key, n}; n counts hits per key (`?delay=N` answers after N ms)
 *  - `ANY /flaky/<key>?fail=N` → 503 for the first N hits of that key, then 200 {key, n}
 *  - `GET /hits/<key>`      → {hits} for that key (not counted)
 *  - `ANY /meet/<key>?parties=N` → holds each request until N requests of that key have arrived, then answers them all
 *    200 {key, met: true}; one left waiting 5 s answers {key, met: false}. Proves calls ran side by side.
 *  - `ANY /hold/<key>`      → holds the request (counted as a hit) until `/release/<key>`, then 200 {key, released: true};
 *    one held 30 s answers {key, released: false}
 *  - `ANY /release/<key>`   → answers every request held under that key; 200 {key, released: <how many>}
 *  - `GET /jwks.json[?pad=N][&decoy=N][&hit=<key>][&garbage=1]` → the JSON Web Key Set given (a local OAuth issuer's
 *    public keys), with a member of N characters added, and with `decoy=N` N other RS256 keys (not the issuer's) listed
 *    first; `hit` counts the fetch under that key; `garbage=1` answers 200 `{keys: [1, "two"]}` instead
 *  - `ANY /redirect?to=<url>&status=302` → a redirect there (to itself without `to`)
 *  - `GET /headers?<name>=<value>…` → 200 with each query parameter as a response header
 *  - `ANY /respond?status=N&h=<name>:<value>…&body=…|b64=…[&gzip=1][&cut=1][&stall=1]` → that status (200 by default),
 *    each `h` a response header line (a name given twice is sent as two lines), and that body (text, or base64 bytes):
 *    gzipped with `gzip=1`; with `cut=1` half of it sent under a Content-Length of the whole and the connection then
 *    destroyed; with `stall=1` the headers and half of it sent, the rest never (until the server closes)
 *  - `ANY /readme/echo…`    → 200 {method, url, body} as the README's worked example's echo server answers: `url` the
 *    path and query after `/readme/echo`, `body` the JSON received (null when none)
 *  - `GET /readme/health`   → 200 {"status": "ok"}, as the service's own `GET /health` (the worked example's first call)
 */
/** The request's headers by lower-case name; Node's `req.headers` leaves out one named `__proto__`. */
function echoedHeaders(req: IncomingMessage): Record<string, string | string[] | undefined> {
  const headers: Record<string, string | string[] | undefined> = { ...req.headers };
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    if (!Object.hasOwn(headers, name)) Object.defineProperty(headers, name, { value: req.rawHeaders[i + 1], enumerable: true, writable: true, configurable: true });
  }
  return headers;
}

export function createTargetServer(options: { jwks?: { keys: unknown[] }; decoyJwk?: unknown } = {}): Server {
  /** Requests held by `/hold/<key>`, by key: each answers once `/release/<key>` comes. */
  const holds = new Map<string, Array<() => void>>();
  const hits = new Map<string, number>();
  const hangs = new Set<ServerResponse>();
  const meetings = new Map<string, Array<() => void>>();
  const count = (key: string) => {
    const n = (hits.get(key) ?? 0) + 1;
    hits.set(key, n);
    return n;
  };
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const segments = url.pathname.split("/").filter(Boolean);
      const body = Buffer.concat(chunks).toString("utf8");
      switch (segments[0]) {
        case "echo":
          return json(res, 200, { method: req.method, path: url.pathname, rawQuery: url.search, query: Object.fromEntries(url.searchParams), headers: echoedHeaders(req), body });
        case "status":
          if (url.searchParams.has("say")) {
            res.writeHead(Number(segments[1]), { "content-type": "text/plain" });
            return void res.end(url.searchParams.get("say"));
          }
          return json(res, Number(segments[1]), { code: Number(segments[1]) });
        case "slow":
          return void setTimeout(() => json(res, 200, { slept: Number(url.searchParams.get("ms")) }), Number(url.searchParams.get("ms") ?? 0));
        case "hang":
          hangs.add(res);
          return;
        case "text":
          res.writeHead(200, { "content-type": url.searchParams.get("type") ?? "text/plain" });
          return void res.end(url.searchParams.get("body") ?? "plain words");
        case "binary":
          res.writeHead(200, { "content-type": "image/png" });
          return void res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
        case "invalid-json":
          res.writeHead(200, { "content-type": "application/json" });
          return void res.end("{not json");
        case "huge":
          res.writeHead(200, { "content-type": "text/plain" });
          return void res.end("x".repeat(Number(url.searchParams.get("bytes") ?? 0)));
        case "deep-json": {
          const depth = Number(url.searchParams.get("depth") ?? 0);
          res.writeHead(200, { "content-type": "application/json" });
          return void res.end("[".repeat(depth) + "]".repeat(depth));
        }
        case "count": {
          const key = segments[1] ?? "";
          const n = count(key);
          const answer = () => json(res, 200, { key, n, query: Object.fromEntries(url.searchParams), body });
          const delay = Number(url.searchParams.get("delay") ?? 0);
          return delay > 0 ? void setTimeout(answer, delay) : answer();
        }
        case "flaky": {
          const key = segments[1] ?? "";
          const n = count(key);
          return n <= Number(url.searchParams.get("fail") ?? 0) ? json(res, 503, { key, n }) : json(res, 200, { key, n });
        }
        case "redirect": {
          // /redirect?to=<url>&status=302: a redirect to anywhere, for the egress tests; without `to`, to itself.
          res.writeHead(Number(url.searchParams.get("status") ?? 302), { location: url.searchParams.get("to") ?? req.url ?? "/" });
          return void res.end();
        }
        case "headers":
          for (const [name, value] of url.searchParams) res.setHeader(name, value);
          return json(res, 200, {});
        case "respond": {
          const b64 = url.searchParams.get("b64");
          let bytes = b64 !== null ? Buffer.from(b64, "base64") : Buffer.from(url.searchParams.get("body") ?? "", "utf8");
          const lines: string[] = [];
          for (const line of url.searchParams.getAll("h")) {
            const colon = line.indexOf(":");
            lines.push(line.slice(0, colon), line.slice(colon + 1).trim());
          }
          if (url.searchParams.get("gzip") === "1") {
            bytes = gzipSync(bytes);
            lines.push("content-encoding", "gzip");
          }
          const cut = url.searchParams.get("cut") === "1";
          const stall = url.searchParams.get("stall") === "1";
          if (cut || stall) lines.push("content-length", String(bytes.length));
          res.writeHead(Number(url.searchParams.get("status") ?? 200), lines);
          if (!cut && !stall) return void res.end(bytes);
          res.write(bytes.subarray(0, Math.floor(bytes.length / 2)));
          if (stall) return void hangs.add(res);
          return void setTimeout(() => res.destroy(), 50);
        }
        case "readme":
          if (segments[1] === "health") return json(res, 200, { status: "ok" });
          try {
            return json(res, 200, { method: req.method, url: (req.url ?? "").slice("/readme/echo".length) || "/", body: body ? (JSON.parse(body) as unknown) : null });
          } catch {
            return json(res, 400, { error: "the README's echo server takes JSON bodies only" });
          }
        case "jwks.json": {
          // ?pad=N adds a member of N characters (a JWKS may carry members beyond `keys`): a key set of any size.
          const pad = Number(url.searchParams.get("pad") ?? 0);
          // ?hit=<key> counts the fetch under that key (read with /hits/<key>).
          const hit = url.searchParams.get("hit");
          if (hit) count(hit);
          // ?garbage=1: a 200 whose `keys` is an array of no keys at all (a broken issuer's answer).
          if (url.searchParams.get("garbage") === "1") return json(res, 200, { keys: [1, "two"] });
          // ?decoy=N puts N other keys of the same type first (a set during a rotation), for tokens without a kid.
          const decoys = options.decoyJwk ? Number(url.searchParams.get("decoy") ?? 0) : 0;
          const decoy = Array.from({ length: decoys }, (_, i) => (i === 0 ? options.decoyJwk : { ...(options.decoyJwk as object), kid: `decoy-key-${i + 1}` }));
          const jwks = options.jwks ? { ...options.jwks, keys: [...decoy, ...options.jwks.keys], ...(pad > 0 ? { pad: "x".repeat(pad) } : {}) } : undefined;
          return json(res, jwks ? 200 : 404, jwks ?? { error: "no JWKS" });
        }
        case "meet": {
          const key = segments[1] ?? "";
          count(key);
          const waiting = meetings.get(key) ?? [];
          meetings.set(key, waiting);
          const timer = setTimeout(() => {
            meetings.set(key, (meetings.get(key) ?? []).filter((release) => release !== met));
            json(res, 200, { key, met: false });
          }, 5_000);
          const met = () => {
            clearTimeout(timer);
            json(res, 200, { key, met: true });
          };
          waiting.push(met);
          if (waiting.length < Number(url.searchParams.get("parties") ?? 2)) return;
          meetings.delete(key);
          for (const release of waiting) release();
          return;
        }
        case "hold": {
          const key = segments[1] ?? "";
          count(key);
          const timer = setTimeout(() => {
            holds.set(key, (holds.get(key) ?? []).filter((release) => release !== answer));
            json(res, 200, { key, released: false });
          }, 30_000);
          const answer = () => {
            clearTimeout(timer);
            json(res, 200, { key, released: true });
          };
          holds.set(key, [...(holds.get(key) ?? []), answer]);
          return;
        }
        case "release": {
          const key = segments[1] ?? "";
          const held = holds.get(key) ?? [];
          holds.delete(key);
          for (const answer of held) answer();
          return json(res, 200, { key, released: held.length });
        }
        case "hits":
          return json(res, 200, { hits: hits.get(segments[1] ?? "") ?? 0 });
        default:
          return json(res, 404, { error: "no such route" });
      }
    });
  });
  server.on("close", () => {
    for (const res of hangs) res.destroy();
  });
  return server;
}
