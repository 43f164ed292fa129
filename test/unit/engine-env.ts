import { DEFAULT_ENGINE_CONFIG, type DecideEnv } from "../../src/engine/config";
import { createExecution, type Decision, type ExecutionEvent } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import { EngineError } from "../../src/engine/errors";
import type { JsonObject, TaskDef, TaskExecution, TaskStatus, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { jqRunner } from "./jq-runner";
import { scriptRunner } from "./script-runner";

/** The decider's environment at `now`, with ids unique to that moment and the default configuration. */
export function env(now: number): DecideEnv {
  let n = 0;
  return { now, newId: () => `id-${now}-${++n}`, config: DEFAULT_ENGINE_CONFIG, scripts: scriptRunner, jq: jqRunner, taskDefs: () => null };
}

/**
 * {@link env}, with a script runner whose every run counts as a whole script budget of work (a script near its limit):
 * what the decider paces by (see `ScriptRunner.spent`). `runs` tells how many scripts ran so far.
 */
export function costlyScriptsEnv(): { env: (now: number) => DecideEnv; runs: () => number } {
  let runs = 0;
  const scripts = { ...scriptRunner, run: (source: string, input: JsonObject) => (runs++, scriptRunner.run(source, input)), spent: () => runs };
  return { env: (now) => ({ ...env(now), scripts }), runs: () => runs };
}

/** The error the decider refuses `event` with at `now`; fails the test when it accepts it. */
export function refusal(state: WorkflowExecution, event: ExecutionEvent, now: number): EngineError {
  try {
    decide(state, event, env(now));
  } catch (error) {
    if (error instanceof EngineError) return error;
    throw error;
  }
  throw new Error("the event was accepted");
}

/** The validation errors of a definition holding `tasks`, as `path: message` lines (none when it registers). */
export function registrationErrors(tasks: unknown[]): string[] {
  const result = validateWorkflowDef({ name: "checked", version: 1, schemaVersion: 2, tasks });
  return result.ok ? [] : result.errors.map((issue) => `${issue.path}: ${issue.message}`);
}

/** The first decision of execution `wf-1` of a definition named `name` holding `tasks`, started at `now` with `input`. */
export function startedWith(name: string, tasks: WorkflowTaskDef[], input: JsonObject = {}, now = 1_000): Decision {
  const definition = { name, version: 1, schemaVersion: 2, tasks };
  return decide(createExecution({ workflowId: "wf-1", definition, input }, now), { type: "start" }, env(now));
}

/** The latest instance whose reference name is `ref` (a loop task's carries its iteration: `a__2`); fails the test when there is none. */
export function latestNamed(state: WorkflowExecution, ref: string): TaskExecution {
  const found = state.tasks.findLast((task) => task.referenceTaskName === ref);
  if (!found) throw new Error(`no instance of ${ref} in ${state.tasks.map((task) => task.referenceTaskName).join(", ")}`);
  return found;
}

/** `ref`'s in-flight attempt (an HTTP call's) ends with `status` and `output` at `now` (a failure with the reason "<ref> went wrong"). */
export function attemptEnds(state: WorkflowExecution, ref: string, now: number, status: TaskStatus = "COMPLETED", output: JsonObject = { body: ref }): Decision {
  const task = latestNamed(state, ref);
  const event: ExecutionEvent = { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status, output };
  return decide(state, status === "COMPLETED" ? event : { ...event, reason: `${ref} went wrong` }, env(now));
}

/** An HTTP task `ref` GETting https://example.com/<ref>, with `extra` fields. */
export function httpGet(ref: string, extra: Partial<WorkflowTaskDef> = {}): WorkflowTaskDef {
  return { name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { uri: `https://example.com/${ref}`, method: "GET" }, ...extra };
}

/** A task definition named `name` with `fields`, Conductor's defaults otherwise but no retries and no delay. */
export function taskDefNamed(name: string, fields: Partial<TaskDef> = {}): TaskDef {
  return {
    name,
    retryCount: 0,
    retryLogic: "FIXED",
    retryDelaySeconds: 0,
    backoffScaleFactor: 1,
    timeoutSeconds: 0,
    timeoutPolicy: "TIME_OUT_WF",
    responseTimeoutSeconds: 3600,
    ...fields,
  };
}
