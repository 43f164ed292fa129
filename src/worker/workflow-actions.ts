import type { IRequest } from "itty-router";
import type { ActorResult, WorkflowCommand } from "../actors/workflow-execution";
import { conflict } from "../engine/decider";
import { TERMINAL_WORKFLOW_STATUSES, type WorkflowDef } from "../engine/model";
import { startScopes } from "./auth/access-rules";
import { DefinitionRepository } from "./definitions";
import { withTaskDefs } from "./task-defs";
import { executionStub, nameAndStatusOf, retryingExecutionCall, unwrap } from "./executions";
import { ApiError, fromEngineRefusal } from "./http/errors";
import { booleanQuery, queryValue } from "./http/params";
import { principalOf } from "./guard";
import { isSubrequestLimitError } from "./subrequest-limit";

/** What the caller may start: the snapshot a start, retry, restart or rerun stores with the execution. */
export function callerStartScopes(request: IRequest): string[] {
  return startScopes(principalOf(request).grants);
}

/**
 * Acts on one execution; throws the API error its single-id route answers. `awaitParents`: a retry or restart of a
 * sub workflow answers once its parents have taken it (see {@link WorkflowCommand}), for a bulk request whose later ids
 * may be those parents; other actions ignore it.
 */
export type ExecutionAct = (env: Env, workflowId: string, options?: { awaitParents?: boolean }) => Promise<void>;

/**
 * A lifecycle action on one execution by id, shared by its single-id route and its bulk route, so both do
 * (and are authorized for) exactly the same thing.
 */
export interface WorkflowAction {
  /** Method of the single-id route. */
  readonly method: "PUT" | "POST" | "DELETE";
  /** Path of the single-id route for one execution: access rules are matched against it. */
  path(workflowId: string): string;
  /**
   * Reads the request's options (query parameters, the caller's start scopes) once, refusing bad ones (400)
   * before anything is acted on; the act it returns may then run for any number of executions.
   */
  prepare(request: IRequest): ExecutionAct;
}

const single = (suffix: string) => (workflowId: string) => `/api/workflow/${encodeURIComponent(workflowId)}${suffix}`;

/** The terminate command a request asks for: its `reason`, and Orkes' `triggerFailureWorkflow`. */
function terminateCommand(request: IRequest): WorkflowCommand {
  const reason = queryValue(request, "reason");
  // Orkes' option: the definition's failure workflow starts as it would after a failure.
  const triggerFailureWorkflow = booleanQuery(request, "triggerFailureWorkflow", false);
  const command: WorkflowCommand = { type: "terminate", triggerFailureWorkflow };
  if (reason) command.reason = reason;
  return command;
}

const terminate: WorkflowAction = {
  method: "DELETE",
  path: single(""),
  prepare(request) {
    const command = terminateCommand(request);
    return async (env, workflowId) => {
      unwrap(await terminateExecution(env, workflowId, command));
    };
  },
};

/**
 * A terminate `command` on the execution's object, made again (see {@link retryingExecutionCall}) when a reset of the
 * object cut it off: a terminate is idempotent (one finding the workflow TERMINATED answers 200 and changes nothing,
 * as Conductor answers a repeated terminate), and it answers only once the children it canceled are terminated (up to
 * 3 s), a wait a deploy's reset may cut off after the terminate was stored, where the client got a 503 for it. The
 * repeat sends the children's terminations still owed again and waits for them (see WorkflowExecution.command).
 */
async function terminateExecution(env: Env, workflowId: string, command: WorkflowCommand): Promise<ActorResult<null>> {
  return retryingExecutionCall(env, workflowId, async (stub): Promise<ActorResult<null>> => await stub.command(command));
}

/**
 * Why a removal stopped between its two calls: its terminate was done (the execution no longer runs), and the runtime
 * refused the removal past the request's subrequests (see `isSubrequestLimitError`). Said so, and not "not acted on":
 * whoever reads a bulk answer learns the execution has ended, and that sending its id again removes it.
 */
export const TERMINATED_NOT_REMOVED =
  "Terminated, not removed: this request reached Cloudflare's limit of subrequests per request after the workflow's terminate; send its id again, in a smaller request, to remove it";

/**
 * The `Retry-After` (seconds) of a single-id removal's {@link TERMINATED_NOT_REMOVED} 503: every 503 of the service
 * carries one (a client reading `retryable: true` looks for it), and a new request has subrequests of its own at once.
 */
const TERMINATED_NOT_REMOVED_RETRY_AFTER_SECONDS = 1;

/**
 * Terminates the execution with `command` when it is still running or paused, then removes it. One that has already
 * ended is removed as it is (its terminate's 409 is no refusal here). A removal the runtime refuses past the request's
 * subrequests after the terminate was done is a 503 saying {@link TERMINATED_NOT_REMOVED}, with `Retry-After: 1`.
 */
