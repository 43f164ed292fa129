/**
 * Test runs (Conductor's `POST /api/workflow/test`): an execution that gives its tasks mocked results instead of
 * running them, so a definition's wiring, branches and retries can be checked without its workers or services.
 */
import type { DecideEnv } from "./config";
import { decide, isPending, type Decision, type Effect } from "./decider";
import { EngineError } from "./errors";
import type { TaskExecution, TaskMock, TaskType, WorkflowDef, WorkflowExecution, WorkflowTestPlan } from "./model";
import { definitionReferenceName } from "./plan";
import { keptTestDomain, ownTestDomain } from "./test-domain";

/**
 * Task types a test run never mocks, as Conductor's WorkflowTestService: they do what they always do (a SUB_WORKFLOW's
 * child follows its own plan, see {@link childTestPlan}). Every other type takes its mocked results.
 */
const UNMOCKED_TYPES: ReadonlySet<TaskType> = new Set<TaskType>([
  "JOIN",
  "DO_WHILE",
  "WHILE",
  "SET_VARIABLE",
  "FORK_JOIN",
  "CONDITIONAL_FORK",
  "INLINE",
  "LAMBDA",
  "TERMINATE",
  "DECISION",
  "DYNAMIC",
  "FORK_JOIN_DYNAMIC",
  "SWITCH",
  "SUB_WORKFLOW",
]);

/** A plan with nothing in it: a test run's child that its test request gives no plan of its own. */
export const EMPTY_TEST_PLAN: WorkflowTestPlan = { taskMocks: [], subWorkflows: [] };

/**
 * The entry of `plan.taskMocks` that answers for `task`, when it still holds a mock: the one of its own reference
 * name first (`ping__2`, an iteration of a loop, as Conductor names it), else its definition's (`ping`, any iteration).
 */
function mockEntryIndex(plan: WorkflowTestPlan, definition: WorkflowDef, task: TaskExecution): number | undefined {
  for (const name of [task.referenceTaskName, definitionReferenceName(definition, task)]) {
    const index = plan.taskMocks.findIndex((entry) => entry.taskReferenceName === name && entry.mocks.length > 0);
    if (index >= 0) return index;
  }
  return undefined;
}

/** The first task of a running test execution that waits and has a mock left, with that mock and the plan without it. */
function nextMock(state: WorkflowExecution): { task: TaskExecution; mock: TaskMock; rest: WorkflowTestPlan } | undefined {
  const plan = state.test;
  if (plan === undefined || state.status !== "RUNNING") return undefined;
  for (const task of state.tasks) {
    if (!isPending(task) || UNMOCKED_TYPES.has(task.taskType)) continue;
    const index = mockEntryIndex(plan, state.definition, task);
    if (index === undefined) continue;
    const entry = plan.taskMocks[index]!;
    const taskMocks = plan.taskMocks.map((other, at) => (at === index ? { taskReferenceName: other.taskReferenceName, mocks: other.mocks.slice(1) } : other));
    return { task, mock: entry.mocks[0]!, rest: { ...plan, taskMocks } };
  }
  return undefined;
}

/** `state` with task `taskId` shown to have waited and run as `mock` says, when it ended by it and the mock says so. */
function withMockTimes(state: WorkflowExecution, taskId: string, mock: TaskMock): WorkflowExecution {
  const executionTime = mock.executionTime ?? 0;
  const queueWaitTime = mock.queueWaitTime ?? 0;
  if (executionTime <= 0 && queueWaitTime <= 0) return state;
  const tasks = state.tasks.map((task) => {
    if (task.taskId !== taskId || task.endTime === 0) return task;
    const startTime = task.endTime - executionTime;
    return { ...task, startTime, scheduledTime: startTime - queueWaitTime };
  });
  return { ...state, tasks };
}

