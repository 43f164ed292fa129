import type { JsonObject } from "../engine/model";
import { mapBounded } from "./bounded";
import { executionStub, retryingExecutionCall } from "./executions";
import type { WorkflowReadCheck } from "./guard";
import { ApiError } from "./http/errors";
import { addIn, applyReadable, whereOf, type Filter } from "./search";
import type { NameFilter } from "./auth/permissions";

/**
 * Most executions one correlation lookup answers with: each is read from its own execution object, so the bound keeps a
 * lookup within a request's subrequests and time. Also the most one correlation id answers with (the newest by start
 * time), as Conductor's lookup gives each id its newest 1,000; more in all is a 413, never a list silently cut.
 */
export const MAX_CORRELATED_WORKFLOWS = 1000;

/** Most Workflow JSON one correlation lookup gathers: the answer is held in memory (128 MB per isolate) whole. */
export const MAX_CORRELATED_BYTES = 32 * 1024 * 1024;

/** Execution objects read at once by one lookup. */
const READ_CONCURRENCY = 8;

/** Most ids `GET /api/workflow/running/{name}` lists (the newest by start time). */
export const MAX_RUNNING_IDS = 10_000;

/** What a lookup by correlation id asks for (the query of Conductor's `getWorkflows` and its batch form). */
export interface CorrelatedLookup {
  workflowNames: readonly string[];
  correlationIds: readonly string[];
  /** Finished and paused executions too; otherwise RUNNING ones only, as Conductor. */
  includeClosed: boolean;
  includeTasks: boolean;
}

/** An execution as the index knows it. */
interface IndexedExecution {
  correlationId: string;
  workflowId: string;
  workflowName: string;
}

/** An execution found, as it stands now: its correlation id and its Workflow JSON, kept as text. */
interface FoundWorkflow {
  correlationId: string;
  json: string;
}

/**
 * At most `limit` index rows of the executions of the lookup's names with one of `correlationIds`, among the workflows the
 * caller may read: one id's rows after another's (ids in SQLite's order), each id's newest first. In that order SQLite
 * walks `executions_by_correlation_start` (0049), or `executions_running_by_correlation` (0050) for running ones only,
 * each id's rows in turn, and stops at the limit: it reads the rows it answers with and those the name and grant filters
 * pass over, where a sort by start time across the ids would read every execution of every id first (a customer's id
 * used as the correlation id of a million runs).
 */
async function correlatedRows(db: D1Database, lookup: CorrelatedLookup, correlationIds: readonly string[], readable: NameFilter, limit: number): Promise<IndexedExecution[]> {
  const filter: Filter = { clauses: [], bindings: [] };
  applyReadable(filter, readable);
  addIn(filter, "workflow_name", lookup.workflowNames);
  addIn(filter, "correlation_id", correlationIds);
  // Written as executions_running_by_correlation's condition (0050) is, a literal with `+`, for SQLite to walk that
  // index: it holds an id's running executions alone, where the id's index holds its finished ones too, each read and
  // passed over. `status = ?`, or `status = 'RUNNING'`, has SQLite walk the status index (every running execution of
  // every name) for a lookup of several ids.
  if (!lookup.includeClosed) filter.clauses.push("+status = 'RUNNING'");
  const { results } = await db
    .prepare(
      `SELECT correlation_id AS correlationId, workflow_id AS workflowId, workflow_name AS workflowName FROM executions ${whereOf(filter)} ` +
        `ORDER BY correlation_id, start_time DESC, workflow_id LIMIT ?`,
    )
    .bind(...filter.bindings, limit)
    .all<IndexedExecution>();
  return results;
}

/**
 * The index rows a lookup finds among the workflows the caller may read, each id's newest first: each id's newest
 * {@link MAX_CORRELATED_WORKFLOWS}, a 413 when those come to more in all.
 */
async function indexedExecutions(db: D1Database, lookup: CorrelatedLookup, readable: NameFilter): Promise<IndexedExecution[]> {
  if (lookup.workflowNames.length === 0 || lookup.correlationIds.length === 0) return [];
  const correlationIds = [...new Set(lookup.correlationIds)];
  const rows = await correlatedRows(db, lookup, correlationIds, readable, MAX_CORRELATED_WORKFLOWS + 1);
  if (rows.length <= MAX_CORRELATED_WORKFLOWS) return rows;
  // One row past the bound. Rows of two ids: their newest come to more than the bound. All of one id: it answers with
  // its newest, the bound, and a row of any other id is one too many (a second statement, reading up to that row).
  const crowded = rows[0]!.correlationId;
  const others = correlationIds.filter((id) => id !== crowded);
  const tooMany = rows.some((row) => row.correlationId !== crowded) || (others.length > 0 && (await correlatedRows(db, lookup, others, readable, 1)).length > 0);
  if (tooMany) {
    const message = `The correlation ids asked for hold over ${MAX_CORRELATED_WORKFLOWS} executions together (each id answers with at most its newest ${MAX_CORRELATED_WORKFLOWS}); ask for fewer correlation ids or names${lookup.includeClosed ? ", or without includeClosed" : ""}`;
    throw new ApiError(413, "PAYLOAD_TOO_LARGE", message);
  }
  return rows.slice(0, MAX_CORRELATED_WORKFLOWS);
}

