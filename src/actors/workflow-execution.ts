import { DurableObject } from "cloudflare:workers";
import type { DecideEnv } from "../engine/config";
import {
  createExecution,
  decide,
  isBlocked,
  isInFlight,
  nextDeadline,
  type Decision,
  type ExecutionEvent,
  type ExternalTaskStatus,
  type NewExecution,
} from "../engine/decider";
import { EngineError, type EngineErrorKind } from "../engine/errors";
import { evaluationContext } from "../engine/evaluation";
import { MissingSecretError, referencedSecrets, resolveValue } from "../engine/expressions";
import { TERMINAL_WORKFLOW_STATUSES, type JsonObject, type TaskExecution, type WorkflowDef, type WorkflowExecution as Execution } from "../engine/model";
import { toWorkflowView } from "../engine/view";
import { serviceConfig, type ServiceConfig } from "../worker/config";
import { dispatchHttp } from "./dispatch/http";
import { deleteIndexRow, indexSignature, writeIndexRow } from "./execution-index";
import { ExecutionStore } from "./execution-store";
import { secretLookup } from "./secrets";
import { verifyCallback } from "./webhook-verification";
import { parseWebhookCallback, webhookExpectations } from "../engine/tasks/wait-for-webhook/callback";
import type { ValidationIssue } from "../engine/validation-issue";

/** The outcome of an RPC call: refusals travel as values, because thrown errors lose their kind over RPC. */
export type ActorResult<T> = { ok: true; value: T } | { ok: false; error: { kind: EngineErrorKind; message: string } };

/** Why a webhook callback was refused, with the HTTP status to answer. */
export interface CallbackRefusal {
  status: 400 | 401 | 404 | 409;
  message: string;
  validationErrors?: ValidationIssue[];
}

/** The outcome of a webhook callback. */
export type CallbackResult = { ok: true; value: { workflowId: string; taskId: string; status: string } } | { ok: false; refusal: CallbackRefusal };

/** Lifecycle commands the router forwards unchanged to the engine. */
export type WorkflowCommand = Extract<ExecutionEvent, { type: "terminate" | "pause" | "resume" | "retry" | "restart" | "rerun" }>;

/** How long a failed index write waits before it is tried again. */
const INDEX_RETRY_MS = 2_000;

function ok<T>(value: T): ActorResult<T> {
  return { ok: true, value };
}

function refused(error: unknown): ActorResult<never> {
  if (error instanceof EngineError) return { ok: false, error: { kind: error.kind, message: error.message } };
  throw error;
}

/**
 * One workflow execution. Holds the execution in its own SQLite, asks the engine what each event
 * means, persists the decision, then performs the effects. Every timer is derived from the
 * execution (`nextDeadline`) and multiplexed onto the object's single alarm.
 */
