import * as v from "valibot";
import { unfollowablePath } from "../engine/event-params";
import { DOT_SEGMENT_MESSAGE, holdsLoneSurrogate, isDotSegment, LONE_SURROGATE_MESSAGE } from "../engine/http-syntax";
import type { JsonValue } from "../engine/model";
import { childPath, type ValidationIssue } from "../engine/validation-issue";
import { ApiError, notFound, validationError } from "./http/errors";
import { boundedListing, MAX_LISTING_CHARS } from "./bounded-listing";
import { clientRequestObject, CorrelationId, issuesToValidationErrors, jacksonBoolean, jacksonInteger, jsonData, parseOrThrow, Priority, TaskToDomain, WorkflowVersion } from "./schemas";

/** Longest event handler name. */
const MAX_HANDLER_NAME_LENGTH = 255;

/**
 * Handler names another route of `/api/event` takes where a handler's own route would read them, so that a handler so
 * named, once registered, could not be deleted or read by name: refused, as schedules named "tags" are.
 */
const UNREACHABLE_HANDLER_NAMES: Readonly<Record<string, string>> = {
  handler: "DELETE /api/event/handler is Orkes' event handler statistics, so the handler could not be deleted",
  handleIncomingEvent: "DELETE /api/event/handleIncomingEvent is Orkes' incoming events, so the handler could not be deleted",
  queue: "DELETE /api/event/queue and /api/event/queue/tags are Orkes' event queue configuration, so the handler could not be deleted or tagged",
  tags: "GET /api/event/handler/tags reads the tags of the handler named handler, so the handler could not be read by name",
};

/** The evaluators of a handler's `condition` (Conductor's): JavaScript, or `value-param`, a field of the payload. */
export const EVENT_EVALUATOR_TYPES = ["javascript", "graaljs", "value-param"] as const;

/** The actions this service runs (Conductor's). */
export const EVENT_ACTIONS = ["start_workflow", "complete_task", "fail_task", "terminate_workflow", "update_workflow_variables"] as const;

const text = (what: string) => v.pipe(v.string(`must be ${what}`), v.minLength(1, "must not be empty"), v.maxLength(1024, "must be at most 1024 characters"));

/** An optional {@link text}, "" or null meaning none: the Go SDK's client writes every field it has, "" when unset. */
const optionalText = (what: string) =>
  v.pipe(
    v.nullish(v.string(`must be ${what}`)),
    v.transform((value) => (value === "" || value === null ? undefined : value)),
    v.optional(text(what)),
  );

/**
 * Conductor's `TaskDetails` of complete_task and fail_task: the task, by workflow and reference name, or by id (the
 * workflow then found from it); fail_task's `reasonForIncompletion`. Here, as in every object of a handler, a field given
 * as null is unset, as Conductor's Jackson reads it: .NET clients (conductor-sharp's EventHandlerDefinition) and
 * hand-built requests write every unset field as null (`"condition": null`, `"fail_task": null`).
 */
const TaskDetails = clientRequestObject({
  workflowId: optionalText("a workflow id or a ${...} of the payload"),
  taskRefName: optionalText("a task reference name or a ${...} of the payload"),
  taskId: optionalText("a task id or a ${...} of the payload"),
  output: v.optional(jsonData),
  reasonForIncompletion: optionalText("a reason or a ${...} of the payload"),
});

/**
 * Conductor's `StartWorkflow` of start_workflow, with Orkes' StartWorkflowRequest fields: an `idempotencyKey` (a
 * `${...}` of the payload too) that starts one execution for every message giving the same key, and `priority`, taken
 * and kept but not used: a handler's workflow starts at the default priority, as Orkes' do (see dispatch/event.ts).
 */
