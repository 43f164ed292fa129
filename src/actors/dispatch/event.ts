import type { ExecutionEvent } from "../../engine/decider";
import { eventStamp, expandInlineJson, payloadText, taskAction, withPayload, type TaskActionParams } from "../../engine/event-params";
import { deliveryKey, type EventMessage, type JsonObject, type JsonValue, type TaskExecution, type WorkflowDef, type WorkflowExecution, type WorkflowTaskDef } from "../../engine/model";
import { correlationIdProblem, cutText, MAX_TASK_REASON_LENGTH, oversize, oversizeReason } from "../../engine/limits";
import { masked, maskedKeysWith } from "../../engine/masking";
import { maskedTexts, reasonMaskedOf } from "../../engine/masked-reason";
import { evaluateWith, type ScriptRunner } from "../../engine/scripts";
import { executionIdPrefix, hexOf, uuidFromDigest } from "../../engine/task-id";
import { eventName, eventPayload } from "../../engine/tasks/event";
import { EventHandlerRepository, type EventAction, type EventHandler } from "../../worker/event-handlers";
import { EventRecordRepository, type ActionRecord, type MessageRecord } from "../../worker/event-executions";
import { serviceConfig } from "../../worker/config";
import { executionStub } from "../../worker/executions";
import { startExecution } from "../../worker/start-execution";
import { lookUpTask } from "../../worker/task-lookup";
import type { WorkflowCommand } from "../workflow-execution";

type DispatchResult = Extract<ExecutionEvent, { type: "dispatchResult" }>;

/**
 * What an action did: its output (the workflow a start started), or why it could not be taken, for the record and
 * the log; thrown errors (an object or D1 unreachable) are retried.
 */
type ActionOutcome = { done: true; output?: JsonObject } | { done: false; why: string };

/** What publishing needs from the execution object: the isolate's script runner, loaded only for a condition. */
export interface PublishContext {
  env: Env;
  scripts: () => Promise<ScriptRunner>;
}

/**
 * An EVENT task's result: COMPLETED with the payload and `event_produced`, or IN_PROGRESS for someone outside when it is
 * `asyncComplete`, carrying the message (`published`) its event's handlers are owed. As Conductor's Event task puts the
 * message on its queue and completes, the handlers run after the result is applied (see {@link publishEvent}): a
 * handler completing the task that follows the EVENT finds it scheduled.
 */
export function dispatchEvent(execution: WorkflowExecution, task: TaskExecution, definition: WorkflowTaskDef | undefined): DispatchResult {
  const result = (status: DispatchResult["status"], output: JsonObject, extra: Partial<DispatchResult> = {}): DispatchResult => ({ type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status, output, ...extra });
  const target = eventName(task.inputData["sink"], execution.workflowName, task.referenceTaskName);
  if ("invalid" in target) return result("FAILED_WITH_TERMINAL_ERROR", {}, { reason: target.invalid });
  const payload = eventPayload(task, execution);
  // Conductor's message id is the task's id; a rerun of the task (which keeps its id) publishes a message of its own,
  // or its start actions would find the first run's workflows and start none.
  const output = { ...payload, event_produced: target.event };
  // The message is the task's output, `event_produced` included: an addition of this service (docs/api.md), whereas
  // Conductor's Event task publishes its input and the four workflow fields and puts `event_produced` in the output
  // alone. Its record shows the values the task's output shows masked as `***` (see EventMessage.maskedFields).
  const maskedFields = execution.definition.maskedFields;
  const published: EventMessage = { event: target.event, messageId: deliveryKey(task), payload: output, ...(maskedFields !== undefined && maskedFields.length > 0 ? { maskedFields: [...maskedFields] } : {}) };
  const asyncComplete = definition?.asyncComplete === true || task.inputData["asyncComplete"] === true;
  return asyncComplete ? result("IN_PROGRESS", output, { awaitingExternal: true, published }) : result("COMPLETED", output, { published });
}


