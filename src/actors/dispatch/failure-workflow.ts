import type { FailureWorkflowStart } from "../../engine/model";
import { startOnBehalfDenial } from "../../worker/auth/access-rules";
import { startExecution } from "../../worker/start-execution";

/** How an owed start (a failure workflow's, a trigger's) went: started (now or by an earlier attempt), or refused for good and why. */
export type FailureWorkflowOutcome = { started: true } | { started: false; reason: string };

/**
 * Starts a failed execution's failure workflow, or a workflow a HUMAN task's trigger names, under the id chosen for it.
 * Refused for good (no such workflow,
 * nesting too deep, not something whoever started the failed execution may start); a failure of the runtime
 * or of D1 throws, and the caller tries again. Repeating a start that went through is harmless: the id was
 * random and is only ever used for this start, so finding it taken means it already happened.
 */
export async function startFailureWorkflow(env: Env, start: FailureWorkflowStart, maxDepth: number): Promise<FailureWorkflowOutcome> {
  if (start.depth > maxDepth) {
    return { started: false, reason: `workflows started by failures may nest at most ${maxDepth} levels (MAX_SUBWORKFLOW_DEPTH); this one would be level ${start.depth}` };
  }
  // As for a SUB_WORKFLOW: a definition must not start what its starter could not start directly.
  const denial = startOnBehalfDenial(start.startScopes, `workflow ${start.triggeringWorkflowId}`, start.name);
  if (denial !== undefined) return { started: false, reason: denial };
  const outcome = await startExecution(env, {
    name: start.name,
    version: start.version,
    input: start.input,
    correlationId: start.correlationId,
    priority: start.priority,
    taskToDomain: start.taskToDomain,
    depth: start.depth,
    baseUrl: start.baseUrl ?? "",
    workflowId: start.workflowId,
    startScopes: start.startScopes,
    ...(start.createdBy === undefined ? {} : { createdBy: start.createdBy }),
    ...(start.testRunDomain === undefined ? {} : { testRunDomain: start.testRunDomain }),
  });
  if (outcome.ok || outcome.code === "ALREADY_STARTED") return { started: true };
  return { started: false, reason: outcome.message };
}
