/**
 * DO_WHILE (Conductor's loop): runs the tasks of its `loopOver` one after another, then decides whether to run them
 * again. WHILE (Conductor OSS's) is the same loop, run by the same code, asking its condition before the first
 * iteration too (see {@link whileTask}). The decider schedules those tasks (see `plan.ts`: the last of them is
 * followed by the DO_WHILE again); this module holds what the DO_WHILE itself computes: its start, and at the end of
 * each iteration its output and whether the loop goes on.
 *
 * As in Conductor, the DO_WHILE is IN_PROGRESS while its loop runs, its output holds `iteration` (the current one;
 * the last, once it ended) and, under each iteration's number, the output of each of its tasks that ran in it, by
 * reference name. With `inputParameters.items` (a list) it runs once per item, the item and its index in its output
 * as `loopItem` and `loopIndex`; `inputParameters.keepLastN` keeps only the latest iterations' tasks and outputs.
 */
import type { DecideEnv } from "../../config";
import { describeValue } from "../../definition/checks";
import { MAX_TASK_REASON_LENGTH } from "../../limits";
import type { JsonObject, JsonValue, TaskExecution, WorkflowTaskDef } from "../../model";
import { setOwn } from "../../own-property";
import { evaluateWith, keysReadOff, listedNames, unboundScriptNames, type ScriptRunner } from "../../scripts";
import type { TaskTypeModule } from "../task-type";

/**
 * The list `inputParameters.items` resolved to, undefined when it is absent (or null), or why it cannot be iterated.
 * `named`: the definition gives items, so that even a null (an expression reading nothing) is no list to iterate over.
 */
function itemsOf(input: JsonObject, named = false): JsonValue[] | undefined | Error {
  const items = input["items"];
  if (!named && (items === undefined || items === null)) return undefined;
  return Array.isArray(items) ? items : new Error(`inputParameters.items must resolve to a list to iterate over, but is ${describeValue(items ?? null)}`);
}

/** True when the DO_WHILE's definition gives `inputParameters.items` (null counts as absent, as at registration). */
function namesItems(definition: WorkflowTaskDef): boolean {
  const items = definition.inputParameters?.["items"];
  return items !== undefined && items !== null;
}

/** How many of the latest iterations `inputParameters.keepLastN` keeps, undefined for all, or why it cannot be read. */
function keepLastNOf(input: JsonObject): number | undefined | Error {
  const keep = input["keepLastN"];
  if (keep === undefined || keep === null) return undefined;
  return Number.isInteger(keep) && (keep as number) >= 1 ? (keep as number) : new Error(`inputParameters.keepLastN must resolve to a whole number of at least 1, but is ${describeValue(keep)}`);
}

/**
 * The DO_WHILE's output as iteration `iteration` (1-based) starts: its number and, iterating over items, its item, as
 * Conductor OSS names it (`loopItem`, `loopIndex`) and as Orkes does (`item`). Set on `output`, a copy of the callers'
 * own: copied again, a loop keeping every iteration's outputs copied all of them twice at each iteration's end.
 */
function startingIteration(output: JsonObject, iteration: number, items: readonly JsonValue[] | undefined): JsonObject {
  output["iteration"] = iteration;
  if (items !== undefined) {
    const item = items[iteration - 1] ?? null;
    output["loopIndex"] = iteration - 1;
    output["loopItem"] = item;
    output["item"] = item;
  }
  return output;
}

/**
 * DO_WHILE: starts IN_PROGRESS in its first iteration (the decider then schedules its first task); with an empty list
 * of items it completes at once, having run no iteration. Items that resolve to anything but a list (null too, when
 * the definition gives items), or a keepLastN that is no whole number, fail it for good.
 */
