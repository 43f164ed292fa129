import type { NewExecution } from "../engine/decider";
import type { SettledWorkflow } from "../actors/workflow-execution";
import type { StartIdempotencyStrategy } from "../engine/tasks/start-workflow/request";
import type { JsonObject, WorkflowDef, WorkflowStatus, WorkflowTestPlan } from "../engine/model";
import type { ValidationIssue } from "../engine/validation-issue";
import { withInputTemplate, workflowInputOversizeReason } from "../engine/workflow-input";
import { storedDefinitionOversizeReason } from "../engine/limits";
import { serviceConfig } from "./config";
import { DefinitionRepository, workflowNotFoundMessage } from "./definitions";
import { withTaskDefs } from "./task-defs";
import { EnvironmentRepository } from "./environment";
import { environmentVariablesOf } from "../engine/environment";
import { executionStub, orOnOlderCode, retryingExecutionCall, type ExecutionStub } from "./executions";
import { isTransientObjectError } from "./object-retry";
import { SchemaRepository, describeSchema, schemaIssues } from "./json-schemas";
import { MAX_IDEMPOTENCY_KEY_LENGTH } from "./schemas";

/** What a start asks for, from the API or from a parent's SUB_WORKFLOW task. */
export interface StartOptions {
  name: string;
  version?: number;
  /**
   * An inline definition (Conductor's `StartWorkflowRequest.workflowDef`), already validated: run as given instead of
   * the one registered under `name` (which it names), and kept by the execution as any definition is.
   */
  definition?: WorkflowDef;
  input: JsonObject;
  correlationId?: string;
  priority?: number;
  taskToDomain?: Record<string, string>;
  idempotencyKey?: string;
  /** What a key already used does: answer that execution, refuse, or refuse only while it is RUNNING or PAUSED. */
  idempotencyStrategy?: StartIdempotencyStrategy;
  parentWorkflowId?: string;
  parentWorkflowTaskId?: string;
  /**
   * What starts it, a START_WORKFLOW task (`<workflowId>/<taskId>`) or a webhook delivery's event
   * (`webhook:<id>/<digest>/<index>`, under the id the delivery claimed): a repeated start from there finds it started.
   */
  startedByTask?: string;
  depth?: number;
  baseUrl: string;
  /** The id to use; a parent picks its child's id in advance so a repeated start finds the same child. */
  workflowId?: string;
  /** What the starter may start, bounding the execution's SUB_WORKFLOW tasks (see `WorkflowExecution.startScopes`). */
  startScopes?: string[];
  /** Who starts it (see `WorkflowExecution.createdBy`). */
  createdBy?: string;
  /** The event whose handler starts it (see `WorkflowExecution.event`). */
  event?: string;
  /** Makes it a test run (`POST /api/workflow/test`, and the children of one): see `WorkflowExecution.test`. */
  test?: WorkflowTestPlan;
  /** Set on an execution a test run starts that keeps its random domain: see `WorkflowExecution.testRunDomain`. */
  testRunDomain?: string;
  /** Wait up to this long for the execution to finish or block, and answer its Workflow JSON (execute endpoint). */
  waitMs?: number;
  /** With `waitMs`: stop waiting, too, once a task of one of these reference names has completed (`waitUntilTaskRef`). */
  waitUntilTaskRefs?: string[];
}

/**
 * Why a start did not happen (or, for execute, why there is nothing to answer: `EXECUTION_REMOVED`, removed while
 * it was waited for). `INPUT_TOO_LARGE`: the input with the definition's inputTemplate defaults is over MAX_PAYLOAD_BYTES.
 * `INPUT_INVALID`: that input does not match the definition's enforced `inputSchema` (or the schema is gone), or the
 * idempotency key is longer than {@link MAX_IDEMPOTENCY_KEY_LENGTH} (one taken from an event or an expression).
 * `DEFINITION_TOO_LARGE`: the definition with the registered task definitions of its tasks copied in is over
 * MAX_STORED_DEFINITION_BYTES, more than the execution's one row for it holds.
 */
export type StartRefusalCode = "WORKFLOW_NOT_FOUND" | "VERSION_NOT_FOUND" | "ALREADY_STARTED" | "EXECUTION_REMOVED" | "INPUT_TOO_LARGE" | "INPUT_INVALID" | "DEFINITION_TOO_LARGE";

/** The outcome of a start. `existing` is true when an idempotency key returned an earlier execution. */
export type StartOutcome =
  /** `version`: the definition's version the execution started with, when this call started it (not `existing`). */
  | { ok: true; workflowId: string; existing: boolean; version?: number; workflowJson?: string; workflowStatus?: WorkflowStatus; timedOut?: boolean; variablesJson?: string }
  | { ok: false; code: StartRefusalCode; message: string; issues?: ValidationIssue[] };