/**
 * What a publication taken partway has done, kept by its publisher: each action's record, by handler name and the
 * action's key (see {@link actionKeys}). Publishing again then goes on from the actions not taken, rather than taking
 * every action again from the first: each publication runs in one invocation, whose subrequests Cloudflare counts (50 D1
 * queries on Workers Free, see docs/reliability.md), and one refused partway would otherwise be refused at the same
 * place each time, for good.
 */
export interface ActionProgress {
  /** The record of the action of `handler` keyed `key`, when it was taken before. */
  taken(handler: string, key: string): ActionRecord | undefined;
  /** Keeps the record of the action keyed `key`, just taken. */
  keep(record: ActionRecord, key: string): void;
}

/**
 * What names each of `handler`'s actions in a publication: its kept progress, the id of the workflow it starts, the
 * update it makes to a task. With `byContent` (a publication owed since EventMessage.actionKeys), the digest of the
 * action's JSON (its keys in order, so the same action written otherwise is the same) and how many equal actions come
 * before it in the handler: a handler edited between two runs of the publication (an action put in, taken out or moved)
 * leaves a taken action's key as it was and gives a new one a key of its own, whereas by place the action now at a taken
 * one's place was passed over and the taken one, moved, was taken again (a second workflow started). An action whose
 * content was changed is a new action. Without (a publication owed before), its place, as its first run named it.
 */
export async function actionKeys(handler: EventHandler, byContent: boolean): Promise<string[]> {
  if (!byContent) return handler.actions.map((_, index) => String(index));
  const seen = new Map<string, number>();
  const keys: string[] = [];
  for (const action of handler.actions) {
    const digest = hexOf(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJson(action as unknown as JsonValue))))).slice(0, 32);
    const occurrence = seen.get(digest) ?? 0;
    seen.set(digest, occurrence + 1);
    keys.push(`${digest}:${occurrence}`);
  }
  return keys;
}

/** `value` as JSON with every object's keys in order: the same for the same value however it was written. */
function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value)
    .filter((key) => value[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key]!)}`).join(",")}}`;
}

/**
 * Runs the actions of the active handlers of `message.event` on its payload (a handler whose condition does not hold
 * is passed over, its actions recorded SKIPPED; an action that cannot be taken, such as no such workflow or task or a
 * start refused, is logged and recorded FAILED, and the others go on, as in Conductor), then records what each did
 * (see `EventRecordRepository`). Workflows its actions start get `baseUrl` for their callback URLs.
 * Throws when D1 or an object cannot be reached: publishing again repeats the actions not kept in `progress` (all of
 * them without it) harmlessly (a start repeats under the same id, a task already completed refuses a second
 * completion) and rewrites the record; an action `progress` holds the record of is not taken again.
 */
export async function publishEvent(context: PublishContext, message: EventMessage, baseUrl: string, progress?: ActionProgress): Promise<void> {
  const { event, messageId, payload } = message;
  const records: ActionRecord[] = [];
  // A condition or action that fails on a masked value may quote it: its record and log line show `***` for it.
  const hidden = maskedTexts(payload, masked(payload, maskedKeysWith(message.maskedFields)));
  const scrub = (text: string): string => reasonMaskedOf(text, hidden);
  for (const handler of await new EventHandlerRepository(context.env.DB).forEvent(event, true)) {
    const condition = await conditionOutcome(context, handler, payload, scrub);
    const keys = await actionKeys(handler, message.actionKeys === "content");
    for (const [index, action] of handler.actions.entries()) {
      const key = keys[index]!;
      const record = { handler: handler.name, index, action: action.action };
      const taken = progress?.taken(handler.name, key);
      if (taken !== undefined) {
        // At its place now: the record's id is made of it, and another action may have the place it was taken at.
        records.push({ ...taken, index });
        continue;
      }
      if (!condition.holds) {
        records.push({ ...record, status: "SKIPPED", statusDescription: condition.why, output: {} });
        continue;
      }
      const actionPayload = action.expandInlineJSON ? (expandInlineJson(payload) as JsonObject) : payload;
      const outcome = await runAction(context.env, baseUrl, action, actionPayload, { event, messageId, handler: handler.name, key });
      let done: ActionRecord;
      if (outcome.done) {
        done = { ...record, status: "COMPLETED", output: outcome.output ?? {} };
      } else {
        const why = scrub(outcome.why);
        console.error(JSON.stringify({ msg: "event handler action not taken", handler: handler.name, event, action: action.action, reason: why }));
        // Conductor's DefaultEventProcessor puts the error in the output as `exception`.
        done = { ...record, status: "FAILED", statusDescription: why, output: { exception: why } };
      }
      records.push(done);
      progress?.keep(done, key);
    }
  }
  // After the actions (a repeated publication repeats them harmlessly, and rewrites this record).
  await new EventRecordRepository(context.env.DB).record(shownRecord({ id: messageId, event, payload, actions: records }, message.maskedFields), Date.now());
}