async function terminateThenRemove(env: Env, workflowId: string, command: WorkflowCommand): Promise<void> {
  const stub = executionStub(env, workflowId);
  let terminated = true;
  try {
    unwrap(await terminateExecution(env, workflowId, command));
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 409)) throw error;
    terminated = false;
  }
  try {
    unwrap(await stub.remove());
  } catch (error) {
    if (terminated && isSubrequestLimitError(error)) {
      throw new ApiError(503, "UNAVAILABLE", TERMINATED_NOT_REMOVED, undefined, { "Retry-After": String(TERMINATED_NOT_REMOVED_RETRY_AFTER_SECONDS) });
    }
    throw error;
  }
}

/**
 * Conductor's removeWorkflow, which deletes an execution whatever its status: a running or paused one is terminated
 * first (its children with it), so that nothing it started runs on unseen.
 */
const remove: WorkflowAction = {
  method: "DELETE",
  path: single("/remove"),
  prepare: () => (env, workflowId) => terminateThenRemove(env, workflowId, { type: "terminate", triggerFailureWorkflow: false, reason: "Removed while it ran" }),
};

/** Conductor's terminateRemove: as {@link remove}, with the terminate's `reason` and `triggerFailureWorkflow`. */
const terminateRemove: WorkflowAction = {
  method: "DELETE",
  path: single("/terminate-remove"),
  prepare(request) {
    const command = terminateCommand(request);
    return (env, workflowId) => terminateThenRemove(env, workflowId, command);
  },
};

/** `PUT /api/workflow/{id}/pause` or `/resume`: the command of that name, nothing else to read. */
const toggle = (type: "pause" | "resume"): WorkflowAction => ({
  method: "PUT",
  path: single(`/${type}`),
  prepare: () => async (env, workflowId) => {
    unwrap(await executionStub(env, workflowId).command({ type }));
  },
});

const pause = toggle("pause");
const resume = toggle("resume");

const retry: WorkflowAction = {
  method: "POST",
  path: single("/retry"),
  prepare(request) {
    const resumeSubworkflowTasks = booleanQuery(request, "resumeSubworkflowTasks", false);
    const scopes = callerStartScopes(request);
    return async (env, workflowId, options) => {
      const command: WorkflowCommand = { type: "retry", resumeSubworkflowTasks, startScopes: scopes };
      if (options?.awaitParents === true) command.awaitParents = true;
      unwrap(await executionStub(env, workflowId).command(command));
    };
  },
};

const restart: WorkflowAction = {
  method: "POST",
  path: single("/restart"),
  prepare(request) {
    const useLatestDefinitions = booleanQuery(request, "useLatestDefinitions", false);
    const scopes = callerStartScopes(request);
    // The latest definition of each workflow restarted, read from D1 (findCurrent) once per request: a version just
    // registered through another isolate is the one restarted, not the one this isolate cached before it; the ids of a
    // bulk restart share the read.
    const latest = new Map<string, Promise<WorkflowDef>>();
    const latestOf = (env: Env, name: string): Promise<WorkflowDef> => {
      let definition = latest.get(name);
      if (definition === undefined) {
        definition = new DefinitionRepository(env.DB).get(name, undefined, true).then((found) => withTaskDefs(env.DB, found));
        latest.set(name, definition);
      }
      return definition;
    };
    return async (env, workflowId, options) => {
      const stub = executionStub(env, workflowId);
      const awaitParents = options?.awaitParents === true ? { awaitParents: true } : {};
      if (!useLatestDefinitions) {
        unwrap(await stub.command({ type: "restart", startScopes: scopes, ...awaitParents }));
        return;
      }
      // The execution's state is asked before the latest definition is looked up, as Conductor's WorkflowExecutor.restart
      // refuses one not in a terminal state (409) before it looks for the definition (404): a running execution whose
      // workflow has no registered definition (started with an inline one, or deleted since) is a 409, not a 404. The
      // same one call as reading the name alone; the command checks the status again as it runs.
      const summary = await nameAndStatusOf(stub);
      if (summary === null) throw new ApiError(404, "NOT_FOUND", `Workflow ${workflowId} not found`);
      if (!TERMINAL_WORKFLOW_STATUSES.has(summary.status)) throw fromEngineRefusal(conflict({ workflowId, status: summary.status }, "restart"));
      const definition = await latestOf(env, summary.workflowName);
      unwrap(await stub.command({ type: "restart", definition, startScopes: scopes, ...awaitParents }));
    };
  },
};

/** Conductor's resetCallbacksForWorkflow: SIMPLE tasks waiting out a `callbackAfterSeconds` (a worker's, a startDelay, a retry's delay) may be polled at once. */
const resetCallbacks: WorkflowAction = {
  method: "POST",
  path: single("/resetcallbacks"),
  prepare: () => async (env, workflowId) => {
    unwrap(await executionStub(env, workflowId).command({ type: "resetCallbacks" }));
  },
};

/** Every lifecycle action taking nothing but the execution's id and query parameters (rerun takes a body). */
export const WORKFLOW_ACTIONS = { terminate, remove, terminateRemove, pause, resume, retry, restart, resetCallbacks } as const;
