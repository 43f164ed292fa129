/**
 * The random domain a test run (`POST /api/workflow/test`) gives its SIMPLE tasks, and the executions that take its
 * worker queues out of the queue listings when they end (see `ownTestQueues`, `TaskQueue.delist`).
 */
import type { WorkflowExecution } from "./model";

/**
 * The random domain whose worker queues `state` takes out of the listings when it ends: a test run's own (see
 * `WorkflowTestPlan.domain`), or the one an execution a test run started kept (see `WorkflowExecution.testRunDomain`);
 * undefined for every other execution. Reads two fields: it is asked at every change of every execution.
 */
export function ownTestDomain(state: WorkflowExecution): string | undefined {
  return state.test?.domain ?? state.testRunDomain;
}

/**
 * The domain of `starter`'s own (see {@link ownTestDomain}) that an execution it starts with `taskToDomain` keeps (its
 * `*` is that domain: a SUB_WORKFLOW's child, a START_WORKFLOW's workflow or a failure workflow that took the
 * starter's domains, as Conductor's do); undefined when that execution was given domains of its own, or the starter
 * has none.
 */
export function keptTestDomain(starter: WorkflowExecution, taskToDomain: Readonly<Record<string, string>>): string | undefined {
  const domain = ownTestDomain(starter);
  return domain !== undefined && Object.hasOwn(taskToDomain, "*") && taskToDomain["*"] === domain ? domain : undefined;
}
