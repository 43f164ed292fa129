import { DEFAULT_ENGINE_CONFIG, type DecideEnv } from "../../src/engine/config";
import { decide, type ExecutionEvent } from "../../src/engine/decider";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import { EngineError } from "../../src/engine/errors";
import type { WorkflowExecution } from "../../src/engine/model";
import { jqRunner } from "./jq-runner";
import { scriptRunner } from "./script-runner";

/** The decider's environment at `now`, with ids unique to that moment and the default configuration. */
export function env(now: number): DecideEnv {
  let n = 0;
  return { now, newId: () => `id-${now}-${++n}`, config: DEFAULT_ENGINE_CONFIG, scripts: scriptRunner, jq: jqRunner };
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