/** False for an effect that would start or queue a task the mocks have answered meanwhile (in the same decision). */
function stillDue(effect: Effect, state: WorkflowExecution): boolean {
  const taskId = effect.kind === "dispatch" ? effect.taskId : effect.kind === "queueTask" ? effect.entry.taskId : undefined;
  if (taskId === undefined) return true;
  const task = state.tasks.find((candidate) => candidate.taskId === taskId);
  return task !== undefined && isPending(task) && (effect.kind !== "dispatch" || task.attempt === effect.attempt);
}

/**
 * Gives the tasks of a test run that wait the mocked results their plan holds for them, one after the other, each as
 * a worker's update would (so a FAILED one is retried as its definition says, and the retry takes the next mock),
 * within `decision`: what the mocks answered is never dispatched or queued. A mock the task cannot take (an output
 * over the size limit) fails the task for good with a reason that says so. Each round uses up one mock, so this ends.
 * Anything else (not a test run, a paused one, no mock left) leaves `decision` as it is.
 */
export function applyTestMocks(decision: Decision, env: DecideEnv): Decision {
  let { state, effects } = decision;
  let mocked = false;
  for (let next = nextMock(state); next !== undefined; next = nextMock(state)) {
    mocked = true;
    const { task, mock, rest } = next;
    const reduced: WorkflowExecution = { ...state, test: rest };
    let applied: Decision;
    try {
      applied = decide(reduced, { type: "externalUpdate", taskId: task.taskId, status: mock.status, output: mock.output }, env);
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      const reason = `The mocked result could not be applied: ${error.message}`;
      applied = decide(reduced, { type: "externalUpdate", taskId: task.taskId, status: "FAILED_WITH_TERMINAL_ERROR", output: {}, reason }, env);
    }
    state = withMockTimes(applied.state, task.taskId, mock);
    effects = [...effects, ...applied.effects];
  }
  return mocked ? { state, effects: effects.filter((effect) => stillDue(effect, state)) } : decision;
}

/**
 * The plan of the child SUB_WORKFLOW task `task` of test run `parent` starts (an empty one when none is given); undefined
 * outside test runs. A child whose tasks go to its parent's own domain (`childDomains`, its `taskToDomain`, keeps the
 * parent's `*`) shares that domain's queues, so it takes them out of the listings too when it ends (see
 * {@link ownTestQueues}); a child given domains of its own (`subWorkflowParam.taskToDomain`) owns none.
 */
export function childTestPlan(parent: WorkflowExecution, task: TaskExecution, childDomains: Readonly<Record<string, string>> = {}): WorkflowTestPlan | undefined {
  if (parent.test === undefined) return undefined;
  const domain = keptTestDomain(parent, childDomains);
  const plan = namedChildPlan(parent.test, parent.definition, task);
  return domain !== undefined ? { ...plan, domain } : plan;
}

/** The plan `test` names for the child of `task` (by its reference name, else its definition's), or an empty one. */
function namedChildPlan(test: WorkflowTestPlan, definition: WorkflowDef, task: TaskExecution): WorkflowTestPlan {
  for (const name of [task.referenceTaskName, definitionReferenceName(definition, task)]) {
    const entry = test.subWorkflows.find((candidate) => candidate.taskReferenceName === name);
    if (entry !== undefined) return entry.plan;
  }
  return EMPTY_TEST_PLAN;
}

/**
 * The worker queues of test run `state`'s own random domain (see `WorkflowTestPlan.domain`; or of the test run that
 * started it: see `ownTestDomain`) that `effects` put tasks in: the queues it must take out of the listings when it
 * ends. None for any other execution, nor for a task that went to a domain the run was given by its caller (a
 * `taskToDomain` entry of the task's own name).
 */
export function ownTestQueues(state: WorkflowExecution, effects: readonly Effect[]): string[] {
  const domain = ownTestDomain(state);
  if (domain === undefined) return [];
  const queues = new Set<string>();
  for (const effect of effects) {
    if (effect.kind !== "queueTask") continue;
    const task = state.tasks.find((candidate) => candidate.taskId === effect.entry.taskId);
    if (task?.domain === domain) queues.add(effect.entry.queue);
  }
  return [...queues];
}
