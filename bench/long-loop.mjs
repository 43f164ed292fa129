// @ts-check
/**
 * Whether long-lived executions stay flat: a DO_WHILE with `keepLastN: 2` run for many iterations through the pure
 * engine (`decide`) and the execution store's `save` into a SQL stub that counts what it would write, in this Node
 * process. At each checkpoint it prints the cost per transition, the bytes one save writes, the tasks the execution
 * holds, the size of the whole state and of its `GET /api/workflow/{id}` JSON: all should stay level as the iteration
 * count grows (only digits grow). Not part of `npm run bench`.
 *
 * Run alone: `node bench/long-loop.mjs [--keep=N|all] [--no-capture] [--condition=SCRIPT] [wait|inline|fork|poller]
 * [checkpoint...]` (default: every loop, `--keep=2`, the condition `true`, 10 1000 10000). `--keep=all` gives no
 * keepLastN, the DO_WHILE's default output (every iteration's outputs kept under its number); `--no-capture` gives
 * `captureOutput: false`. The CPU column is this
 * process's user and system time (the wall time counts whatever else the machine runs).
 * - wait: DO_WHILE{WAIT} completed from outside (an agent's event loop);
 * - inline: DO_WHILE{INLINE, SET_VARIABLE}, paced by the engine (its next iteration after ~1,000 moves waits for a tick);
 * - fork: DO_WHILE{FORK_JOIN of three WAITs, JOIN};
 * - poller: DO_WHILE{HTTP, WAIT 60 seconds} (a week of polling is 10,080 iterations).
 */
import { build } from "esbuild";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The pure engine, the execution store and the production script runner (QuickJS, loaded the Node way), bundled for Node. */
async function loadEngine() {
  const entry = `
    export { createExecution, decide } from "./src/engine/decider";
    export { validateWorkflowDef } from "./src/engine/definition/validate";
    export { toWorkflowView } from "./src/engine/view";
    export { DEFAULT_ENGINE_CONFIG } from "./src/engine/config";
    export { ExecutionStore } from "./src/actors/execution-store";
    import variant from "@jitl/quickjs-wasmfile-release-sync";
    import { newQuickJSWASMModuleFromVariant } from "quickjs-emscripten-core";
    import { quickJsScriptRunner } from "./src/actors/scripts/quickjs-runner";
    export const loadScripts = async () => quickJsScriptRunner(await newQuickJSWASMModuleFromVariant(variant));
  `;
  const result = await build({ stdin: { contents: entry, resolveDir: ROOT, loader: "ts" }, bundle: true, format: "esm", platform: "node", packages: "external", write: false, logLevel: "silent" });
  // Written under node_modules, not imported from a data: URL: the packages it leaves out (QuickJS's WebAssembly among
  // them) are resolved from there.
  const file = join(ROOT, "node_modules", ".cache", "bench-long-loop.mjs");
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, result.outputFiles[0]?.text ?? "");
  return import(pathToFileURL(file).href);
}

/** @param {string} ref */
const wait = (ref, inputParameters = {}) => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters });

/** The loop bodies, by scenario name. */
const BODIES = {
  wait: [wait("w")],
  inline: [
    { name: "calc", taskReferenceName: "calc", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "$.n + 1", n: "${workflow.variables.n}" } },
    { name: "setv", taskReferenceName: "setv", type: "SET_VARIABLE", inputParameters: { n: "${calc.output.result}" } },
  ],
  fork: [
    { name: "fk", taskReferenceName: "fk", type: "FORK_JOIN", inputParameters: {}, forkTasks: [[wait("f1")], [wait("f2")], [wait("f3")]] },
    { name: "jn", taskReferenceName: "jn", type: "JOIN", inputParameters: {}, joinOn: ["f1", "f2", "f3"] },
  ],
  poller: [
    { name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { http_request: { uri: "https://example.com/status", method: "GET" } } },
    wait("pause", { duration: "60 seconds" }),
  ],
};

/**
 * Runs scenario `name` up to each checkpoint, then measures the next iterations (up to 200).
 * @param {any} engine
 * @param {keyof typeof BODIES} name
 * @param {number[]} checkpoints
 * @param {Record<string, unknown>} loopInput the DO_WHILE's inputParameters
 * @param {string} loopCondition
 */