/**
 * `message` with the `maskedFields` of `publisher` (the definition of the execution that owes it) when it carries none:
 * a message stored before messages carried them (one owed across the deploy that added them) is recorded masked as a
 * newer one is. The execution keeps the definition its EVENT task ran under, so they are the same fields.
 */
export function withPublisherMaskedFields(message: EventMessage, publisher: WorkflowDef | undefined): EventMessage {
  const fields = publisher?.maskedFields;
  if (message.maskedFields !== undefined || fields === undefined || fields.length === 0) return message;
  return { ...message, maskedFields: [...fields] };
}

/**
 * The record of a message as the API shows it: its payload, and what its actions output, with the values of
 * `_secrets`, `_masked` and the publisher's `maskedFields` as `***`, as the publishing task's output shows them (Orkes'
 * masking parameters are hidden "in workflow executions": the record is read through the API as they are). The
 * handlers acted on the real values.
 */
function shownRecord(record: MessageRecord, maskedFields: readonly string[] | undefined): MessageRecord {
  const keys = maskedKeysWith(maskedFields);
  return { ...record, payload: masked(record.payload, keys), actions: record.actions.map((action) => ({ ...action, output: masked(action.output, keys) })) };
}

/**
 * Whether `handler`'s condition holds for `payload` (JavaScript over `$`, or with `evaluatorType` `value-param` the
 * payload's top-level field it names), and why not (through `scrub`, which masks the values the payload shows masked);
 * one that fails to run does not. As Conductor's
 * DefaultEventProcessor: over the payload with its inline JSON text expanded (`$.msg.type` of a `msg` holding
 * '{"type": …}'), holding only for `true` or a number above 0 (ScriptEvaluator.toBoolean), not any truthy value.
 */
async function conditionOutcome(context: PublishContext, handler: EventHandler, payload: JsonObject, scrub: (text: string) => string): Promise<{ holds: true } | { holds: false; why: string }> {
  // Only an empty condition is none, as Conductor's StringUtils.isNotEmpty: one of spaces is evaluated, gives no true, and so holds not.
  if (handler.condition === undefined || handler.condition === "") return { holds: true };
  const evaluatorType = handler.evaluatorType === "value-param" ? "value-param" : "javascript";
  const outcome = evaluateWith(evaluatorType, handler.condition, expandInlineJson(payload) as JsonObject, await context.scripts());
  if (!outcome.ok) {
    const error = scrub(outcome.error);
    console.error(JSON.stringify({ msg: "event handler condition failed", handler: handler.name, error }));
    return { holds: false, why: `condition failed: ${error}` };
  }
  const value = outcome.value;
  return value === true || (typeof value === "number" && value > 0) ? { holds: true } : { holds: false, why: scrub(`condition is not true (it gave ${JSON.stringify(value) ?? "undefined"}; only true or a number above 0 holds)`) };
}

/** Where an action comes from: its event, the message (the EVENT task's id), its handler and its key there (see {@link actionKeys}). */
interface ActionSource {
  event: string;
  messageId: string;
  handler: string;
  key: string;
}

