/**
 * Orkes' SignalResponse: what the synchronous calls that run a workflow on and then wait (`/signal/sync`, execute)
 * answer with, per the caller's `returnStrategy`: the workflow itself, or what blocks it now (the workflow holding the
 * blocker, the task, or its input). What lies in a child is shown only to a caller who may read that child.
 */
import * as v from "valibot";
import type { IRequest } from "itty-router";
import type { JsonObject, JsonValue } from "../engine/model";
import { TERMINAL_TASK_STATUSES, TERMINAL_WORKFLOW_STATUSES, type TaskStatus, type WorkflowStatus } from "../engine/model";
import { wakeUp } from "../engine/tasks/wait";
import { executionStub, retryingExecutionCall } from "./executions";
import { ApiError } from "./http/errors";
import { isObjectUnavailable } from "./object-retry";
import { queryValue } from "./http/params";
import type { PathAuthorizer } from "./guard";
import { parseOrThrow } from "./schemas";

/** What a synchronous call answers with (Orkes' `returnStrategy`). */
const RETURN_STRATEGIES = ["TARGET_WORKFLOW", "BLOCKING_WORKFLOW", "BLOCKING_TASK", "BLOCKING_TASK_INPUT", "BLOCKING_TASK_LIST"] as const;
/** One of Orkes' return strategies. */
export type ReturnStrategy = (typeof RETURN_STRATEGIES)[number];
const ReturnStrategyQuery = v.picklist(RETURN_STRATEGIES, `returnStrategy must be one of ${RETURN_STRATEGIES.join(", ")}`);

/** Sub workflows a search for the blocking task goes down at most (a guard: children nest far less deep). */
const MAX_BLOCKING_DEPTH = 32;

/** Workflow JSON as the executions answer it, read for the fields a SignalResponse is made of. */
export type WorkflowView = JsonObject & { workflowId: string; workflowName: string; status: WorkflowStatus; tasks?: TaskView[] };
type TaskView = JsonObject & { taskId: string; referenceTaskName: string; status: string; taskType: string; inputData: JsonObject; outputData: JsonObject; subWorkflowId?: string; workflowTask?: JsonObject };

/** The workflow an answer stops at, and the task that blocks it (none once it has ended or when nothing is pending). */
interface BlockingPoint {
  workflow: WorkflowView;
  task?: TaskView;
}

/** The request's `returnStrategy` (TARGET_WORKFLOW when absent or empty); a 400 for any other value. */
export function returnStrategyOf(request: IRequest): ReturnStrategy {
  const raw = queryValue(request, "returnStrategy");
  return raw === undefined || raw === "" ? "TARGET_WORKFLOW" : parseOrThrow(ReturnStrategyQuery, raw, "return strategy", "returnStrategy");
}

/** The Workflow JSON (with tasks) of an execution, undefined when there is none. */
export async function workflowView(env: Env, workflowId: string): Promise<WorkflowView | undefined> {
  const json = await retryingExecutionCall(env, workflowId, (stub) => stub.getWorkflowJson(true));
  return json === null ? undefined : (JSON.parse(json) as WorkflowView);
}

/**
 * The Workflow JSON of a child an answer goes down into, undefined when there is none, or when its object cannot answer
 * now (overloaded, or still unreachable after the reads made again): the answer then stops at the SUB_WORKFLOW task
 * that runs it, as for a child the caller may not read. Those who ask have started the execution (an execute) or
 * signalled it (a signal took effect): a 503 would have them start it again, or send the signal again.
 */
async function childView(env: Env, childId: string): Promise<WorkflowView | undefined> {
  try {
    return await workflowView(env, childId);
  } catch (error) {
    if (isObjectUnavailable(error)) return undefined;
    throw error;
  }
}

/**
 * What blocks `top` now: its first pending task, and when that is a SUB_WORKFLOW task whose child the caller may read,
 * what blocks that child, and so on down. Nothing once the workflow has ended.
 */
