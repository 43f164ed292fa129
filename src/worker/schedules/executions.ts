import type { IRequest } from "itty-router";
import type { FireRecord } from "../../actors/schedule-trigger";
import type { JsonObject } from "../../engine/model";
import { validationError } from "../http/errors";
import { applyFreeText, applyQuery, applyReadable, countHits, orderBy, searchPage, searchParam, sortParams, type Filter, type SearchFields } from "../search";
import type { NameFilter } from "../auth/permissions";
import type { StoredSchedule } from "./store";

/** How many fires of one schedule are kept: the latest. */
export const MAX_EXECUTIONS_PER_SCHEDULE = 1_000;

/**
 * The most of a schedule's start request one fire's record keeps (UTF-16 units of its JSON). A request over it is
 * kept without its `input`: its execution holds that (`workflowId`), and a schedule's input of up to MAX_PAYLOAD_BYTES
 * copied into each of its 1,000 records would take most of a D1 database, and page after page of searches.
 */
const MAX_RECORDED_REQUEST_LENGTH = 16 * 1024;

/** The start request a fire's record keeps (see {@link MAX_RECORDED_REQUEST_LENGTH}). */
function recordedRequest(request: StoredSchedule["config"]["startWorkflowRequest"]): string {
  const whole = JSON.stringify(request);
  if (whole.length <= MAX_RECORDED_REQUEST_LENGTH) return whole;
  const { input: _input, ...rest } = request;
  return JSON.stringify(rest);
}

/**
 * States a query may name: those a fire ends in, and Orkes' `POLLED`, a fire on its way, which is never stored (a row is
 * written once it has started) and so matches nothing. Conductor's UI asks for all three.
 */
const STATES = ["POLLED", "EXECUTED", "FAILED"] as const;

const FIELDS: SearchFields = {
  query: {
    scheduleName: "schedule_name",
    workflowName: "workflow_name",
    workflowType: "workflow_name",
    state: "state",
    status: "state",
    workflowId: "workflow_id",
    executionId: "execution_id",
    scheduledTime: "scheduled_time",
    executionTime: "execution_time",
    startTime: "execution_time",
  },
  // Every column of Conductor's UI's table, which sorts on any.
  sort: {
    scheduledTime: "scheduled_time",
    executionTime: "execution_time",
    startTime: "execution_time",
    scheduleName: "schedule_name",
    workflowName: "workflow_name",
    state: "state",
    workflowId: "workflow_id",
    executionId: "execution_id",
    reason: "reason",
    // Orkes' docs' names: their example sorts by `name`, and they list `workflowType` and `status`, as the query takes them.
    name: "schedule_name",
    workflowType: "workflow_name",
    status: "state",
  },
  defaultOrder: "execution_time DESC",
  checkValues: (column, values) => {
    const unknown = column === "state" ? values.filter((value) => !(STATES as readonly string[]).includes(value)) : [];
    if (unknown.length > 0) throw validationError("Invalid search", [{ path: "query", message: `unknown state ${unknown.join(", ")}; expected one of ${STATES.join(", ")}` }]);
  },
};

/**
 * The statements recording `outcomes` of `schedule`'s fires (a fire recorded before is rewritten: the same fire
 * started again finds the execution it started the first time) and dropping all but its latest
 * {@link MAX_EXECUTIONS_PER_SCHEDULE}: for one batch. Each record's `executionTime` is when its start was made, the
 * `_executedTime` of its workflow's input, as Conductor's scheduler records it (SchedulerService builds the record with
 * the time and the start's input from it); a fire started again that finds the execution an earlier run started
 * carries the time that execution's input holds (see ScheduleTrigger), so its record is rewritten with the same time.
 */
export function recordFireStatements(db: D1Database, schedule: StoredSchedule, outcomes: readonly FireRecord[]): D1PreparedStatement[] {
  const { config } = schedule;
  const statements = outcomes.map((outcome) =>
    db
      .prepare(
        // Only while the schedule exists: one deleted while its fires were starting keeps no records behind (a new
        // schedule of its name would show them).
        `INSERT INTO schedule_executions (execution_id, schedule_name, workflow_name, scheduled_time, execution_time, state, workflow_id, reason, zone_id, start_workflow_request)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE EXISTS (SELECT 1 FROM schedules WHERE name = ?2)
         ON CONFLICT (schedule_name, scheduled_time) DO UPDATE SET execution_time = excluded.execution_time, state = excluded.state,
           workflow_id = excluded.workflow_id, reason = excluded.reason, workflow_name = excluded.workflow_name,
           zone_id = excluded.zone_id, start_workflow_request = excluded.start_workflow_request`,
      )
      .bind(
        outcome.executionId,
        schedule.name,
        schedule.workflowName,
        outcome.scheduledTime,
        outcome.executedTime,
        "workflowId" in outcome ? "EXECUTED" : "FAILED",
        "workflowId" in outcome ? outcome.workflowId : null,
        "refused" in outcome ? outcome.refused : null,
        config.zoneId,
        recordedRequest(config.startWorkflowRequest),
      ),
  );
  const trim = db
    .prepare(
      `DELETE FROM schedule_executions WHERE schedule_name = ?1 AND scheduled_time < (
         SELECT scheduled_time FROM schedule_executions WHERE schedule_name = ?1 ORDER BY scheduled_time DESC LIMIT 1 OFFSET ?2)`,
    )
    .bind(schedule.name, MAX_EXECUTIONS_PER_SCHEDULE - 1);
  return [...statements, trim];
}

