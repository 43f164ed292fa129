import type { IRequest } from "itty-router";
import type { TaskIndexRow } from "../actors/execution-index";
import { TASK_STATUSES, type JsonObject } from "../engine/model";
import { validationError } from "./http/errors";
import { applyFreeText, applyQuery, applyReadableAny, countHits, orderBy, searchExecutions, searchPage, searchParam, whereOf, type Filter, type SearchFields } from "./search";
import { namesGranted, type Grant, type NameFilter } from "./auth/permissions";

/** How long a task ran, as TaskSummary's `executionTime` (see {@link toTaskSummary}): 0 until it has started and ended. */
const TASK_EXECUTION_TIME = "(CASE WHEN end_time > 0 AND start_time > 0 THEN MAX(0, end_time - start_time) ELSE 0 END)";

/** How long a task waited to start, as TaskSummary's `queueWaitTime` (see {@link toTaskSummary}): 0 until it has started. */
const TASK_QUEUE_WAIT_TIME = "(CASE WHEN start_time > 0 AND scheduled_time > 0 THEN MAX(0, start_time - scheduled_time) ELSE 0 END)";

/**
 * Task search fields a Conductor `query` may name, mapped to the task index's columns: those of Conductor's task
 * index (its TaskSummary documents), reasonForIncompletion, executionTime and queueWaitTime among them.
 */
const TASK_QUERY_COLUMNS: Record<string, string> = {
  taskId: "task_id",
  taskType: "task_type",
  taskDefName: "task_def_name",
  referenceTaskName: "reference_task_name",
  taskRefName: "reference_task_name",
  status: "status",
  domain: "domain",
  workerId: "worker_id",
  workflowId: "workflow_id",
  workflowType: "workflow_name",
  workflowName: "workflow_name",
  correlationId: "correlation_id",
  scheduledTime: "scheduled_time",
  startTime: "start_time",
  endTime: "end_time",
  updateTime: "update_time",
  reasonForIncompletion: "reason",
  executionTime: TASK_EXECUTION_TIME,
  queueWaitTime: TASK_QUEUE_WAIT_TIME,
  workflowPriority: "workflow_priority",
};

const TASK_SORT_COLUMNS: Record<string, string> = {
  scheduledTime: "scheduled_time",
  startTime: "start_time",
  endTime: "end_time",
  updateTime: "update_time",
  status: "status",
  taskType: "task_type",
  taskDefName: "task_def_name",
  workflowType: "workflow_name",
  taskId: "task_id",
  workflowId: "workflow_id",
  correlationId: "correlation_id",
  referenceTaskName: "reference_task_name",
  taskRefName: "reference_task_name",
  workerId: "worker_id",
  domain: "domain",
  reasonForIncompletion: "reason",
  executionTime: TASK_EXECUTION_TIME,
  queueWaitTime: TASK_QUEUE_WAIT_TIME,
  workflowPriority: "workflow_priority",
};

function checkTaskStatuses(values: readonly string[], path: string): void {
  const unknown = values.filter((value) => !(TASK_STATUSES as readonly string[]).includes(value));
  if (unknown.length > 0) throw validationError("Invalid task search", [{ path, message: `unknown task status ${unknown.join(", ")}; expected one of ${TASK_STATUSES.join(", ")}` }]);
}

const TASK_FIELDS: SearchFields = {
  query: TASK_QUERY_COLUMNS,
  sort: TASK_SORT_COLUMNS,
  defaultOrder: "update_time DESC",
  // A task not started (SCHEDULED) or not ended holds 0 there.
  unsetWhenZero: ["start_time", "end_time"],
  numeric: [TASK_EXECUTION_TIME, TASK_QUEUE_WAIT_TIME],
  checkValues: (column, values) => {
    if (column === "status") checkTaskStatuses(values, "query");
  },
};

/** A row of the task index as the page query reads it: a task's row, with its workflow's columns. */
type TaskSummaryRow = TaskIndexRow & { workflowId: string; workflowType: string; correlationId: string | null; workflowPriority: number };

/** An epoch time as Conductor's summaries show it (ISO 8601, UTC), absent while it is 0 (not yet). */
function isoTime(summary: JsonObject, field: string, epoch: number): void {
  if (epoch > 0) summary[field] = new Date(epoch).toISOString();
}

/**
 * Conductor's `TaskSummary` JSON of a task index row, with its reference name (as Orkes' `taskReferenceName`, and as
 * `referenceTaskName`, the Task JSON's name for it) and worker, which Conductor OSS's lacks.
 */