export const doWhileTask: TaskTypeModule = {
  type: "DO_WHILE",
  start(task, definition, _execution, env) {
    const items = itemsOf(task.inputData, namesItems(definition));
    const keep = keepLastNOf(task.inputData);
    const problem = items instanceof Error ? items : keep instanceof Error ? keep : undefined;
    const times = { startTime: env.now, updateTime: env.now };
    if (problem !== undefined) return { task: { ...task, ...times, endTime: env.now, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: problem.message }, dispatch: false };
    const list = items as JsonValue[] | undefined;
    if (list !== undefined && list.length === 0) return { task: { ...task, ...times, endTime: env.now, status: "COMPLETED", iteration: 0, outputData: { iteration: 0 } }, dispatch: false };
    return { task: { ...task, ...times, status: "IN_PROGRESS", iteration: 1, outputData: startingIteration({}, 1, list) }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};

/**
 * WHILE (Conductor OSS's `While`): a DO_WHILE that asks its condition before its first iteration too, as Conductor's
 * does at iteration 0. When the condition does not hold, it completes at once having run no iteration (output
 * `iteration: 0`, no task of its loop scheduled) and the workflow goes on; when it cannot be evaluated, the WHILE fails
 * for good. The condition then sees `$.<ref>.iteration` as 0 (Conductor's `putIfAbsent("iteration", 0)`) and no output
 * of its loop's tasks (none ran in this run of it). When it holds, everything after is the DO_WHILE's: the condition
 * asked after each iteration, iterations named `<ref>__<n>`, keepLastN, reruns. Iterating over `inputParameters.items`
 * (which Conductor's WHILE does not know), the list decides, as for a DO_WHILE: one iteration per item, none for an
 * empty list, the condition not asked.
 */
export const whileTask: TaskTypeModule = {
  type: "WHILE",
  start(task, definition, execution, env) {
    const started = doWhileTask.start(task, definition, execution, env);
    const condition = definition.loopCondition ?? "";
    if (started.task.status !== "IN_PROGRESS" || namesItems(definition) || condition.trim() === "") return started;
    const output: JsonObject = { iteration: 0 };
    const input = conditionInput({ input: task.inputData, definition, latestOutputs: {} }, output);
    const outcome = evaluateWith(definition.evaluatorType ?? "javascript", condition, input, env.scripts);
    const ended = { ...started.task, endTime: env.now };
    if (!outcome.ok) {
      const { iteration: _none, ...unstarted } = ended;
      const reason = conditionFailure(outcome.error, condition, input, definition.taskReferenceName);
      return { task: { ...unstarted, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: reason, outputData: {} }, dispatch: false, reasonCut: MAX_TASK_REASON_LENGTH };
    }
    if (!holds(outcome.value)) return { task: { ...ended, status: "COMPLETED", iteration: 0, outputData: output }, dispatch: false };
    return started;
  },
  attemptDeadline: doWhileTask.attemptDeadline,
};

/** What the DO_WHILE sees at the end of an iteration. */
export interface IterationEnd {
  /** The DO_WHILE instance, IN_PROGRESS. */
  readonly loop: TaskExecution;
  readonly definition: WorkflowTaskDef;
  /** The output of each of its tasks that ran in this iteration, by (the definition's) reference name. */
  readonly iterationOutputs: JsonObject;
  /** The latest output of each of its tasks, of whichever iteration, by reference name: what the condition sees. */
  readonly latestOutputs: JsonObject;
  /** The DO_WHILE's inputParameters resolved now: the condition sees them as they are at its evaluation. */
  readonly input: JsonObject;
}

/**
 * How an iteration ends: the loop goes on with iteration `iteration`, or is done, or failed (its condition could not
 * be evaluated); with the DO_WHILE's output from then on. `dropBefore`: the iterations before it are no longer kept
 * (keepLastN), tasks and output alike.
 */
export type IterationOutcome =
  | { readonly kind: "again"; readonly iteration: number; readonly output: JsonObject; readonly dropBefore?: number }
  | { readonly kind: "done"; readonly output: JsonObject; readonly dropBefore?: number }
  | { readonly kind: "failed"; readonly output: JsonObject; readonly reason: string };

/**
 * Ends the DO_WHILE's current iteration: records its tasks' outputs under its number, then evaluates `loopCondition`
 * as Conductor does, with `$` holding the DO_WHILE's input, its output under its own reference name and its tasks'
 * latest outputs under theirs. The loop goes on when the condition gives true or a number above 0 (Conductor's
 * `evalBool`). Iterating over items, it runs once per item and the condition is not asked: Orkes runs as many
 * iterations as there are items, and the Python SDK's ForEachTask writes a condition that always says stop.
 */
export function endIteration(end: IterationEnd, env: Pick<DecideEnv, "scripts">): IterationOutcome {
  const { loop, definition } = end;
  const iteration = loop.iteration ?? 1;
  const output: JsonObject = { ...loop.outputData, iteration };
  // Orkes' `captureOutput: false` keeps no iteration's outputs (a long loop's output stays small); the tasks keep theirs.
  if (loop.inputData["captureOutput"] !== false) setOwn(output, String(iteration), end.iterationOutputs);
  const keep = keepLastNOf(loop.inputData);
  const dropBefore = typeof keep === "number" && iteration - keep + 1 > 1 ? iteration - keep + 1 : undefined;
  if (dropBefore !== undefined) dropIterationOutputs(output, dropBefore);
  const items = itemsOf(loop.inputData);
  const list = items instanceof Error ? undefined : items;
  const condition = definition.loopCondition ?? "";
  let goOn = list !== undefined && iteration < list.length;
  if (list === undefined && condition.trim() !== "") {
    const input = conditionInput(end, output);
    const outcome = evaluateWith(definition.evaluatorType ?? "javascript", condition, input, env.scripts);
    if (!outcome.ok) return { kind: "failed", output, reason: conditionFailure(outcome.error, condition, input, definition.taskReferenceName) };
    goOn = holds(outcome.value);
  }
  return goOn ? { kind: "again", iteration: iteration + 1, output: startingIteration(output, iteration + 1, list), dropBefore } : { kind: "done", output, dropBefore };
}

/**
 * The reason a loop's condition failed for: the evaluator's `error`, and, when the condition reads names off `$` that
 * it does not hold (`$.loop['iteration']`, a misspelt task reference name), those names and what `$` does hold. Such a
 * condition fails with a bare "cannot read property of undefined" that does not say which read was wrong, and the
 * mistake is common: the loop's own output is under its reference name (`$.<ref>['iteration']`), not `$.loop`.
 */
function conditionFailure(error: string, condition: string, input: JsonObject, ownReference: string): string {
  const reason = `The loopCondition could not be evaluated: ${error}`;
  const missing = unboundScriptNames(condition, input);
  if (missing.length === 0) return reason;
  const reads = missing.map((name) => `$.${name}`).join(", ");
  return `${reason}; it reads ${reads}, which $ does not hold: $ holds the DO_WHILE's own output as $.${ownReference} (its iteration is $.${ownReference}['iteration']), its tasks' latest outputs by their reference names and its inputParameters (${listedNames(input)})`;
}

/**
 * Conductor's `$` for a loop condition: the input, then the DO_WHILE's output, then its tasks' outputs (later keys win),
 * each under its definition's reference name (a DO_WHILE in another loop runs as `inner__2`, and reads itself as `inner`).
 */
function conditionInput(end: Pick<IterationEnd, "input" | "definition" | "latestOutputs">, output: JsonObject): JsonObject {
  const input: JsonObject = {};
  for (const [key, value] of Object.entries(end.input)) setOwn(input, key, value);
  setOwn(input, end.definition.taskReferenceName, outputToRead(end.definition, output));
  for (const [key, value] of Object.entries(end.latestOutputs)) setOwn(input, key, value);
  return input;
}

/**
 * The DO_WHILE's output as its condition is given it: without its iterations' outputs when the condition is a script
 * that surely reads none of them (see {@link keysReadOff}: `$.loop['iteration'] < 10`, `true`), whole otherwise. The
 * script's `$` is copied into the interpreter as JSON at each iteration's end: a loop keeping every iteration's outputs
 * (no keepLastN) gave it all of them each time, most of each step's CPU in a long loop, for a condition reading none.
 */
function outputToRead(definition: WorkflowTaskDef, output: JsonObject): JsonObject {
  if (definition.evaluatorType === "value-param") return output;
  const keys = keysReadOff(definition.loopCondition ?? "", definition.taskReferenceName);
  if (keys === undefined || [...keys].some(isIterationKey)) return output;
  const read: JsonObject = {};
  for (const [key, value] of Object.entries(output)) if (!isIterationKey(key)) setOwn(read, key, value);
  return read;
}

/** True for a key of a DO_WHILE's output holding an iteration's outputs: the iteration's number. */
function isIterationKey(key: string): boolean {
  return /^[1-9][0-9]*$/.test(key);
}

/** Conductor's `ScriptEvaluator.evalBool`: true, or a number above 0. */
function holds(value: JsonValue): boolean {
  return value === true || (typeof value === "number" && value > 0);
}

/** Removes the outputs of iterations before `dropBefore` (keys that are iteration numbers). */
function dropIterationOutputs(output: JsonObject, dropBefore: number): void {
  for (const key of Object.keys(output)) {
    if (isIterationKey(key) && Number(key) < dropBefore) delete output[key];
  }
}

/**
 * The output of a DO_WHILE brought back to iteration `iteration` (a rerun of one of its tasks, or a child waited for
 * again): the outputs of that iteration and later ones go, they will be recorded anew.
 */
export function reopenedLoopOutput(loop: TaskExecution, iteration: number): JsonObject {
  const output: JsonObject = { ...loop.outputData };
  for (const key of Object.keys(output)) {
    if (isIterationKey(key) && Number(key) >= iteration) delete output[key];
  }
  const items = itemsOf(loop.inputData);
  return startingIteration(output, iteration, items instanceof Error ? undefined : items);
}