/** The id holding a workflow name's idempotency key. */
const KEY_HOLDER_SQL = `SELECT workflow_id FROM idempotency_keys WHERE workflow_name = ? AND idempotency_key = ?`;

/**
 * Claims an idempotency key for `workflowId`, atomically: answers the id holding the key, which is
 * `workflowId` itself when this call claimed it.
 */
async function claimIdempotencyKey(db: D1Database, workflowName: string, key: string, workflowId: string): Promise<string> {
  const [, holder] = await db.batch([
    db
      .prepare(`INSERT INTO idempotency_keys (workflow_name, idempotency_key, workflow_id, create_time) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`)
      .bind(workflowName, key, workflowId, Date.now()),
    db.prepare(KEY_HOLDER_SQL).bind(workflowName, key),
  ]);
  return (holder!.results[0] as { workflow_id: string }).workflow_id;
}

/**
 * A key held by `holder`, for FAIL_ON_RUNNING (`finishedToo`) or FAIL: hands the key to `workflowId` when the holder
 * has finished (FAIL_ON_RUNNING only) or does not exist (its claimer's start is still on its way, failed, or died with
 * it), so a new execution starts; refuses while the holder runs or is paused (or, FAIL, exists at all), and when a
 * concurrent request took the key over first (compare-and-set: never two new executions for one key). A holder not
 * started is first fenced off in its object (`abandonStart`): a start of it still on its way is refused from then on
 * (its starter reads the key again: see {@link startExecution}), or, landed meanwhile, is the one the strategy judges.
 * So a 409 means an execution holds the key, as Conductor's contract has it, never a start that may never come.
 */
async function takeOverKey(env: Env, workflowName: string, key: string, holder: string, workflowId: string, finishedToo: boolean): Promise<StartOutcome | undefined> {
  const json = await retryingExecutionCall(env, holder, (stub) => stub.getWorkflowJson(false));
  let status = json === null ? undefined : (JSON.parse(json) as { status: string }).status;
  const refused = (why: string): StartOutcome => keyHeldRefusal(workflowName, key, holder, why);
  // An object on the code before the fence cannot be fenced: the start is refused, as one being started was there.
  if (status === undefined) status = (await retryingExecutionCall(env, holder, (stub) => orOnOlderCode("abandonStart", () => stub.abandonStart(), () => "being started"))) ?? undefined;
  if (status === "being started") return refused("is being started");
  if (status !== undefined && !finishedToo) return refused("was already started");
  if (status === "RUNNING" || status === "PAUSED") return refused(`is ${status}`);
  const moved = await env.DB.prepare(`UPDATE idempotency_keys SET workflow_id = ?, create_time = ? WHERE workflow_name = ? AND idempotency_key = ? AND workflow_id = ?`)
    .bind(workflowId, Date.now(), workflowName, key, holder)
    .run();
  if (moved.meta.changes === 1) return undefined;
  // Moved meanwhile by a concurrent start: the 409 names the execution it went to, not the claim given up (never run).
  return keyHeldRefusal(workflowName, key, (await keyHolder(env.DB, workflowName, key)) ?? holder, "was just started by another request");
}

/** A start refused because execution `holder` has the key: Conductor's words first (its clients and tests look for them), then which execution holds it, and how. */
function keyHeldRefusal(workflowName: string, key: string, holder: string, why: string): StartOutcome & { ok: false } {
  return { ok: false, code: "ALREADY_STARTED", message: `Workflow with the idempotency key ${key} already exists: ${workflowName} ${holder} ${why}` };
}

/** The id holding idempotency key `key` of workflow `workflowName`, or null when none does. */
async function keyHolder(db: D1Database, workflowName: string, key: string): Promise<string | null> {
  const row = await db.prepare(KEY_HOLDER_SQL).bind(workflowName, key).first<{ workflow_id: string }>();
  return row?.workflow_id ?? null;
}

/**
 * How many times a RETURN_EXISTING start reads its key again after the execution it was starting was given up for
 * another's (see `takeOverKey`), each time finding that one, unless concurrent FAIL starts keep handing the key on.
 */
const KEY_READS = 3;

/**
 * Refuses an input that does not match the definition's enforced `inputSchema` (the input a start gives it, with the
 * `inputTemplate` defaults), each problem at its path under `input`; also one whose schema is no longer registered.
 */