async function measure(engine, name, checkpoints, loopInput, loopCondition) {
  const definition = { name: `long_${name}`, version: 1, schemaVersion: 2, variables: { n: 0 }, tasks: [{ name: "loop", taskReferenceName: "loop", type: "DO_WHILE", inputParameters: loopInput, loopCondition, loopOver: BODIES[name] }] };
  const checked = engine.validateWorkflowDef(definition);
  if (!checked.ok) throw new Error(`the ${name} definition does not validate: ${JSON.stringify(checked.errors)}`);
  const scripts = await engine.loadScripts();
  let now = 1_000_000;
  let ids = 0;
  // No loop here runs a jq filter, but the decider asks each runner how much work it did.
  const jq = { run: () => { throw new Error("the long loops run no jq filter"); }, compileError: () => undefined };
  const env = () => ({ now, newId: () => `id-${++ids}`, config: engine.DEFAULT_ENGINE_CONFIG, scripts, jq, taskDefs: () => null });
  // The store's own code, writing into a sink that counts the text it is given (`toArray` answers one row so the store takes its tables as existing).
  let bytes = 0;
  const sink = { exec: (/** @type {string} */ _sql, /** @type {unknown[]} */ ...args) => { for (const arg of args) if (typeof arg === "string") bytes += arg.length; return { toArray: () => [{}], one: () => ({}) }; } };
  const store = new engine.ExecutionStore(sink);
  let state = engine.decide(engine.createExecution({ workflowId: "wf", definition: checked.value, input: {} }, now), { type: "start" }, env()).state;
  store.save(null, state);
  let transitions = 0;
  const iteration = () => state.tasks[0].iteration;
  // One transition: an HTTP call's answer, a timed WAIT's alarm, a WAIT completed from outside, or the pacing tick.
  const step = () => {
    now += 2;
    const open = state.tasks.filter((/** @type {any} */ task) => task.status === "IN_PROGRESS" || task.status === "SCHEDULED");
    const http = open.find((/** @type {any} */ task) => task.taskType === "HTTP");
    const waiting = open.filter((/** @type {any} */ task) => task.taskType === "WAIT");
    const timed = waiting.find((/** @type {any} */ task) => task.timeoutAt !== undefined);
    let event;
    if (http) event = { type: "dispatchResult", taskId: http.taskId, attempt: http.attempt, status: "COMPLETED", output: { response: { statusCode: 200, body: { now } } } };
    else if (timed) {
      now = Math.max(now, timed.timeoutAt);
      event = { type: "tick", liveTaskIds: new Set() };
    } else if (waiting.length > 0) event = { type: "externalUpdate", taskId: waiting[0].taskId, status: "COMPLETED", output: { now } };
    else event = { type: "tick", liveTaskIds: new Set() };
    const previous = state;
    state = engine.decide(previous, event, env()).state;
    store.save(previous, state);
    transitions++;
  };
  const rows = [];
  for (const checkpoint of checkpoints) {
    while (iteration() < checkpoint && state.status === "RUNNING") step();
    if (state.status !== "RUNNING") throw new Error(`${name} ended ${state.status} at iteration ${iteration()}: ${state.reasonForIncompletion}`);
    const [fromTransitions, fromBytes, fromIteration] = [transitions, bytes, iteration()];
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    while (iteration() < fromIteration + 200) step();
    const micros = (performance.now() - started) * 1000;
    const cpu = process.cpuUsage(cpuStarted);
    const cpuMicros = cpu.user + cpu.system;
    rows.push({
      iteration: fromIteration,
      microsPerTransition: micros / (transitions - fromTransitions),
      microsPerIteration: micros / (iteration() - fromIteration),
      cpuMicrosPerTransition: cpuMicros / (transitions - fromTransitions),
      bytesPerSave: Math.round((bytes - fromBytes) / (transitions - fromTransitions)),
      tasks: state.tasks.length,
      stateBytes: JSON.stringify(state).length,
      viewBytes: JSON.stringify(engine.toWorkflowView(state, true)).length,
    });
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const options = process.argv.slice(2).filter((arg) => arg.startsWith("--"));
  const [first, ...rest] = process.argv.slice(2).filter((arg) => !arg.startsWith("--"));
  const keep = options.find((option) => option.startsWith("--keep="))?.slice("--keep=".length) ?? "2";
  /** @type {Record<string, unknown>} */
  const loopInput = keep === "all" ? {} : { keepLastN: Number(keep) };
  if (options.includes("--no-capture")) loopInput["captureOutput"] = false;
  const loopCondition = options.find((option) => option.startsWith("--condition="))?.slice("--condition=".length) ?? "true";
  const names = first !== undefined && first in BODIES ? [/** @type {keyof typeof BODIES} */ (first)] : /** @type {(keyof typeof BODIES)[]} */ (Object.keys(BODIES));
  const marks = (first !== undefined && first in BODIES ? rest : [first, ...rest].filter((arg) => arg !== undefined)).map(Number);
  const engine = await loadEngine();
  console.log(`DO_WHILE inputParameters ${JSON.stringify(loopInput)}, loopCondition ${JSON.stringify(loopCondition)}`);
  console.log("| loop | iteration | µs per transition | CPU µs per transition | µs per iteration | bytes per save | tasks held | state bytes | GET JSON bytes |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const name of names) {
    for (const row of await measure(engine, name, marks.length > 0 ? marks : [10, 1_000, 10_000], loopInput, loopCondition)) {
      console.log(`| ${name} | ${row.iteration} | ${row.microsPerTransition.toFixed(0)} | ${row.cpuMicrosPerTransition.toFixed(0)} | ${row.microsPerIteration.toFixed(0)} | ${row.bytesPerSave} | ${row.tasks} | ${row.stateBytes} | ${row.viewBytes} |`);
    }
  }
}