export class WorkflowExecution extends DurableObject<Env> {
  readonly #store: ExecutionStore;
  readonly #config: ServiceConfig;
  #execution: Execution | null;
  /** Side effects running in this isolate, by task id. After an eviction this is empty, which is how lost attempts are found. */
  readonly #inFlight = new Map<string, AbortController>();
  /** Callers of `execute` waiting for the execution to finish or block. */
  readonly #waiters = new Set<() => void>();
  #recovered = false;
  #alarmAt: number | null = null;
  #indexedSignature: string | undefined;
  #indexWriting: string | undefined;
  #indexRetryAt: number | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#config = serviceConfig(env);
    this.#store = new ExecutionStore(ctx.storage.sql);
    this.#execution = this.#store.load();
    this.#indexedSignature = this.#store.getMeta("indexed");
  }

  /** Starts a new execution in this (empty) object. */
  async start(params: NewExecution): Promise<ActorResult<string>> {
    this.#recover();
    if (this.#execution) return refused(new EngineError("CONFLICT", `Workflow ${params.workflowId} already exists`));
    const created = createExecution(params, Date.now());
    this.#apply({ type: "start" }, created);
    return ok(params.workflowId);
  }

  /**
   * Starts a new execution and waits (at most `waitMs`) until it ends or blocks on something from
   * outside, answering with the Workflow JSON: the synchronous execute endpoint in one round trip.
   */
  async execute(params: NewExecution, waitMs: number): Promise<ActorResult<string>> {
    const started = await this.start(params);
    if (!started.ok) return started;
    await this.#settled(waitMs);
    return ok(JSON.stringify(toWorkflowView(this.#execution!, true)));
  }

  /**
   * The Workflow JSON as text (the router sends it on unparsed), or null when this object holds
   * no execution.
   */
  async getWorkflowJson(includeTasks: boolean): Promise<string | null> {
    this.#recover();
    return this.#execution ? JSON.stringify(toWorkflowView(this.#execution, includeTasks)) : null;
  }

  /** The name of the definition this execution runs, or null when this object holds none. */
  async getWorkflowName(): Promise<string | null> {
    this.#recover();
    return this.#execution?.workflowName ?? null;
  }

  /** Applies a lifecycle command (terminate, pause, resume, retry, restart, rerun). */
  async command(command: WorkflowCommand): Promise<ActorResult<null>> {
    this.#recover();
    if (!this.#execution) return refused(this.#notFound());
    try {
      this.#apply(command);
      return ok(null);
    } catch (error) {
      return refused(error);
    }
  }

  /**
   * Completes, fails or updates the pending task with reference name `taskRefName` (the latest
   * instance of that reference). Answers with its task id.
   */
  async updateTaskByRef(taskRefName: string, status: ExternalTaskStatus, output: JsonObject, reason?: string): Promise<ActorResult<string>> {
    this.#recover();
    const execution = this.#execution;
    if (!execution) return refused(this.#notFound());
    const task = execution.tasks.findLast((candidate) => candidate.referenceTaskName === taskRefName);
    if (!task) return refused(new EngineError("NOT_FOUND", `Workflow ${execution.workflowId} has no task with reference name ${taskRefName}`));
    return this.updateTask(task.taskId, status, output, reason);
  }

  /** Completes, fails or updates one task instance by id. Answers with its task id. */
  async updateTask(taskId: string, status: ExternalTaskStatus, output: JsonObject, reason?: string): Promise<ActorResult<string>> {
    this.#recover();
    if (!this.#execution) return refused(this.#notFound());
    try {
      const event: ExecutionEvent = { type: "externalUpdate", taskId, status, output };
      if (reason !== undefined) event.reason = reason;
      this.#apply(event);
      this.#inFlight.get(taskId)?.abort();
      return ok(taskId);
    } catch (error) {
      return refused(error);
    }
  }

  /**
   * A WAIT_FOR_WEBHOOK callback. Checked in the order a caller can act on: unknown ids (404), headers
   * or signature (401), body (400), task no longer waiting (409). A refused callback changes nothing;
   * of two concurrent callbacks exactly one wins (the engine refuses the second as not pending).
   */
  async webhookCallback(call: { taskRefName: string; taskId: string; headers: Array<[string, string]>; body: Uint8Array }): Promise<CallbackResult> {
    this.#recover();
    const refuse = (status: CallbackRefusal["status"], message: string, validationErrors?: ValidationIssue[]): CallbackResult => ({
      ok: false,
      refusal: validationErrors ? { status, message, validationErrors } : { status, message },
    });
    const execution = this.#execution;
    const task = execution?.tasks.find((candidate) => candidate.taskId === call.taskId);
    if (!execution || !task || task.referenceTaskName !== call.taskRefName || task.taskType !== "WAIT_FOR_WEBHOOK") {
      return refuse(404, "No webhook task with that workflow id, reference name and task id");
    }
    const input = await this.#liveInput(execution, task);
    if (input instanceof MissingSecretError) return refuse(401, `The callback cannot be verified: ${input.message}`);
    const failure = await verifyCallback(webhookExpectations(input), new Headers(call.headers), call.body);
    if (failure) return refuse(401, `Callback refused: ${failure}`);
    const parsed = parseWebhookCallback(new TextDecoder().decode(call.body));
    if (!parsed.ok) return refuse(400, "Invalid callback body", parsed.issues);
    // Re-read: the task may have moved on while this callback was being verified.
    const current = this.#execution?.tasks.find((candidate) => candidate.taskId === call.taskId);
    if (!current || current.status !== "IN_PROGRESS") {
      return refuse(409, `Task ${call.taskRefName} is no longer waiting: its status is ${current?.status ?? "gone"}`);
    }
    const { status, output, reason } = parsed.callback;
    const event: ExecutionEvent = { type: "externalUpdate", taskId: call.taskId, status, output };
    if (reason !== undefined) event.reason = reason;
    try {
      this.#apply(event);
    } catch (error) {
      if (error instanceof EngineError) return refuse(409, error.message);
      throw error;
    }
    return { ok: true, value: { workflowId: execution.workflowId, taskId: call.taskId, status } };
  }

  /** Deletes the execution and its search row. Only a finished execution can be removed. */
  async remove(): Promise<ActorResult<null>> {
    this.#recover();
    const execution = this.#execution;
    if (!execution) return refused(this.#notFound());
    if (!TERMINAL_WORKFLOW_STATUSES.has(execution.status)) {
      return refused(new EngineError("CONFLICT", `Cannot remove workflow ${execution.workflowId}: its status is ${execution.status}; terminate it first`));
    }
    await deleteIndexRow(this.env.DB, execution.workflowId);
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.#execution = null;
    this.#indexedSignature = undefined;
    this.#alarmAt = null;
    return ok(null);
  }

  /** The single timer: fires for the earliest deadline of the execution or a pending index write. */
  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    this.#recovered = true;
    const now = Date.now();
    if (this.#indexRetryAt !== undefined && this.#indexRetryAt <= now) this.#indexRetryAt = undefined;
    if (this.#execution) this.#apply({ type: "tick", liveTaskIds: new Set(this.#inFlight.keys()) });
  }

  #notFound(): EngineError {
    return new EngineError("NOT_FOUND", `Workflow ${this.ctx.id.name ?? this.ctx.id.toString()} not found`);
  }

  #decideEnv(): DecideEnv {
    return { now: Date.now(), newId: () => crypto.randomUUID(), config: this.#config.engine };
  }

  /**
   * The first call after the object was (re)loaded: any attempt that was in flight died with the
   * previous isolate, so dispatch it again now rather than at its watchdog deadline. Also resumes
   * an index write that may not have happened.
   */
  #recover(): void {
    if (this.#recovered) return;
    this.#recovered = true;
    const execution = this.#execution;
    if (!execution) return;
    if (execution.tasks.some(isInFlight)) this.#apply({ type: "tick", liveTaskIds: new Set() });
    else this.#afterChange(execution);
  }

  /** Decides, persists, then performs effects. Throws EngineError with nothing changed when refused. */
  #apply(event: ExecutionEvent, base: Execution | null = this.#execution): void {
    if (!base) throw this.#notFound();
    const previous = this.#execution;
    const decision: Decision = decide(base, event, this.#decideEnv());
    if (decision.state === previous) return;
    this.#store.save(previous, decision.state);
    this.#execution = decision.state;
    for (const effect of decision.effects) {
      if (effect.kind === "dispatch") this.#dispatch(effect.taskId, effect.attempt);
      else this.#inFlight.get(effect.taskId)?.abort();
    }
    this.#afterChange(decision.state);
  }

  /** Keeps the alarm, the search index and waiting callers in step with the execution. */
  #afterChange(execution: Execution): void {
    this.#syncIndex(execution);
    this.#syncAlarm(execution);
    if (this.#waiters.size > 0 && isBlocked(execution)) {
      for (const wake of this.#waiters) wake();
      this.#waiters.clear();
    }
  }

  #syncAlarm(execution: Execution): void {
    let due = nextDeadline(execution);
    if (this.#indexRetryAt !== undefined && (due === undefined || this.#indexRetryAt < due)) due = this.#indexRetryAt;
    if ((due ?? null) === this.#alarmAt) return;
    this.#alarmAt = due ?? null;
    // Storage calls are ordered and covered by the output gate: no await needed for durability.
    if (due === undefined) void this.ctx.storage.deleteAlarm();
    else void this.ctx.storage.setAlarm(due);
  }

  /** Writes the search row when what it shows changed; off the hot path (never awaited by a transition). */
  #syncIndex(execution: Execution): void {
    const signature = indexSignature(execution);
    if (signature === this.#indexedSignature || signature === this.#indexWriting) return;
    this.#indexWriting = signature;
    const snapshot = execution;
    writeIndexRow(this.env.DB, snapshot)
      .then(() => {
        if (this.#indexWriting === signature) this.#indexWriting = undefined;
        this.#indexedSignature = signature;
        this.#store.setMeta("indexed", signature);
        // A newer change may have been skipped while this write was in flight.
        if (this.#execution && indexSignature(this.#execution) !== signature) this.#syncIndex(this.#execution);
      })
      .catch((error: unknown) => {
        if (this.#indexWriting === signature) this.#indexWriting = undefined;
        console.error(JSON.stringify({ msg: "execution index write failed; will retry", workflowId: snapshot.workflowId, error: String(error) }));
        this.#indexRetryAt = Date.now() + INDEX_RETRY_MS;
        if (this.#execution) this.#syncAlarm(this.#execution);
      });
  }

  /** Resolves when the execution is finished or blocked, or after `waitMs`. */
  #settled(waitMs: number): Promise<void> {
    if (!this.#execution || isBlocked(this.#execution)) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        resolve();
      }, waitMs);
      this.#waiters.add(wake);
    });
  }

  /** Runs a task's side effect and feeds its result back; the attempt number makes late results harmless. */
  #dispatch(taskId: string, attempt: number): void {
    const task = this.#execution?.tasks.find((candidate) => candidate.taskId === taskId);
    if (!task || task.attempt !== attempt) return;
    this.#inFlight.get(taskId)?.abort();
    const controller = new AbortController();
    this.#inFlight.set(taskId, controller);
    this.#perform(task, controller.signal)
      .then((event) => {
        if (this.#inFlight.get(taskId) === controller) this.#inFlight.delete(taskId);
        if (this.#execution) this.#apply(event);
      })
      .catch((error: unknown) => {
        if (this.#inFlight.get(taskId) === controller) this.#inFlight.delete(taskId);
        // The watchdog deadline re-dispatches; log for the operator.
        console.error(JSON.stringify({ msg: "task dispatch failed", taskId, error: String(error) }));
      });
  }

  /**
   * The task's input as its side effect needs it: with real secret values when it references any
   * (they exist only in memory, for this call), else the stored input.
   */
  async #liveInput(execution: Execution, task: TaskExecution): Promise<JsonObject | MissingSecretError> {
    const template = execution.definition.tasks[task.definitionIndex]?.inputParameters ?? {};
    const secretNames = referencedSecrets(template);
    if (secretNames.length === 0) return task.inputData;
    const lookup = await secretLookup(this.env, secretNames);
    try {
      // Defaults a task type added at start (e.g. webhook ids) stay; the template's values win.
      return { ...task.inputData, ...(resolveValue(template, evaluationContext(execution, Date.now(), task.taskId, lookup)) as JsonObject) };
    } catch (error) {
      if (error instanceof MissingSecretError) return error;
      throw error;
    }
  }

  async #perform(task: TaskExecution, cancel: AbortSignal): Promise<ExecutionEvent> {
    const execution = this.#execution!;
    const definition = execution.definition.tasks[task.definitionIndex]!;
    const failed = (reason: string): ExecutionEvent => ({ type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "FAILED_WITH_TERMINAL_ERROR", output: {}, reason });
    const input = await this.#liveInput(execution, task);
    if (input instanceof MissingSecretError) return failed(`Task input references an unknown secret: ${input.message}`);
    switch (task.taskType) {
      case "HTTP":
        return dispatchHttp(task, input, {
          engine: this.#config.engine,
          maxResponseBytes: this.#config.httpMaxResponseBytes,
          asyncCompleteAtTaskLevel: definition.asyncComplete,
          cancel,
        });
      default:
        return failed(`Task type ${task.taskType} has no dispatcher`);
    }
  }
}

/** Re-exported for the router's typing of definitions passed over RPC. */
export type { WorkflowDef };