const StartWorkflow = clientRequestObject({
  name: v.pipe(v.string("must be a string"), v.trim(), v.minLength(1, "must not be empty"), v.check((name: string) => !isDotSegment(name), DOT_SEGMENT_MESSAGE)),
  // Digits too, and "" for the latest, as Orkes' docs write it ("version": "1", "version": "") and Jackson reads it into Conductor's Integer.
  version: jacksonInteger(WorkflowVersion),
  input: v.optional(jsonData),
  correlationId: v.optional(CorrelationId),
  taskToDomain: v.optional(TaskToDomain),
  priority: jacksonInteger(Priority),
  idempotencyKey: optionalText("an idempotency key or a ${...} of the payload"),
  // A message delivered again must find what it started: only RETURN_EXISTING answers so.
  idempotencyStrategy: v.optional(v.literal("RETURN_EXISTING", "must be RETURN_EXISTING: a message delivered again must find the execution its key started")),
});

/** Conductor's `TerminateWorkflow` of terminate_workflow. */
const TerminateWorkflow = clientRequestObject({
  workflowId: text("a workflow id or a ${...} of the payload"),
  terminationReason: v.optional(v.pipe(v.string("must be a string"), v.maxLength(1024, "must be at most 1024 characters"))),
});

/** Conductor's `UpdateWorkflowVariables` of update_workflow_variables: merged as `POST /api/workflow/{id}/variables` merges. */
const UpdateWorkflowVariables = clientRequestObject({
  workflowId: text("a workflow id or a ${...} of the payload"),
  variables: jsonData,
  appendArray: v.optional(v.literal(false, "is not supported: variables are merged key by key, an array given replaces the one there")),
});

/** One of a handler's actions; the field named after it holds its parameters. */
const EventAction = v.pipe(
  clientRequestObject({
    action: v.picklist(EVENT_ACTIONS, `must be one of ${EVENT_ACTIONS.join(", ")}`),
    start_workflow: v.optional(StartWorkflow),
    complete_task: v.optional(TaskDetails),
    fail_task: v.optional(TaskDetails),
    terminate_workflow: v.optional(TerminateWorkflow),
    update_workflow_variables: v.optional(UpdateWorkflowVariables),
    expandInlineJSON: v.optional(jacksonBoolean("must be a boolean"), false),
  }),
  v.check((action) => action[action.action] !== undefined, "must give the parameters of its action under the action's name (start_workflow, complete_task, …)"),
  v.check((action) => {
    const task = action.action === "complete_task" ? action.complete_task : action.action === "fail_task" ? action.fail_task : undefined;
    return task === undefined || task.taskId !== undefined || (task.taskRefName !== undefined && task.workflowId !== undefined);
  }, "must name the task to complete or fail by workflowId and taskRefName, or by taskId"),
  v.check(
    (action) => unfollowablePath(action[action.action] as JsonValue) === undefined,
    (issue) => `has \${${unfollowablePath((issue.input as Record<string, JsonValue>)[(issue.input as { action: string }).action] ?? null)}}, a path naming several values or computing one (wildcards [*], deep scan .., filters, functions): name one value, such as \${items[0].sku} or \${items[-1].sku}`,
  ),
);

/**
 * Conductor's `EventHandler`: when an event named `event` is published, and its `condition` (JavaScript over `$`, the
 * payload, or with `evaluatorType` `value-param` the name of a payload field) holds, run `actions` in order. `active` defaults to false, as Conductor's (null too: Jackson leaves a primitive
 * boolean given as null false).
 */