async function inputSchemaRefusal(env: Env, definition: WorkflowDef, input: JsonObject): Promise<StartOutcome | undefined> {
  const reference = definition.inputSchema;
  if (reference === undefined || definition.enforceSchema === false) return undefined;
  const schema = await new SchemaRepository(env.DB).find(reference.name, reference.version);
  if (schema === null) return { ok: false, code: "INPUT_INVALID", message: `Workflow ${definition.name}'s input ${describeSchema(reference)} is not registered`, issues: [] };
  const issues = schemaIssues(schema.data, withInputTemplate(definition, input), "input");
  if (issues.length === 0) return undefined;
  const first = `${issues[0]!.path}: ${issues[0]!.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""}`;
  return { ok: false, code: "INPUT_INVALID", message: `The input does not match workflow ${definition.name}'s ${describeSchema(reference)}: ${first}`, issues };
}

/**
 * Resolves the definition (the latest version when none is given), applies the idempotency key,
 * and starts the execution's object. Concurrent identical requests with one key start exactly one
 * execution: every caller gets its id.
 */
export async function startExecution(env: Env, options: StartOptions): Promise<StartOutcome> {
  const key = options.idempotencyKey;
  if (key !== undefined && key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    const message = `The idempotency key is ${key.length} characters long; at most ${MAX_IDEMPOTENCY_KEY_LENGTH}`;
    return { ok: false, code: "INPUT_INVALID", message, issues: [{ path: "idempotencyKey", message: `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` }] };
  }
  const registered = options.definition ?? (await new DefinitionRepository(env.DB).findToStart(options.name, options.version));
  if (!registered) {
    // Conductor's words (see workflowNotFoundMessage), as its start by name answers them.
    const message = workflowNotFoundMessage(options.name, options.version);
    return { ok: false, code: options.version === undefined ? "WORKFLOW_NOT_FOUND" : "VERSION_NOT_FOUND", message };
  }
  const definition = await withTaskDefs(env.DB, registered);
  // Its tasks' registered task definitions may each be as large as a request: together they made the start's save fail.
  const tooLarge = storedDefinitionOversizeReason(definition);
  if (tooLarge !== undefined) return { ok: false, code: "DEFINITION_TOO_LARGE", message: tooLarge };
  // Before the idempotency key is claimed: a refused start leaves nothing behind.
  const oversized = workflowInputOversizeReason(definition, options.input, serviceConfig(env).engine.maxPayloadBytes);
  if (oversized !== undefined) return { ok: false, code: "INPUT_TOO_LARGE", message: oversized };
  const invalid = await inputSchemaRefusal(env, definition, options.input);
  if (invalid !== undefined) return invalid;
  // Only for a definition that names some: the values it starts with (see WorkflowExecution.environment).
  const environmentNames = environmentVariablesOf(registered);
  const environment = environmentNames.length === 0 ? undefined : await new EnvironmentRepository(env.DB).valuesOf(environmentNames);
  const { name: _name, version: _version, definition: _inline, idempotencyStrategy: _strategy, workflowId: _chosen, waitMs, waitUntilTaskRefs, ...fields } = options;
  const failing = options.idempotencyStrategy === "FAIL" || options.idempotencyStrategy === "FAIL_ON_RUNNING";
  // One deadline for every read of the key below: a start made again waits out what the first began.
  const deadline = waitMs === undefined ? undefined : Date.now() + waitMs;
  let ownId = options.workflowId ?? crypto.randomUUID();
  for (let read = 1; ; read++) {
    let workflowId = ownId;
    let existing = false;
    if (key !== undefined) {
      const holder = await claimIdempotencyKey(env.DB, definition.name, key, workflowId);
      if (holder !== workflowId) {
        if (failing) {
          const refusal = await takeOverKey(env, definition.name, key, holder, workflowId, options.idempotencyStrategy === "FAIL_ON_RUNNING");
          if (refusal) return refusal;
        } else {
          workflowId = holder;
          existing = true;
        }
      }
    }
    const params: NewExecution = { ...fields, workflowId, definition };
    if (environment !== undefined) params.environment = environment;
    const outcome = await startAs(env, params, existing, options.workflowId !== undefined, deadline, waitUntilTaskRefs);
    // Only a refused start reads the key again: an execute whose execution was removed while it waited (it did start)
    // answers that, and an unkeyed start does no more than it did.
    if (outcome.ok || key === undefined || outcome.code !== "ALREADY_STARTED") return outcome;
    // Refused: a FAIL or FAIL_ON_RUNNING start may have taken the key over before this start landed (see takeOverKey).
    // Anything else refusing it (the execution was removed) stands.
    const now = await keyHolder(env.DB, definition.name, key);
    if (now === null) return outcome;
    if (now !== workflowId) {
      // As if that start had come first: a FAIL one refuses (reading again, it could fence that start off in turn, and
      // two such starts each other's, none starting), a RETURN_EXISTING one answers the execution now holding the key.
      if (failing) return keyHeldRefusal(definition.name, key, now, "was just started by another request");
      if (read === KEY_READS) return outcome;
      // The id given up stays refused: a new one of this start's own (a chosen one is what its starter looks for).
      if (options.workflowId === undefined && workflowId === ownId) ownId = crypto.randomUUID();
      continue;
    }
    // The key still names the id refused. Fenced off by a start that has not moved the key yet, or that died before it
    // did, it is taken over here as that start would have (fenced again, a no-op, then compare-and-set to a new id of
    // this start's own): nothing else moves it, and every RETURN_EXISTING start with the key were refused for the hour
    // the tombstone lasts. Refused for another reason (being removed, or holding another execution), the refusal
    // stands; so it does for a chosen id (a parent's child), which must not start under another.
    if (options.workflowId !== undefined || read === KEY_READS) return outcome;
    const fresh = crypto.randomUUID();
    const kept = await takeOverKey(env, definition.name, key, workflowId, fresh, false);
    if (kept !== undefined && (await keyHolder(env.DB, definition.name, key)) === workflowId) return outcome;
    // Taken over (the claim below finds `fresh` its own), or moved meanwhile by the start that fenced it (found there).
    ownId = fresh;
  }
}

