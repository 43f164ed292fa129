import { describeValue } from "../../definition/checks";
import type { JsonObject, TaskExecution, WorkflowExecution } from "../../model";
import type { TaskTypeModule } from "../task-type";

/** How long publishing one event may take (its handlers' conditions and actions) before the attempt counts as lost. */
export const EVENT_PUBLISH_MS = 30_000;

/** The sink of Conductor's internal events, the only kind this service publishes. */
const CONDUCTOR_SINK = "conductor";

/**
 * The event an EVENT task publishes, from its resolved `sink`, as Conductor names it: `conductor` publishes
 * `conductor:<workflow name>:<task reference name>`, `conductor:<queue>` publishes `conductor:<workflow name>:<queue>`.
 * Other sinks (`sqs:`, `kafka:`, `nats:`, …) name systems this service has no connection to.
 */
export function eventName(sink: unknown, workflowName: string, taskReferenceName: string): { event: string } | { invalid: string } {
  if (sink === CONDUCTOR_SINK) return { event: `${CONDUCTOR_SINK}:${workflowName}:${taskReferenceName}` };
  if (typeof sink === "string" && sink.startsWith(`${CONDUCTOR_SINK}:`) && sink.length > CONDUCTOR_SINK.length + 1) {
    return { event: `${CONDUCTOR_SINK}:${workflowName}:${sink.slice(CONDUCTOR_SINK.length + 1)}` };
  }
  return { invalid: sinkProblem(sink) };
}

/** Why `sink` names nothing this service publishes to. */
export function sinkProblem(sink: unknown): string {
  if (typeof sink !== "string" || sink.trim() === "") return `an EVENT task's sink must be conductor or conductor:<queue>, but is ${describeValue(sink)}`;
  return `sink ${JSON.stringify(sink)} is not supported: this service publishes Conductor's internal events only (conductor or conductor:<queue>), which event handlers (/api/event) act on`;
}

/** What an EVENT task publishes (Conductor's message payload): its input, with the identity of its workflow. */
export function eventPayload(task: TaskExecution, execution: WorkflowExecution): JsonObject {
  return {
    ...task.inputData,
    workflowInstanceId: execution.workflowId,
    workflowType: execution.workflowName,
    workflowVersion: execution.workflowVersion,
    correlationId: execution.correlationId ?? null,
  };
}

/**
 * EVENT (Conductor's), with Conductor's internal sink: the actor publishes its payload to the event handlers listening
 * for its event, which act on it (start or terminate a workflow, complete or fail a task, update variables), and the task completes with the payload
 * and `event_produced`; with `asyncComplete` it then stays IN_PROGRESS until completed from outside. Its `sink` is a
 * task-level field, resolved with its input (it may hold a `${...}`).
 */
export const eventTask: TaskTypeModule = {
  type: "EVENT",
  // As Conductor's EventTaskMapper writes the task's input, which is the message's payload: `sink` and `asyncComplete`
  // from the task's own fields (the latter always, so a handler reads `$.asyncComplete`; an input key of that name is
  // replaced by it).
  inputTemplate(definition) {
    const input = { ...(definition.inputParameters ?? {}), asyncComplete: definition.asyncComplete === true };
    return definition.sink === undefined ? input : { ...input, sink: definition.sink };
  },
  start(task, _definition, execution, env) {
    const begun = { ...task, startTime: env.now, updateTime: env.now };
    const target = eventName(task.inputData["sink"], execution.workflowName, task.referenceTaskName);
    if ("invalid" in target) return { task: { ...begun, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: target.invalid, endTime: env.now }, dispatch: false };
    return { task: { ...begun, status: "IN_PROGRESS", attempt: task.attempt + 1, attemptDeadline: this.attemptDeadline(task, env) }, dispatch: true };
  },
  attemptDeadline(_task, env) {
    return env.now + EVENT_PUBLISH_MS + env.config.dispatchGraceMs;
  },
};