async function blockingPoint(env: Env, top: WorkflowView, authorize: PathAuthorizer): Promise<BlockingPoint> {
  let workflow = top;
  for (let depth = 0; depth < MAX_BLOCKING_DEPTH; depth++) {
    if (TERMINAL_WORKFLOW_STATUSES.has(workflow.status)) return { workflow };
    const task = (workflow.tasks ?? []).find((candidate) => candidate.status === "SCHEDULED" || candidate.status === "IN_PROGRESS");
    if (task === undefined) return { workflow };
    const childId = task.taskType === "SUB_WORKFLOW" ? task.subWorkflowId : undefined;
    if (childId === undefined || !(await mayRead(authorize, childId))) return { workflow, task };
    const child = await childView(env, childId);
    if (child === undefined) return { workflow, task };
    workflow = child;
  }
  return { workflow };
}

/**
 * What a synchronous call given `waitUntilTaskRef` names (`untilTaskRefs`) answers as blocking, as Conductor's
 * WorkflowSignalResponder finds it: the first task, in task order, that is either a task named in `untilTaskRefs`
 * that has ended (whatever its status, as the call's wait counts it), or a WAIT (or Orkes' YIELD) still
 * waiting for a signal with no time set. A pending SUB_WORKFLOW task's child the caller may read is searched for both
 * where the task stands. Undefined when there is no such task.
 */