export const EventHandlerSchema = clientRequestObject({
  name: v.pipe(
    v.string("must be a string"),
    v.minLength(1, "must not be empty"),
    v.maxLength(MAX_HANDLER_NAME_LENGTH, `must be at most ${MAX_HANDLER_NAME_LENGTH} characters`),
    v.regex(/^[A-Za-z0-9_.:-]*$/, "may hold only letters, digits, '_', '-', '.' and ':'"),
  ),
  event: v.pipe(
    v.string("must be a string"),
    v.regex(
      /^conductor:[^:]+(:.+)?$/,
      "must be a Conductor internal event: conductor:<workflow name>:<queue or task reference name> (what EVENT tasks and status listeners with a sink publish) or conductor:<queue> (the status listeners' _callbackSuccessQueue, _callbackFailureQueue and _callbackFinalizeQueue); this service has no sqs, kafka or other queues",
    ),
    v.maxLength(1024, "must be at most 1024 characters"),
    // Handlers are listed by event in a path (`GET /api/event/{event}`), which cannot carry half a character.
    v.check((event: string) => !holdsLoneSurrogate(event), LONE_SURROGATE_MESSAGE),
  ),
  description: v.optional(v.string("must be a string")),
  condition: v.optional(v.pipe(v.string("must be a string"), v.maxLength(10_000, "must be at most 10000 characters"))),
  // Conductor's DefaultEventProcessor runs the condition with the evaluator of this name: `value-param` (its
  // ValueParamEvaluator) reads the payload's top-level field the condition names, the others run it as JavaScript.
  evaluatorType: v.optional(v.picklist(EVENT_EVALUATOR_TYPES, `must be one of ${EVENT_EVALUATOR_TYPES.join(", ")}`)),
  active: v.optional(jacksonBoolean("must be a boolean"), false),
  // May be empty, as Orkes takes it (its JavaScript client's tests create handlers so): a handler that does nothing yet.
  actions: v.pipe(v.array(EventAction, "must be an array"), v.maxLength(100, "must hold at most 100 actions")),
});

/** An event handler as stored and answered. */
export type EventHandler = v.InferOutput<typeof EventHandlerSchema>;
/** One of its actions. */
export type EventAction = EventHandler["actions"][number];

/** `body` as an event handler, or a 400 listing every problem. */
export function parseEventHandler(body: unknown): EventHandler {
  return parseOrThrow(EventHandlerSchema, body, "event handler");
}

/**
 * Why a new handler may not be named `name`, or undefined: a name its routes could not reach once registered (a dot
 * segment a URL resolves away, a name another `/api/event` route takes). Checked when a handler is added, not when one
 * is updated: one stored so before this rule must stay updatable, since an update (`active: false`) is the only way to
 * stop a handler that cannot be deleted.
 */
function unreachableNameReason(name: string): string | undefined {
  if (isDotSegment(name)) return DOT_SEGMENT_MESSAGE;
  if (Object.hasOwn(UNREACHABLE_HANDLER_NAMES, name)) return `must not be "${name}": ${UNREACHABLE_HANDLER_NAMES[name]}`;
  return undefined;
}

/** Most handlers one `POST /api/event` adds. */
export const MAX_EVENT_HANDLERS_PER_REQUEST = 100;

/**
 * The body of `POST /api/event`: one handler (Conductor's) or a list of them (what Orkes' clients send), each checked,
 * every problem reported (`[i].` paths for a list), no name twice.
 */
export function parseEventHandlers(body: unknown): EventHandler[] {
  if (!Array.isArray(body)) {
    const handler = parseEventHandler(body);
    const unreachable = unreachableNameReason(handler.name);
    if (unreachable !== undefined) throw validationError("Invalid event handler", [{ path: "name", message: unreachable }]);
    return [handler];
  }
  if (body.length === 0 || body.length > MAX_EVENT_HANDLERS_PER_REQUEST) {
    throw validationError("Invalid event handlers", [{ path: "(body)", message: `must be an event handler or a non-empty list of at most ${MAX_EVENT_HANDLERS_PER_REQUEST}` }]);
  }
  const handlers: EventHandler[] = [];
  const problems: ValidationIssue[] = [];
  body.forEach((item, index) => {
    const parsed = v.safeParse(EventHandlerSchema, item);
    if (!parsed.success) problems.push(...issuesToValidationErrors(parsed.issues, childPath("", index)));
    else {
      const unreachable = unreachableNameReason(parsed.output.name);
      if (unreachable === undefined) handlers.push(parsed.output);
      else problems.push({ path: childPath(childPath("", index), "name"), message: unreachable });
    }
  });
  const names = handlers.map((handler) => handler.name);
  const twice = names.filter((name, index) => names.indexOf(name) !== index);
  for (const name of new Set(twice)) problems.push({ path: "(body)", message: `event handler ${JSON.stringify(name)} appears twice` });
  if (problems.length > 0) throw validationError("Invalid event handlers", problems);
  return handlers;
}

