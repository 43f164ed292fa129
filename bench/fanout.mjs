// npm run bench:fanout: what a wide FORK_JOIN_DYNAMIC costs end to end, against the dev server as `npm start` runs it.
// For N = 250, 500 and 1,000 (FANOUT_SIZES=250,1000 to choose): a fork of N SIMPLE tasks that one worker drains, polling
// batches of 100 and completing each task one after another (`POST /api/tasks`); then a fork of N HTTP tasks against a
// local target that answers at once. Prints the start, the polls, the completions (in tenths, as the fork drains) and
// the wait for the end; not the standard workload, and one run of each (a few minutes in all).
import { createServer } from "node:http";
import { exitOnSignals, startEngine } from "./engine.mjs";
import { createClient, expectOk } from "./http.mjs";

const SIZES = (process.env.FANOUT_SIZES ?? "250,500,1000").split(",").map(Number);
if (!SIZES.every((n) => Number.isInteger(n) && n > 0 && n <= 10_000)) throw new Error(`FANOUT_SIZES: whole numbers from 1 to 10000, not ${process.env.FANOUT_SIZES}`);
/** How long a fork may take to end once drained (or an HTTP fork from its start): a stuck run stops, it does not hang. */
const END_WAIT_MS = 300_000;
// Ctrl-C (or a kill) goes through process.exit, whose "exit" listener stops the dev server's process group.
exitOnSignals();
const target = createServer((_request, response) => {
  response.setHeader("content-type", "application/json");
  response.end('{"ok":true}');
});
await new Promise((listening) => target.listen(0, "127.0.0.1", listening));
const uri = `http://127.0.0.1:${target.address().port}/x`;
const ms = (value) => value.toFixed(0);

// The target alone would keep a failed start's process alive.
const engine = await startEngine().catch((error) => {
  target.close();
  throw error;
});
const client = createClient(engine.url, { "x-api-key": engine.key }, { defaultTimeoutMs: 120_000 });
/** @param {string} method @param {string} path @param {unknown} [body] */
const call = async (method, path, body) => expectOk(await client.call(method, path, body), `${method} ${path}`);

/** Polls the workflow until it has ended, for at most {@link END_WAIT_MS}; returns its status and how long the wait took. */
async function ended(workflowId) {
  const start = performance.now();
  while (performance.now() - start < END_WAIT_MS) {
    const { json } = await call("GET", `/api/workflow/${workflowId}?includeTasks=false`);
    if (json.status !== "RUNNING") return { status: json.status, waited: performance.now() - start };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${workflowId} still RUNNING after ${END_WAIT_MS / 1000} s`);
}

/** Registers `name`: a FORK_JOIN_DYNAMIC of the tasks its input's `dynamicTasks` lists, and its JOIN. */
async function register(name) {
  await call("POST", "/api/metadata/workflow?overwrite=true", {
    name,
    version: 1,
    schemaVersion: 2,
    tasks: [
      { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { dynamicTasks: "${workflow.input.dynamicTasks}" }, dynamicForkJoinTasksParam: "dynamicTasks" },
      { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN" },
    ],
  });
}

async function simpleFork(n) {
  const dynamicTasks = Array.from({ length: n }, (_, i) => ({ taskName: "fan_worker", referenceName: `w_${i}`, type: "SIMPLE", input: { i } }));
  let t = performance.now();
  const workflowId = (await call("POST", "/api/workflow/fan_simple", { dynamicTasks: { dynamicTasks } })).text;
  const start = performance.now() - t;
  let polls = 0;
  let pollTime = 0;
  let done = 0;
  const tenth = Math.ceil(n / 10);
  const tenths = [];
  let tenthTime = 0;
  while (done < n) {
    t = performance.now();
    const batch = (await call("GET", "/api/tasks/poll/batch/fan_worker?workerid=bench&count=100&timeout=1000")).json;
    pollTime += performance.now() - t;
    if (++polls > 4 * n) throw new Error(`the fork of ${n} did not drain (${done} done)`);
    for (const task of batch) {
      t = performance.now();
      await call("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, status: "COMPLETED", outputData: { i: task.inputData.i } });
      tenthTime += performance.now() - t;
      if (++done % tenth === 0) {
        tenths.push(tenthTime / tenth);
        tenthTime = 0;
      }
    }
  }
  const end = await ended(workflowId);
  if (end.status !== "COMPLETED") throw new Error(`fan_simple ${workflowId} ended ${end.status}`);
  const completions = tenths.reduce((sum, each) => sum + each * tenth, 0);
  console.log(
    `SIMPLE x${n}: start ${ms(start)} ms; ${polls} polls ${ms(pollTime)} ms (${(pollTime / n).toFixed(2)} ms a task); ` +
      `completions ${ms(completions)} ms (${(completions / n).toFixed(2)} ms each; by tenths ${tenths.map((each) => each.toFixed(1)).join(" ")}); end ${ms(end.waited)} ms`,
  );
}

async function httpFork(n) {
  const dynamicTasks = Array.from({ length: n }, (_, i) => ({ taskName: "call", referenceName: `c_${i}`, type: "HTTP", input: { http_request: { uri: `${uri}?i=${i}`, method: "GET" } } }));
  const t = performance.now();
  const workflowId = (await call("POST", "/api/workflow/fan_http", { dynamicTasks: { dynamicTasks } })).text;
  const start = performance.now() - t;
  const end = await ended(workflowId);
  if (end.status !== "COMPLETED") throw new Error(`fan_http ${workflowId} ended ${end.status}`);
  console.log(`HTTP x${n}: start ${ms(start)} ms; start to COMPLETED ${ms(performance.now() - t)} ms`);
}

try {
  await register("fan_simple");
  await register("fan_http");
  for (const n of SIZES) await simpleFork(n);
  for (const n of SIZES) await httpFork(n);
} finally {
  client.close();
  await engine.stop();
  target.close();
}
