// @ts-check
/**
 * The engine's own cost per task transition, without any runtime: `decide` plus the execution store's
 * `save` of each decision (the workflow header and every changed task as JSON) into a SQL stub that
 * discards the statements, on
 * the benchmark's three-step workflow, in this Node process. The HTTP responses are made up (the
 * target's JSON), so nothing here waits on I/O.
 *
 * Run by `npm run bench` (a row of its table) or alone: `node bench/transitions.mjs [workflows]`.
 */
import { build } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { threeStepDef } from "./workload.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Bundles the pure engine (src/engine has no Cloudflare imports) and the execution store (which only
 * needs a `SqlStorage`-shaped object) into a module Node can import.
 */
async function loadEngine() {
  const entry = `
    export { createExecution, decide } from "./src/engine/decider";
    export { validateWorkflowDef } from "./src/engine/definition/validate";
    export { httpOutcome } from "./src/engine/tasks/http/response";
    export { toWorkflowView } from "./src/engine/view";
    export { DEFAULT_ENGINE_CONFIG } from "./src/engine/config";
    export { ExecutionStore } from "./src/actors/execution-store";
  `;
  const result = await build({
    stdin: { contents: entry, resolveDir: ROOT, loader: "ts" },
    bundle: true,
    format: "esm",
    platform: "neutral",
    write: false,
    logLevel: "silent",
  });
  const code = result.outputFiles[0]?.text ?? "";
  return import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
}

/**
 * Runs `workflows` three-step workflows through the engine; answers microseconds per transition.
 * @param {number} workflows
 * @returns {Promise<{ transitions: number, microsPerTransition: number, microsPerWorkflow: number }>}
 */
export async function measureTransitions(workflows = 5000) {
  const engine = await loadEngine();
  const checked = engine.validateWorkflowDef(threeStepDef(9));
  if (!checked.ok) throw new Error(`the benchmark definition does not validate: ${JSON.stringify(checked.errors)}`);
  const definition = checked.value;
  // The three steps run no script or jq filter, but the decider asks its runners how much work they did.
  const refuse = () => {
    throw new Error("the benchmark's workflow runs no script");
  };
  const scripts = { run: refuse, syntaxError: () => undefined };
  const jq = { run: refuse, compileError: () => undefined };
  const env = () => ({ now: Date.now(), newId: () => crypto.randomUUID(), config: engine.DEFAULT_ENGINE_CONFIG, scripts, jq, taskDefs: () => null });
  let transitions = 0;
  let hits = 0;
  // The store's own code, writing into a sink: its JSON and statement arguments are built, SQLite is not run.
  // (`toArray` answers one row so the store takes its tables as existing.)
  const sink = { exec: () => ({ toArray: () => [{}], one: () => ({}) }) };
  const store = new engine.ExecutionStore(sink);
  const serialise = (/** @type {any} */ previous, /** @type {any} */ next) => store.save(previous, next);
  const runOne = () => {
    const created = engine.createExecution({ workflowId: crypto.randomUUID(), definition, input: {}, baseUrl: "http://127.0.0.1" }, Date.now());
    let decision = engine.decide(created, { type: "start" }, env());
    serialise(null, decision.state);
    transitions++;
    for (let guard = 0; guard < 10 && decision.state.status === "RUNNING"; guard++) {
      const dispatch = decision.effects.find((/** @type {any} */ effect) => effect.kind === "dispatch");
      if (!dispatch) throw new Error(`no dispatch in a running execution: ${JSON.stringify(decision.effects)}`);
      const body = new TextEncoder().encode(JSON.stringify({ ok: true, path: "/step", n: ++hits }));
      const outcome = engine.httpOutcome({ statusCode: 200, statusText: "OK", headers: [["content-type", "application/json"]], body }, false);
      const previous = decision.state;
      decision = engine.decide(previous, { type: "dispatchResult", taskId: dispatch.taskId, attempt: dispatch.attempt, ...outcome }, env());
      serialise(previous, decision.state);
      transitions++;
    }
    if (decision.state.status !== "COMPLETED") throw new Error(`the workflow ended ${decision.state.status}`);
    // The execute endpoint's answer.
    JSON.stringify(engine.toWorkflowView(decision.state, true));
  };
  for (let i = 0; i < Math.min(500, workflows); i++) runOne(); // warm-up: let V8 optimise
  transitions = 0;
  const started = performance.now();
  for (let i = 0; i < workflows; i++) runOne();
  const elapsedMs = performance.now() - started;
  return { transitions, microsPerTransition: (elapsedMs * 1000) / transitions, microsPerWorkflow: (elapsedMs * 1000) / workflows };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const workflows = Number(process.argv[2] ?? 5000);
  const result = await measureTransitions(workflows);
  console.log(`${result.transitions} transitions: ${result.microsPerTransition.toFixed(1)} µs per transition, ${result.microsPerWorkflow.toFixed(1)} µs per three-step workflow`);
}