async function signalledOrNamedPoint(env: Env, top: WorkflowView, untilTaskRefs: ReadonlySet<string>, authorize: PathAuthorizer): Promise<BlockingPoint | undefined> {
  const search = async (workflow: WorkflowView, depth: number): Promise<BlockingPoint | undefined> => {
    for (const task of workflow.tasks ?? []) {
      if (waitsForSignal(task) || (endedTask(task) && isNamedBy(task, untilTaskRefs))) return { workflow, task };
      const childId = task.taskType === "SUB_WORKFLOW" && !endedTask(task) ? task.subWorkflowId : undefined;
      if (childId === undefined || depth + 1 >= MAX_BLOCKING_DEPTH || !(await mayRead(authorize, childId))) continue;
      const child = await childView(env, childId);
      // waitUntilTaskRef names a child's tasks too, as Conductor's responder searches them (and the wait counts them).
      const found = child === undefined ? undefined : await search(child, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return search(top, 0);
}

/** A WAIT with neither `duration` nor `until` (Conductor's waitTimeout 0), or a YIELD, still pending: only a signal moves it. */
function waitsForSignal(task: TaskView): boolean {
  if (endedTask(task)) return false;
  return task.taskType === "YIELD" || (task.taskType === "WAIT" && "external" in wakeUp(task.inputData, 0));
}

function endedTask(task: TaskView): boolean {
  return TERMINAL_TASK_STATUSES.has(task.status as TaskStatus);
}

/** Named in `refs` by its own reference name or, in a loop, by its definition's (`ping` for `ping__2`), as the wait reads them. */
function isNamedBy(task: TaskView, refs: ReadonlySet<string>): boolean {
  const definitionRef = task.workflowTask?.["taskReferenceName"];
  return refs.has(task.referenceTaskName) || (typeof definitionRef === "string" && refs.has(definitionRef));
}

async function mayRead(authorize: PathAuthorizer, workflowId: string): Promise<boolean> {
  try {
    await authorize("GET", `/api/workflow/${workflowId}`);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return false;
    throw error;
  }
}

/** How the wait before a SignalResponse went: the `waitUntilTaskRef` names it was given, and whether it ran out. */
export interface SignalWait {
  untilTaskRefs?: readonly string[];
  /** The wait ran out with the workflow still busy (Conductor's `signalTimeout`). */
  timedOut: boolean;
}

/**
 * Orkes' SignalResponse for `top`, the workflow the call acted on: which answer it is and `top`'s status, with the
 * fields `strategy` asks for. `authorize` (asked for only by the BLOCKING_* strategies) decides which children the
 * caller may be shown. `wait.untilTaskRefs`, the call's `waitUntilTaskRef` names, change what blocks (see
 * {@link signalledOrNamedPoint}); without them, or when that finds nothing, it is the first pending task.
 */
export async function signalResponse(env: Env, strategy: ReturnStrategy, top: WorkflowView, authorize: () => Promise<PathAuthorizer>, wait: SignalWait): Promise<JsonObject> {
  const untilTaskRefs = wait.untilTaskRefs ?? [];
  // The target's variables, whatever the strategy, as the clients' SignalResponse reads them (targetWorkflowVariables),
  // and whether the wait ran out (signalTimeout, a boolean in every answer as the Java client's field is).
  const header: JsonObject = {
    ...responseHeader(strategy, top.workflowId, top.status),
    ...(top["variables"] === undefined ? {} : { targetWorkflowVariables: top["variables"] }),
    signalTimeout: wait.timedOut,
  };
  if (strategy === "TARGET_WORKFLOW") return { ...top, ...header };
  const authorizer = await authorize();
  const named = untilTaskRefs.length === 0 ? undefined : await signalledOrNamedPoint(env, top, new Set(untilTaskRefs), authorizer);
  const blocking = named ?? (await blockingPoint(env, top, authorizer));
  const task = blocking.task;
  if (strategy === "BLOCKING_WORKFLOW") {
    // Which of its tasks blocks it: the clients' hasBlockingTask() asks for blockingTaskId.
    const blocker = task === undefined ? {} : definedFields({ blockingTaskId: task.taskId, blockingTaskReferenceName: task["referenceTaskName"] });
    return { ...blocking.workflow, ...header, ...blocker };
  }
  const where: JsonObject = { workflowId: blocking.workflow.workflowId, workflowType: blocking.workflow.workflowName };
  // The newer clients' strategy: the blocking task whole, as a Task, in `tasks` (empty once nothing blocks).
  if (strategy === "BLOCKING_TASK_LIST") return { ...header, ...where, tasks: task === undefined ? [] : [task] };
  if (task === undefined) return { ...header, ...where };
  // The task's input and output go under `input` and `output`, as a SignalResponse carries them, with its workflow's
  // priority and the task's creation (its scheduling) as Orkes' examples show them.
  const { inputData, outputData, ...fields } = task;
  const shown: JsonObject = { ...fields, priority: blocking.workflow["priority"] ?? 0, createTime: fields["scheduledTime"] ?? 0 };
  if (strategy === "BLOCKING_TASK_INPUT") {
    const identity: Record<string, JsonValue | undefined> = {};
    for (const key of TASK_IDENTITY) identity[key] = shown[key];
    return { ...header, ...where, ...definedFields(identity), input: inputData };
  }
  return { ...shown, ...header, ...where, input: inputData, output: outputData };
}

/** The blocking task's fields a BLOCKING_TASK_INPUT answer shows beside its input (Orkes' example's, but its output). */
const TASK_IDENTITY = ["taskId", "taskType", "referenceTaskName", "taskDefName", "status", "retryCount", "priority", "createTime", "updateTime"] as const;

/** The fields every SignalResponse has: which answer it is, and the workflow the call acted on with its status. */
function responseHeader(strategy: ReturnStrategy, workflowId: string, status: WorkflowStatus): JsonObject {
  return { responseType: strategy, targetWorkflowId: workflowId, targetWorkflowStatus: status };
}

/**
 * The TARGET_WORKFLOW answer for `settled`, the Workflow JSON of workflow `workflowId` as text, with
 * `targetWorkflowVariables` (its variables, as every SignalResponse carries them) and `extra` fields, made from the text:
 * the execute endpoint answers one per call, and parsing and serialising the whole workflow again for a few fields
 * would cost each of them.
 */
export function targetWorkflowText(settled: { workflowJson: string; status: WorkflowStatus; variablesJson?: string }, workflowId: string, extra: JsonObject = {}): string {
  // The Workflow JSON is an object with fields: its closing brace gives way to theirs, none of which it has.
  const header = JSON.stringify(responseHeader("TARGET_WORKFLOW", workflowId, settled.status));
  // The variables are spliced in as the text the execution made of them (an object still on older code sends none).
  const variables = settled.variablesJson === undefined ? "" : `,"targetWorkflowVariables":${settled.variablesJson}`;
  const added = JSON.stringify(extra);
  const rest = added === "{}" ? "" : `,${added.slice(1, -1)}`;
  const json = settled.workflowJson;
  return `${json.slice(0, json.lastIndexOf("}"))},${header.slice(1, -1)}${variables}${rest}}`;
}

function definedFields(fields: Record<string, JsonValue | undefined>): JsonObject {
  return Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, JsonValue] => entry[1] !== undefined));
}