async function runAction(env: Env, baseUrl: string, action: EventAction, payload: JsonObject, source: ActionSource): Promise<ActionOutcome> {
  const stamp = eventStamp(source.messageId, source.event);
  switch (action.action) {
    case "start_workflow":
      return startWorkflow(env, baseUrl, action.start_workflow!, payload, stamp, source);
    case "complete_task":
    case "fail_task":
      return updateTask(env, action[action.action]!, action.action === "complete_task" ? "COMPLETED" : "FAILED", payload, stamp, source);
    case "terminate_workflow": {
      const params = withPayload(action.terminate_workflow!, payload) as JsonObject;
      // Cut as a TERMINATE task's own reason is: a payload's value may be as large as a task's input.
      const given = payloadText(params["terminationReason"]);
      const reason = given === undefined ? undefined : cutText(given, MAX_TASK_REASON_LENGTH);
      return commandOutcome(env, params["workflowId"], { type: "terminate", ...(reason === undefined ? {} : { reason }) });
    }
    case "update_workflow_variables": {
      const params = withPayload(action.update_workflow_variables!, payload) as JsonObject;
      const variables = params["variables"];
      if (variables === null || typeof variables !== "object" || Array.isArray(variables)) return { done: false, why: "variables are not an object" };
      return commandOutcome(env, params["workflowId"], { type: "updateVariables", variables });
    }
  }
}

async function startWorkflow(
  env: Env,
  baseUrl: string,
  params: NonNullable<EventAction["start_workflow"]>,
  payload: JsonObject,
  stamp: JsonObject,
  source: ActionSource,
): Promise<ActionOutcome> {
  const input = { ...(withPayload(params.input ?? {}, payload) as JsonObject), ...stamp };
  // The API's starts bound their input where it arrives; this one is the action's template over the payload, which may
  // copy the payload's values many times over: bounded here, before anything is started.
  const limit = serviceConfig(env).engine.maxPayloadBytes;
  const inputBytes = oversize(input, limit);
  if (inputBytes !== undefined) return { done: false, why: oversizeReason("The workflow input", inputBytes, limit) };
  const correlationId = params.correlationId === undefined ? undefined : payloadText(withPayload(params.correlationId, payload));
  // Before anything is started: one the API's starts refuse (too long, a lone surrogate) no correlation lookup could find.
  const refused = correlationId === undefined ? undefined : correlationIdProblem("correlationId", correlationId);
  if (refused !== undefined) return { done: false, why: refused };
  const idempotencyKey = params.idempotencyKey === undefined ? undefined : payloadText(withPayload(params.idempotencyKey, payload));
  // The same for every delivery of this message to this action: a repeated dispatch finds it started.
  const workflowId = await actionWorkflowId(source);
  const started = await startExecution(env, {
    name: params.name,
    ...(params.version === undefined ? {} : { version: params.version }),
    input,
    ...(correlationId === undefined ? {} : { correlationId }),
    ...(params.taskToDomain === undefined ? {} : { taskToDomain: params.taskToDomain }),
    // No priority: Orkes starts a handler's workflow at the default priority (0) always
    // (https://orkes.io/content/workflow-priority), and Conductor's StartWorkflow action has no such field; `priority`
    // is taken at registration and kept, so handlers written for it still register and read back as saved.
    // RETURN_EXISTING, the only strategy taken: another message's execution with the key is the answer.
    ...(idempotencyKey === undefined ? {} : { idempotencyKey, idempotencyStrategy: "RETURN_EXISTING" as const }),
    baseUrl,
    workflowId,
    // As Conductor's start_workflow action, which starts it with its event (the Workflow's `event`).
    event: source.event,
  });
  if (started.ok) return { done: true, output: { workflowId: started.workflowId } };
  if (started.code === "ALREADY_STARTED") return { done: true, output: { workflowId } };
  return { done: false, why: started.message };
}