/**
 * Executions with the lookup's correlation ids among the workflows of its names that the caller may read,
 * each read from its execution object. The index is written behind the executions, so what an execution
 * says now decides: one that finished, was removed or took another correlation id since its row was
 * written is left out (one that started or changed a moment ago may not be found yet).
 */
export async function correlatedWorkflows(
  env: Env,
  lookup: CorrelatedLookup,
  readable: NameFilter,
  mayRead: WorkflowReadCheck,
): Promise<Map<string, string[]>> {
  const wanted = new Set(lookup.correlationIds);
  let bytes = 0;
  const read = async (row: IndexedExecution): Promise<FoundWorkflow | undefined> => {
    if (!(await mayRead(row.workflowId, row.workflowName))) return undefined;
    const json = await retryingExecutionCall(env, row.workflowId, (stub) => stub.getWorkflowJson(lookup.includeTasks));
    if (json === null) return undefined;
    const workflow = JSON.parse(json) as { status: string; correlationId?: string };
    if (!lookup.includeClosed && workflow.status !== "RUNNING") return undefined;
    if (workflow.correlationId === undefined || !wanted.has(workflow.correlationId)) return undefined;
    bytes += json.length;
    if (bytes > MAX_CORRELATED_BYTES) {
      throw new ApiError(413, "PAYLOAD_TOO_LARGE", `The workflows found come to over ${MAX_CORRELATED_BYTES} bytes of JSON; ask for fewer correlation ids or names, or without includeTasks`);
    }
    return { correlationId: workflow.correlationId, json };
  };
  const found = await mapBounded(await indexedExecutions(env.DB, lookup, readable), READ_CONCURRENCY, read);
  // Every id asked for gets an entry, an empty list when nothing has it (as Conductor's map), in the order asked.
  const byCorrelationId = new Map(lookup.correlationIds.map((id) => [id, [] as string[]]));
  for (const workflow of found) if (workflow) byCorrelationId.get(workflow.correlationId)!.push(workflow.json);
  return byCorrelationId;
}

/** A JSON array of Workflow JSON texts, joined as they are rather than parsed and written again. */
export function workflowArrayText(workflows: readonly string[]): string {
  return `[${workflows.join(",")}]`;
}

/** Conductor's `Map<String, List<Workflow>>` of a correlation lookup, as JSON text. */
export function correlatedMapText(byCorrelationId: ReadonlyMap<string, readonly string[]>): string {
  return `{${[...byCorrelationId].map(([id, workflows]) => `${JSON.stringify(id)}:${workflowArrayText(workflows)}`).join(",")}}`;
}

/** What `GET /api/workflow/running/{name}` asks for. */
export interface RunningLookup {
  workflowName: string;
  /** Every version when absent. */
  version?: number | undefined;
  /** Both or neither: the inclusive range of start times (epoch milliseconds). */
  startTime?: number | undefined;
  endTime?: number | undefined;
}

/**
 * The ids of the executions of a workflow (of one version, when given) that have not ended (RUNNING or PAUSED, Conductor's pending
 * workflows) the caller may read, newest first, from the index.
 */
export async function runningWorkflowIds(db: D1Database, lookup: RunningLookup, readable: NameFilter): Promise<string[]> {
  const filter: Filter = { clauses: [], bindings: [] };
  applyReadable(filter, readable);
  // Through executions_pending_by_name (0046), which holds only the executions not ended: its condition must be written
  // as the index's is for SQLite to use it. The name's index holds every execution the name ever had, the status
  // index every one not ended of every name.
  filter.clauses.push("workflow_name = ?", "status IN ('RUNNING', 'PAUSED')");
  filter.bindings.push(lookup.workflowName);
  if (lookup.version !== undefined) {
    filter.clauses.push("workflow_version = ?");
    filter.bindings.push(lookup.version);
  }
  if (lookup.startTime !== undefined && lookup.endTime !== undefined) {
    filter.clauses.push("start_time BETWEEN ? AND ?");
    filter.bindings.push(lookup.startTime, lookup.endTime);
  }
  const { results } = await db
    .prepare(`SELECT workflow_id AS workflowId FROM executions ${whereOf(filter)} ORDER BY start_time DESC, workflow_id LIMIT ?`)
    .bind(...filter.bindings, MAX_RUNNING_IDS)
    .all<{ workflowId: string }>();
  return results.map((row) => row.workflowId);
}

/** Orkes' `TaskListSearchResultSummary`: one page of a workflow's tasks. */
export interface TaskListSearchResultSummary {
  results: JsonObject[];
  /** How many tasks have one of the statuses asked for (all tasks when none was). */
  totalHits: number;
  /** How many of all the workflow's tasks have each status (statuses no task has are left out). */
  summary: Record<string, number>;
}

/** The page of `tasks` (in their order) from `start`, at most `count`, of those with one of `statuses` (any when empty). */
export function taskListPage(tasks: readonly JsonObject[], page: { start: number; count: number; status: readonly string[] }): TaskListSearchResultSummary {
  const summary: Record<string, number> = {};
  for (const task of tasks) {
    const status = String(task["status"]);
    summary[status] = (summary[status] ?? 0) + 1;
  }
  const wanted = new Set(page.status);
  const matching = wanted.size === 0 ? tasks : tasks.filter((task) => wanted.has(String(task["status"])));
  return { results: matching.slice(page.start, page.start + page.count), totalHits: matching.length, summary };
}