/** Event handlers in D1, by name. */
export class EventHandlerRepository {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /** Every handler, by name: at most {@link MAX_LISTING_CHARS} of them (a 413 beyond, see {@link boundedListing}). */
  async list(): Promise<EventHandler[]> {
    const rows = await boundedListing<{ handler: string }>(
      this.#db,
      `SELECT name, handler, length(handler) AS listed_chars FROM event_handlers`,
      "listed.name",
      [],
      (chars) => `The event handlers come to ${chars} characters, over the ${MAX_LISTING_CHARS} one listing answers; ask for fewer: GET /api/event/{event} (one event's), or GET /api/event/handler/{name} (one)`,
    );
    return rows.map((row) => JSON.parse(row.handler) as EventHandler);
  }

  /** The handlers of `event` (only the active ones when `activeOnly`), by name. */
  async forEvent(event: string, activeOnly: boolean): Promise<EventHandler[]> {
    const { results } = await this.#db
      .prepare(`SELECT handler FROM event_handlers WHERE event = ?${activeOnly ? " AND active = 1" : ""} ORDER BY name`)
      .bind(event)
      .all<{ handler: string }>();
    return results.map((row) => JSON.parse(row.handler) as EventHandler);
  }

  /** The handler named `name`, or a 404. */
  async get(name: string): Promise<EventHandler> {
    const row = await this.#db.prepare(`SELECT handler FROM event_handlers WHERE name = ?`).bind(name).first<{ handler: string }>();
    if (!row) throw notFound(`No event handler named ${name}`);
    return JSON.parse(row.handler) as EventHandler;
  }

  /** Adds `handlers`, all or none (one D1 batch, `alongside` statements included: their tags); a 409 when one of their names exists. */
  async add(handlers: readonly EventHandler[], alongside: readonly D1PreparedStatement[] = []): Promise<void> {
    const now = Date.now();
    const insert = this.#db.prepare(`INSERT INTO event_handlers (name, event, active, handler, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?)`);
    try {
      await this.#db.batch([...handlers.map((handler) => insert.bind(handler.name, handler.event, handler.active ? 1 : 0, JSON.stringify(handler), now, now)), ...alongside]);
    } catch (error) {
      if (!String(error).includes("UNIQUE constraint failed")) throw error;
      const names = handlers.map((handler) => handler.name);
      const { results } = await this.#db
        .prepare(`SELECT name FROM event_handlers WHERE name IN (${names.map(() => "?").join(", ")})`)
        .bind(...names)
        .all<{ name: string }>();
      throw new ApiError(409, "CONFLICT", `Event handlers named ${results.map((row) => row.name).join(", ")} exist (update one with PUT /api/event)`);
    }
  }

  /**
   * Replaces the handler of `handler`'s name, with `alongside` statements (its tags, which write nothing for a handler
   * that does not exist) in the same batch; a 404 when there is none.
   */
  async update(handler: EventHandler, alongside: readonly D1PreparedStatement[] = []): Promise<void> {
    const [updated] = await this.#db.batch([
      this.#db
        .prepare(`UPDATE event_handlers SET event = ?, active = ?, handler = ?, update_time = ? WHERE name = ?`)
        .bind(handler.event, handler.active ? 1 : 0, JSON.stringify(handler), Date.now(), handler.name),
      ...alongside,
    ]);
    if (updated!.meta.changes === 0) throw notFound(`No event handler named ${handler.name}`);
  }

  /** Removes the handler named `name`, its tags and the record of what it did; a 404 when there is none. */
  async remove(name: string): Promise<void> {
    const [deleted] = await this.#db.batch([
      this.#db.prepare(`DELETE FROM event_handlers WHERE name = ?`).bind(name),
      this.#db.prepare(`DELETE FROM metadata_tags WHERE target_type = 'EVENT_HANDLER' AND target_name = ?`).bind(name),
      this.#db.prepare(`DELETE FROM event_executions WHERE handler_name = ?`).bind(name),
    ]);
    if (deleted!.meta.changes === 0) throw notFound(`No event handler named ${name}`);
  }
}