function toTaskSummary(row: TaskSummaryRow): JsonObject {
  const summary: JsonObject = {
    taskId: row.taskId,
    workflowId: row.workflowId,
    workflowType: row.workflowType,
    taskType: row.taskType,
    taskDefName: row.taskDefName,
    referenceTaskName: row.referenceTaskName,
    // Orkes' TaskSummary names it so (its clients read `taskReferenceName`, Conductor's Task `referenceTaskName`).
    taskReferenceName: row.referenceTaskName,
    status: row.status,
    workflowPriority: row.workflowPriority,
    // As Conductor's: how long it waited to start and ran, 0 until it has.
    queueWaitTime: row.startTime > 0 && row.scheduledTime > 0 ? Math.max(0, row.startTime - row.scheduledTime) : 0,
    executionTime: row.endTime > 0 && row.startTime > 0 ? Math.max(0, row.endTime - row.startTime) : 0,
    input: row.input,
    output: row.output,
  };
  isoTime(summary, "scheduledTime", row.scheduledTime);
  isoTime(summary, "startTime", row.startTime);
  isoTime(summary, "updateTime", row.updateTime);
  isoTime(summary, "endTime", row.endTime);
  if (row.correlationId !== null) summary["correlationId"] = row.correlationId;
  if (row.reason !== null) summary["reasonForIncompletion"] = row.reason;
  if (row.domain !== null) summary["domain"] = row.domain;
  if (row.workerId !== null) summary["workerId"] = row.workerId;
  return summary;
}

/** The request's `query` and `freeText` as a filter of the task index. */
function taskFilter(request: IRequest): Filter {
  const filter: Filter = { clauses: [], bindings: [] };
  const query = searchParam(request, "query");
  if (query) applyQuery(filter, query, TASK_FIELDS);
  applyFreeText(filter, searchParam(request, "freeText"), ["task_id", "workflow_id", "workflow_name", "task_def_name", "reference_task_name", "correlation_id", "reason", "input", "output"], { fields: TASK_FIELDS });
  return filter;
}

/**
 * `GET /api/workflow/search-by-tasks`: Conductor's search of executions by their tasks, the request's `query` and
 * `freeText` read as a task search's; `sort`, `start` and `size` as the execution search's, which answers.
 */
export function searchExecutionsByTasks(db: D1Database, request: IRequest, readable: NameFilter): Promise<{ totalHits: number; results: JsonObject[] }> {
  return searchExecutions(db, request, readable, taskFilter(request));
}

/**
 * The tasks a caller may find in the task index: those of the workflows it may read (WORKFLOW_READ on
 * `workflow:<name>`), and those of the task names it may read tasks of (TASK_READ on `task:<name>`; not by reference
 * name, which any workflow may give a task).
 */
export interface ReadableTasks {
  workflows: NameFilter;
  tasks: NameFilter;
}

/** The tasks `grants` let their holder find (see {@link ReadableTasks}). */
export function readableTasks(grants: readonly Grant[]): ReadableTasks {
  return { workflows: namesGranted(grants, "WORKFLOW_READ", "workflow:"), tasks: namesGranted(grants, "TASK_READ", "task:") };
}

/**
 * `GET /api/tasks/search`: Conductor's `SearchResult<TaskSummary>` from the task index (each execution's latest tasks,
 * written with its search row): `query` (Conductor's syntax over {@link TASK_QUERY_COLUMNS}), `freeText` (in ids,
 * names, the reason, input and output), `sort`, `start` and `size`.
 */
export async function searchTasks(db: D1Database, request: IRequest, readable: ReadableTasks): Promise<{ totalHits: number; results: JsonObject[] }> {
  const { start, size } = searchPage(request);
  const filter = taskFilter(request);
  applyReadableAny(filter, [
    { readable: readable.workflows, column: "task_index.workflow_name" },
    { readable: readable.tasks, column: "task_index.task_def_name" },
  ]);
  const order = orderBy(searchParam(request, "sort"), TASK_FIELDS);
  const where = whereOf(filter);
  const [count, page] = await db.batch([
    countHits(db, "task_index", where, filter.bindings, { start, size }),
    db
      .prepare(
        `SELECT task_id AS taskId, workflow_id AS workflowId, workflow_name AS workflowType, correlation_id AS correlationId,
           workflow_priority AS workflowPriority, task_type AS taskType, task_def_name AS taskDefName, reference_task_name AS referenceTaskName,
           status, domain, worker_id AS workerId, reason, scheduled_time AS scheduledTime, start_time AS startTime, end_time AS endTime,
           update_time AS updateTime, input, output
         FROM task_index ${where} ORDER BY ${order}, task_id LIMIT ? OFFSET ?`,
      )
      .bind(...filter.bindings, size, start),
  ]);
  const totalHits = (count!.results[0] as { total: number } | undefined)?.total ?? 0;
  return { totalHits, results: (page!.results as unknown as TaskSummaryRow[]).map(toTaskSummary) };
}
