// @ts-check
/**
 * `wrangler dev` without the devtools inspector, for `npm run bench -- --no-inspector`.
 *
 * `wrangler dev` (the CLI) always connects a devtools inspector to the Worker and enables its Network
 * domain: every outbound `fetch` then raises four inspector events, each relayed through wrangler's
 * InspectorProxyWorker to its Node process over loopback HTTP and appended to wrangler's debug log file.
 * Measured on the three-step workload that is about two thirds of all CPU per workflow (see BENCHMARKS.md),
 * a cost no deployed Worker pays. The CLI has no switch for it; wrangler's own dev server API does
 * (`unstable_startWorker` with `dev.inspector: false`), with everything else the same: the same workerd,
 * local D1, Durable Objects, assets and proxy Worker.
 *
 * Usage (run from the project directory):
 *   node bench/dev-server.mjs --port <port> --ip <ip> --persist-to <dir> [--var NAME:value]...
 * Prints `ready <url>` on stderr once listening; stops on SIGTERM/SIGINT.
 */
import { parseArgs } from "node:util";
import { unstable_startWorker } from "wrangler";

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    ip: { type: "string", default: "127.0.0.1" },
    "persist-to": { type: "string" },
    var: { type: "string", multiple: true, default: [] },
  },
});
if (values.port === undefined || values["persist-to"] === undefined) {
  console.error("usage: node bench/dev-server.mjs --port <port> --persist-to <dir> [--ip <ip>] [--var NAME:value]...");
  process.exit(2);
}

/** @type {Record<string, { type: "plain_text", value: string }>} */
const bindings = {};
for (const pair of values.var ?? []) {
  const separator = pair.indexOf(":");
  if (separator <= 0) throw new Error(`--var expects NAME:value, got ${pair.slice(0, 40)}`);
  bindings[pair.slice(0, separator)] = { type: "plain_text", value: pair.slice(separator + 1) };
}

const worker = await unstable_startWorker({
  config: "wrangler.toml",
  bindings,
  dev: {
    server: { hostname: values.ip, port: Number(values.port) },
    inspector: false,
    persist: values["persist-to"],
    logLevel: "warn",
    watch: false,
  },
});
await worker.ready;
console.error(`ready ${String(await worker.url)}`);

let stopping = false;
for (const signal of /** @type {const} */ (["SIGTERM", "SIGINT", "SIGHUP"])) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    worker.dispose().finally(() => process.exit(0));
  });
}