interface ExecutionRow {
  execution_id: string;
  schedule_name: string;
  workflow_name: string;
  scheduled_time: number;
  execution_time: number;
  state: string;
  workflow_id: string | null;
  reason: string | null;
  zone_id: string;
  start_workflow_request: string;
}

/** Orkes' WorkflowScheduleExecutionModel of a stored fire. */
function executionJson(row: ExecutionRow): JsonObject {
  const json: JsonObject = {
    executionId: row.execution_id,
    scheduleName: row.schedule_name,
    workflowName: row.workflow_name,
    scheduledTime: row.scheduled_time,
    executionTime: row.execution_time,
    state: row.state,
    zoneId: row.zone_id,
    startWorkflowRequest: JSON.parse(row.start_workflow_request) as JsonObject,
  };
  if (row.workflow_id !== null) json["workflowId"] = row.workflow_id;
  if (row.reason !== null) json["reason"] = row.reason;
  return json;
}

/**
 * Schedule `scheduleName`'s latest `limit` fires of workflows `readable` allows, the latest first (Conductor OSS's
 * execution history of a schedule). Each fire is checked against the workflow it started, as `search/executions`
 * checks it: a schedule moved to another workflow keeps the fires of the one before, and a caller who may read the
 * schedule now (its workflow now) may not read the start requests and executions of the other.
 */
export async function latestScheduleExecutions(db: D1Database, scheduleName: string, limit: number, readable: NameFilter): Promise<JsonObject[]> {
  const filter: Filter = { clauses: ["schedule_name = ?"], bindings: [scheduleName] };
  applyReadable(filter, readable, "schedule_executions");
  const rows = await db
    .prepare(`SELECT * FROM schedule_executions WHERE ${filter.clauses.join(" AND ")} ORDER BY scheduled_time DESC, execution_id LIMIT ?`)
    .bind(...filter.bindings, limit)
    .all<ExecutionRow>();
  return rows.results.map(executionJson);
}

/**
 * `GET /api/scheduler/search/executions` (Orkes' SchedulerClient `search`): `SearchResult<WorkflowScheduleExecutionModel>`
 * of the fires of schedules whose workflow the caller may read, the latest first unless `sort` says otherwise;
 * `query` as the workflow search's (`scheduleName = 'nightly' AND state = 'FAILED'`), `freeText` within the schedule
 * and workflow names, the started execution's id and the reason. `totalHits` is counted as the workflow search counts
 * it ({@link countHits}): each schedule keeps 1,000 fires, and a count of every schedule's would read them all on each page.
 */
export async function searchScheduleExecutions(db: D1Database, request: IRequest, readable: NameFilter): Promise<{ totalHits: number; results: JsonObject[] }> {
  const { start, size } = searchPage(request);
  const filter: Filter = { clauses: [], bindings: [] };
  applyReadable(filter, readable, "schedule_executions");
  const query = searchParam(request, "query");
  if (query !== undefined) applyQuery(filter, query, FIELDS);
  applyFreeText(filter, searchParam(request, "freeText"), ["schedule_name", "workflow_name", "workflow_id", "reason"]);
  const order = orderBy(sortParams(request), FIELDS);
  const where = filter.clauses.length > 0 ? `WHERE ${filter.clauses.join(" AND ")}` : "";
  const [count, page] = await db.batch([
    countHits(db, "schedule_executions", where, filter.bindings, { start, size }),
    db.prepare(`SELECT * FROM schedule_executions ${where} ORDER BY ${order}, execution_id LIMIT ? OFFSET ?`).bind(...filter.bindings, size, start),
  ]);
  const totalHits = (count!.results[0] as { total: number } | undefined)?.total ?? 0;
  return { totalHits, results: (page!.results as unknown as ExecutionRow[]).map(executionJson) };
}