/**
 * complete_task and fail_task: the task and its output as {@link taskAction} says, which replaces the task's. The update names its action (as an
 * UPDATE_TASK's does), so that the same message delivered again (a publication repeated after an eviction) finds it
 * applied, and neither completes a loop's next iteration of that reference name nor fails a retry.
 */
async function updateTask(env: Env, params: TaskActionParams, status: "COMPLETED" | "FAILED", payload: JsonObject, stamp: JsonObject, source: ActionSource): Promise<ActionOutcome> {
  const { workflowId, taskId, taskRefName, reason, output } = taskAction(params, payload, stamp);
  const holder = await taskHolder(env, workflowId, taskId);
  if (holder === undefined && workflowId === undefined && taskId !== undefined) return { done: false, why: `no workflow holds task ${taskId}` };
  const found = stubOf(env, holder);
  if ("why" in found) return { done: false, why: found.why };
  const { stub } = found;
  // The output replaces the task's (what earlier IN_PROGRESS reports gave it), as Conductor's
  // SimpleActionProcessor.completeTask sets it (`taskModel.setOutputData(replaced)`).
  const from = { byTask: `event:${source.messageId}/${source.handler}/${source.key}`, replaceOutput: true, ...(status === "FAILED" && reason !== undefined ? { reason } : {}) };
  const updated =
    taskId !== undefined
      ? await stub.updateTask(taskId, status, output, { from, ...(from.reason === undefined ? {} : { reason: from.reason }) })
      : taskRefName !== undefined
        ? await stub.updateTaskByRef(taskRefName, status, output, from)
        : undefined;
  if (updated === undefined) return { done: false, why: "no taskRefName or taskId in the payload" };
  // Conductor's DefaultEventProcessor records what SimpleActionProcessor.completeTask gave the task as the action's output.
  return updated.ok ? { done: true, output } : { done: false, why: updated.error.message };
}

/**
 * The workflow whose task an action updates. A task id names its task whatever `workflowId` says, as Conductor's
 * SimpleActionProcessor.completeTask reads the task by its id alone (`getTask(taskId)`): its workflow is found from it
 * (through the search index, see task-lookup.ts) unless `workflowId` is the one its id's prefix names, which needs no
 * look-up. A `workflowId` the look-up cannot confirm (a task older than the prefixes, a row not written yet) is asked.
 */
async function taskHolder(env: Env, workflowId: string | undefined, taskId: string | undefined): Promise<string | undefined> {
  if (taskId === undefined) return workflowId;
  const prefix = executionIdPrefix(taskId);
  if (workflowId !== undefined && (prefix === undefined || workflowId.toLowerCase().startsWith(prefix))) return workflowId;
  return (await lookUpTask(env, taskId))?.workflowId ?? workflowId;
}

/** terminate_workflow and update_workflow_variables: the workflow's own command, as the API gives it. */
async function commandOutcome(env: Env, workflowId: JsonValue | undefined, command: WorkflowCommand): Promise<ActionOutcome> {
  const found = stubOf(env, workflowId);
  if ("why" in found) return { done: false, why: found.why };
  const outcome = await found.stub.command(command);
  return outcome.ok ? { done: true } : { done: false, why: outcome.error.message };
}

/** The execution named by `workflowId`, a value of the payload; why not when it names none. */
function stubOf(env: Env, workflowId: JsonValue | undefined): { stub: ReturnType<typeof executionStub> } | { why: string } {
  const id = payloadText(workflowId);
  if (id === undefined) return { why: "no workflowId in the payload" };
  try {
    return { stub: executionStub(env, id) };
  } catch {
    return { why: `no workflow ${id}` };
  }
}

/** A UUID derived from the action's source (SHA-256, shaped as version 4), so that the same delivery starts one workflow. */
async function actionWorkflowId(source: ActionSource): Promise<string> {
  return uuidFromDigest(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${source.messageId}/${source.handler}/${source.key}`))), 4);
}
