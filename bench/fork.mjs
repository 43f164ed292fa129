// npm run bench:fork: what a FORK_JOIN buys. Not the standard workload: three GETs to a target that answers after
// 20 ms, run one after another and then as the three branches of a FORK_JOIN, each executed 100 times at concurrency 1
// (after 5 warm-ups, two rounds each) against the dev server as `npm start` runs it (no inspector). Prints p50 / p99 per round.
import { createServer } from "node:http";
import { startEngine } from "./engine.mjs";
import { createClient } from "./http.mjs";

const TARGET_DELAY_MS = 20;
const RUNS = 100;
const WARMUP = 5;

const target = createServer((_request, response) =>
  setTimeout(() => {
    response.setHeader("content-type", "application/json");
    response.end('{"ok":true}');
  }, TARGET_DELAY_MS),
);
await new Promise((listening) => target.listen(0, "127.0.0.1", listening));
const uri = `http://127.0.0.1:${target.address().port}/x`;
const httpTask = (ref) => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { uri, method: "GET" } });
const engine = await startEngine();
try {
  const client = createClient(engine.url, { "x-api-key": engine.key });
  await client.call("POST", "/api/metadata/workflow?overwrite=true", { name: "seq3", version: 1, schemaVersion: 2, tasks: [httpTask("a"), httpTask("b"), httpTask("c")] });
  await client.call("POST", "/api/metadata/workflow?overwrite=true", {
    name: "fork3",
    version: 1,
    schemaVersion: 2,
    tasks: [
      { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[httpTask("a")], [httpTask("b")], [httpTask("c")]] },
      { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["a", "b", "c"] },
    ],
  });
  for (const name of ["seq3", "fork3", "seq3", "fork3"]) {
    const run = async () => {
      const answer = await client.call("POST", `/api/workflow/execute/${name}/1?waitForSeconds=30`, {});
      if (!String(answer.text).includes("COMPLETED")) throw new Error(`${name} did not complete: ${String(answer.text).slice(0, 300)}`);
    };
    for (let i = 0; i < WARMUP; i++) await run();
    const times = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      await run();
      times.push(performance.now() - start);
    }
    times.sort((x, y) => x - y);
    console.log(`${name}: p50 ${times[Math.floor(RUNS / 2)].toFixed(1)} ms, p99 ${times[Math.ceil(RUNS * 0.99) - 1].toFixed(1)} ms`);
  }
} finally {
  await engine.stop();
  target.close();
}