/**
 * Starts the execution `params` describes in its object (or finds the one there, `existing`), waiting as the execute
 * endpoint does until `deadline` when one is given. `chosenId`: the id was given by the caller, not made for this start.
 */
async function startAs(env: Env, params: NewExecution, existing: boolean, chosenId: boolean, deadline: number | undefined, waitUntilTaskRefs: string[] | undefined): Promise<StartOutcome> {
  const { workflowId, definition } = params;
  // Also for an existing id: the first caller may have claimed the key and died before starting it.
  // A start the object took but whose answer an eviction lost, made again, finds its own execution and answers it only
  // when the start says who made it (the same key, parent task or START_WORKFLOW task: see WorkflowExecution.start);
  // any other start, repeated, is refused as a duplicate, so it is not repeated here (an eviction is a 503).
  const repeatable = params.idempotencyKey !== undefined || params.parentWorkflowTaskId !== undefined || params.startedByTask !== undefined;
  const call = <T>(make: (stub: ExecutionStub) => Promise<T>): Promise<T> => (repeatable ? retryingExecutionCall(env, workflowId, make) : make(executionStub(env, workflowId)));
  if (deadline !== undefined) {
    let executed: { ok: true; value: SettledWorkflow } | { ok: false; error: { kind: string; message: string } };
    try {
      // The time left, not waitMs, for a call made again (one with a key): its repeat waits out what the first began.
      executed = await call(async (stub) => await stub.execute(params, Math.max(0, deadline - Date.now()), waitUntilTaskRefs));
    } catch (error) {
      // A reset cut the call off. The id is this call's own, new: an execution the object holds under it is the one
      // this call started, whose wait alone was lost; waited for again (the time left) and answered, where a 503 had
      // the client start a second one. None there: the start did not land, the error stands (nothing to repeat).
      if (repeatable || chosenId || !isTransientObjectError(error)) throw error;
      // An object still on the code before awaitSettled cannot be asked: the error stands, the 503 that code's router
      // answered, not workerd's "does not implement" as a 500.
      const again = await orOnOlderCode(
        "awaitSettled",
        async () => await retryingExecutionCall(env, workflowId, async (stub) => await stub.awaitSettled(Math.max(0, deadline - Date.now()), waitUntilTaskRefs)),
        () => {
          throw error;
        },
      );
      if (!again.ok) throw error;
      executed = again;
    }
    if (!executed.ok) return { ok: false, code: executed.error.kind === "NOT_FOUND" ? "EXECUTION_REMOVED" : "ALREADY_STARTED", message: executed.error.message };
    const { workflowJson, status: workflowStatus, timedOut, variablesJson } = executed.value;
    return { ok: true, workflowId, existing, workflowJson, workflowStatus, timedOut, ...(variablesJson === undefined ? {} : { variablesJson }) };
  }
  const started = await call(async (stub) => await stub.start(params));
  if (!started.ok) return { ok: false, code: "ALREADY_STARTED", message: started.error.message };
  return existing ? { ok: true, workflowId, existing } : { ok: true, workflowId, existing, version: definition.version };
}
