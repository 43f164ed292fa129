import { jsonBytesWithin } from "../engine/json-bytes";
import { TERMINAL_TASK_STATUSES, type TaskExecution, type WorkflowExecution } from "../engine/model";
import { definitionReferenceName } from "../engine/plan";
import { failedTasksSignature, shownTaskDefName, shownTaskInput, shownTaskType, summaryRowOf, summaryText } from "../engine/view";
import { masked, maskedKeysOf } from "../engine/masking";
import { humanTaskEntry } from "../engine/tasks/human/entry";
import type { HumanUser } from "../engine/tasks/human/settings";
import { waitingMatch, writtenMatches } from "../engine/tasks/wait-for-webhook/matches";

/**
 * What the index knows of an execution. When this changes, the row must be rewritten; between such
 * changes (task to task) nothing is written, which keeps D1 off the transition path. `updateTime` moves
 * only with workflow-level changes (pause, resume, end...), and tells apart two states with the same
 * status: a row written for the first of pause, resume, pause would otherwise pass for the last.
 */
export function indexSignature(execution: WorkflowExecution): string {
  return `${workflowSignature(execution)}${TASKS_MARK}${execution.taskRevision ?? 0}`;
}

/** Where {@link indexSignature} turns from the workflow to its tasks. */
const TASKS_MARK = "#tasks:";

/**
 * What the execution's own row depends on, read without serialising its input and output (this runs at every change);
 * with the tasks waiting for webhook events, whose rows must not wait (an event finds a task only once its row is written).
 */
function workflowSignature(execution: WorkflowExecution): string {
  const failed = failedTasksSignature(execution);
  const waits = webhookWaitingTasks(execution).map((task) => task.taskId).join(",");
  // The correlation id too: a SET_CORRELATION_ID task changes it as the workflow runs.
  return `${execution.status}|${execution.startTime}|${execution.endTime}|${execution.updateTime}|${execution.workflowVersion}|${failed}|${waits}|${execution.correlationId ?? ""}`;
}

/** True for a WAIT_FOR_WEBHOOK task waiting for events sent to a webhook (with matches: see `matches.ts`). */
function waitsForWebhookEvents(task: TaskExecution): boolean {
  return task.taskType === "WAIT_FOR_WEBHOOK" && task.status === "IN_PROGRESS" && writtenMatches(task.inputData) !== undefined;
}

/** The execution's tasks waiting for webhook events; none in a test run, which real events never reach. */
function webhookWaitingTasks(execution: WorkflowExecution): TaskExecution[] {
  return execution.test === undefined ? execution.tasks.filter(waitsForWebhookEvents) : [];
}

/**
 * True when the execution has a task that is found through its rows: one waiting for webhook events (found by its
 * routing row), or one in a worker queue (a worker that polls it names it by its id alone, in `GET /api/tasks/{id}` or
 * a log line, found through the execution's row by the id's prefix). Its rows are then written at once, not held back.
 */
export function hasTasksFoundByRow(execution: WorkflowExecution): boolean {
  return execution.test === undefined && execution.tasks.some((task) => waitsForWebhookEvents(task) || task.pollable === true);
}

/** A task's row in the webhook routing table (`webhook_waits`): what an event sent to a webhook finds it by. */
export interface WebhookWaitRow {
  taskId: string;
  workflowVersion: number;
  /** Its reference name in the definition (a loop task's run `pay__2` is `pay`). */
  taskRefName: string;
  /** Its sorted JSONPath keys, as a JSON list. */
  paths: string;
  matchKey: string;
  createdOn: number;
}

/** The webhook routing rows of an execution as it stands: one per task waiting for webhook events whose matches can match. */
function webhookWaitRows(execution: WorkflowExecution): WebhookWaitRow[] {
  return webhookWaitingTasks(execution).flatMap((task) => {
    const taskRefName = definitionReferenceName(execution.definition, task);
    const match = waitingMatch(execution.workflowName, execution.workflowVersion, taskRefName, writtenMatches(task.inputData)!);
    if (match instanceof Error) return [];
    return [{ taskId: task.taskId, workflowVersion: execution.workflowVersion, taskRefName, paths: JSON.stringify(match.paths), matchKey: match.key, createdOn: task.startTime }];
  });
}

/**
 * True when the search rows last written (`written`, an {@link indexSignature}) differ from the execution only in its
 * tasks: the execution's own row is as it is, and only its task rows are behind (which may wait a little).
 */
export function onlyTasksChanged(execution: WorkflowExecution, written: string): boolean {
  return written.startsWith(`${workflowSignature(execution)}${TASKS_MARK}`);
}

/** Most task rows an execution has in the task index: its latest tasks (a long loop's earliest runs drop out). */
export const MAX_INDEXED_TASKS = 500;

/** Longest text kept in a task row's input, output or reason: a task search shows a summary, the task holds the rest. */
const TASK_TEXT_LIMIT = 1024;

function taskText(text: string): string {
  return summaryText(text, TASK_TEXT_LIMIT);
}

/** A task's row in the task index (`task_index`), as plain data. Times are epoch milliseconds (0: not yet). */
export interface TaskIndexRow {
  taskId: string;
  /** As the Task JSON shows it: a worker's (SIMPLE) task by its name. */
  taskType: string;
  taskDefName: string;
  referenceTaskName: string;
  status: string;
  domain: string | null;
  workerId: string | null;
  reason: string | null;
  scheduledTime: number;
  startTime: number;
  endTime: number;
  updateTime: number;
  /** JSON, cut at {@link TASK_TEXT_LIMIT} characters. */
  input: string;
  output: string;
}

/**
 * Most UTF-8 bytes of an execution's task rows as written, and apart of its human task rows: each list is bound to its
 * statement as one JSON text, a value D1 refuses past 2,000,000 bytes ("string or blob too big"), which failed the
 * whole search row, every retry alike (the execution never showed in search again, its job retried every 2 s). A row's
 * texts are cut by characters, up to three bytes each and escaped once more in the list: 500 task rows could be 4 MB.
 * Half the limit leaves room for the batch's other values. The webhook routing rows, which must all be written, go in
 * runs of this size instead, a statement each (see {@link runsWithinBytes}).
 */
export const MAX_INDEXED_ROWS_BYTES = 1_000_000;

/**
 * The rows of `rows` (oldest first) that fit in {@link MAX_INDEXED_ROWS_BYTES} written as one JSON array, in order: the
 * latest of those whose task has not ended (`active`, by position), then the latest of the others. A task still to run
 * or running is what a search by status, a worker's look-up or an operator wants found; one that started before a
 * loop or fork of many large rows would otherwise drop out first.
 */
function latestWithinBytes<Row>(rows: readonly Row[], active: (position: number) => boolean): Row[] {
  const kept: boolean[] = [];
  // The brackets; each row its JSON and a comma.
  let bytes = 2;
  for (const activeOnes of [true, false]) {
    for (let position = rows.length - 1; position >= 0; position--) {
      if (active(position) !== activeOnes) continue;
      const size = jsonBytesWithin(rows[position], MAX_INDEXED_ROWS_BYTES) + 1;
      if (bytes + size > MAX_INDEXED_ROWS_BYTES) break;
      bytes += size;
      kept[position] = true;
    }
  }
  return kept.length === 0 ? [] : rows.filter((_, position) => kept[position] === true);
}

/**
 * `rows` in runs, in order, each of which fits in {@link MAX_INDEXED_ROWS_BYTES} written as one JSON array (a row
 * larger alone is a run of its own): for rows that must all be written, each run bound to a statement of its own.
 */
function runsWithinBytes<Row>(rows: readonly Row[]): Row[][] {
  const runs: Row[][] = [];
  let run: Row[] = [];
  let bytes = 2;
  for (const row of rows) {
    const size = jsonBytesWithin(row, MAX_INDEXED_ROWS_BYTES) + 1;
    if (run.length > 0 && bytes + size > MAX_INDEXED_ROWS_BYTES) {
      runs.push(run);
      run = [];
      bytes = 2;
    }
    run.push(row);
    bytes += size;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * The task rows of an execution as it stands: its latest {@link MAX_INDEXED_TASKS} tasks, fewer when their rows are over
 * {@link MAX_INDEXED_ROWS_BYTES} (those not ended kept first, see {@link latestWithinBytes}).
 */
function taskIndexRows(execution: WorkflowExecution): TaskIndexRow[] {
  const maskedKeys = maskedKeysOf(execution.definition);
  const tasks = execution.tasks.slice(-MAX_INDEXED_TASKS);
  const rows = tasks.map((task) => ({
    taskId: task.taskId,
    taskType: shownTaskType(task),
    taskDefName: shownTaskDefName(task),
    referenceTaskName: task.referenceTaskName,
    status: task.status,
    domain: task.domain ?? null,
    workerId: task.workerId ?? null,
    reason: task.reasonForIncompletion === undefined ? null : taskText(task.reasonForIncompletion),
    scheduledTime: task.scheduledTime,
    startTime: task.startTime,
    endTime: task.endTime,
    updateTime: task.updateTime,
    input: taskText(JSON.stringify(shownTaskInput(task, execution))),
    output: taskText(JSON.stringify(masked(task.outputData, maskedKeys))),
  }));
  return latestWithinBytes(rows, (position) => !TERMINAL_TASK_STATUSES.has(tasks[position]!.status));
}

/** Most HUMAN task rows an execution has in the human task list: its latest. */
export const MAX_INDEXED_HUMAN_TASKS = 100;

/** Longest input or output JSON a human task row's entry keeps (longer ones are left out: the task itself has them). */
const HUMAN_ENTRY_TEXT_LIMIT = 8 * 1024;

/** A HUMAN task's row in the human task list (`human_tasks`), as plain data: the columns searched by, and its entry. */
export interface HumanIndexRow {
  taskId: string;
  taskRefName: string;
  definitionName: string;
  displayName: string;
  state: string;
  assigneeType: string | null;
  assignee: string | null;
  claimantType: string | null;
  claimant: string | null;
  createdOn: number;
  updatedOn: number;
  /** The HumanTaskEntry JSON. */
  entry: string;
}

/**
 * The human task rows of an execution as it stands: its latest {@link MAX_INDEXED_HUMAN_TASKS} HUMAN tasks, fewer when
 * their rows are over {@link MAX_INDEXED_ROWS_BYTES}.
 */
function humanIndexRows(execution: WorkflowExecution): HumanIndexRow[] {
  const humans = execution.tasks.filter((task) => task.taskType === "HUMAN").slice(-MAX_INDEXED_HUMAN_TASKS);
  const rows = humans.map((task) => {
    const entry = humanTaskEntry(task, execution);
    for (const key of ["input", "output"]) {
      if (JSON.stringify(entry[key]).length > HUMAN_ENTRY_TEXT_LIMIT) entry[key] = {};
    }
    const assignee = entry["assignee"] as HumanUser | undefined;
    const claimant = entry["claimant"] as HumanUser | undefined;
    return {
      taskId: task.taskId,
      taskRefName: task.referenceTaskName,
      definitionName: task.taskDefName,
      displayName: String(entry["displayName"]),
      state: String(entry["state"]),
      assigneeType: assignee?.userType ?? null,
      assignee: assignee?.user ?? null,
      claimantType: claimant?.userType ?? null,
      claimant: claimant?.user ?? null,
      createdOn: task.scheduledTime,
      updatedOn: task.updateTime,
      entry: JSON.stringify(entry),
    };
  });
  return latestWithinBytes(rows, (position) => !TERMINAL_TASK_STATUSES.has(humans[position]!.status));
}

/**
 * An execution's search row: the columns of `executions` (its summary, texts cut at `SUMMARY_TEXT_LIMIT`), with its
 * task rows, as plain data, so it can travel over RPC.
 */
export type IndexRow = ReturnType<typeof summaryRowOf> & {
  /** Its task rows, which replace those it had. */
  tasks: TaskIndexRow[];
  /** Its human task rows, which replace those it had (absent from rows made by code older than them, mid-deploy). */
  humanTasks?: HumanIndexRow[];
  /** Its webhook routing rows, which replace those it had (absent from rows made by code older than them, mid-deploy). */
  webhookWaits?: WebhookWaitRow[];
  /** True when the execution has written no task rows before (its first row): there are none to replace. */
  firstTaskRows: boolean;
  /**
   * The number of this write among its execution's (1, 2, ...): stored by the execution's object before the write
   * leaves it, so a write made after it (by the object's next instance too) has a higher one. Orders writes with the
   * same `updateTime` (see {@link upsertIndexRow}). Absent from rows made by code older than it, mid-deploy.
   */
  indexSequence?: number;
};

/**
 * The search row of an execution as it stands, with its task rows; `first` when it has written none before, `sequence`
 * its number among the execution's writes (see {@link IndexRow.indexSequence}).
 */
export function indexRow(execution: WorkflowExecution, first: boolean, sequence: number): IndexRow {
  return {
    ...summaryRowOf(execution),
    tasks: taskIndexRows(execution),
    humanTasks: humanIndexRows(execution),
    webhookWaits: webhookWaitRows(execution),
    firstTaskRows: first,
    indexSequence: sequence,
  };
}

/**
 * The statements writing an execution's search row and its task rows (see {@link upsertIndexRow}). The task rows are
 * replaced as a whole, and only when the row is written: an execution's writes usually reach D1 in order (one writer,
 * one write of it at a time), but one of a writer evicted with it on its way may land after a later one, which its
 * updateTime and sequence tell apart.
 */
export function indexRowStatements(db: D1Database, row: IndexRow): D1PreparedStatement[] {
  const statements = [upsertIndexRow(db, row)];
  if (!row.firstTaskRows) statements.push(...deleteTaskRows(db, row.workflowId, row));
  if (row.tasks.length > 0) statements.push(insertTaskRows(db, row));
  if ((row.humanTasks?.length ?? 0) > 0) statements.push(insertHumanRows(db, row));
  // Every one is written (an event finds its task by it), in as many statements as their size needs.
  for (const waits of runsWithinBytes(row.webhookWaits ?? [])) statements.push(insertWebhookWaitRows(db, row, waits));
  return statements;
}

/**
 * The condition, for the statements after {@link upsertIndexRow} in the same batch, that the upsert wrote the row: the
 * execution's stored row has this row's updateTime and sequence (`?1` the workflow id, `updateTime` and `sequence` the
 * parameters binding them, see {@link writeOrder}; a row without a sequence, from older code, by its updateTime alone).
 * A row older than the stored one (a write of a reset writer still on its way, see {@link upsertIndexRow}) changes
 * nothing, its task, human task and webhook rows included: they go with their execution's row, or not at all.
 */
function rowWritten(updateTime: string, sequence: string): string {
  return `EXISTS (SELECT 1 FROM executions WHERE workflow_id = ?1 AND update_time = ${updateTime} AND (${sequence} IS NULL OR index_sequence = ${sequence}))`;
}

/** What orders a row's writes: its updateTime and its sequence (null from older code, which sends none). */
function writeOrder(row: IndexRow): [updateTime: number, sequence: number | null] {
  return [row.updateTime, row.indexSequence ?? null];
}

/** The task rows of `row`, inserted in one statement (D1 binds at most 100 parameters: they go as one JSON array). */
function insertTaskRows(db: D1Database, row: IndexRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR REPLACE INTO task_index (task_id, workflow_id, workflow_name, correlation_id, workflow_priority, task_type, task_def_name,
         reference_task_name, status, domain, worker_id, reason, scheduled_time, start_time, end_time, update_time, input, output)
       SELECT json_extract(t.value, '$.taskId'), ?1, ?2, ?3, ?4, json_extract(t.value, '$.taskType'), json_extract(t.value, '$.taskDefName'), json_extract(t.value, '$.referenceTaskName'),
         json_extract(t.value, '$.status'), json_extract(t.value, '$.domain'), json_extract(t.value, '$.workerId'), json_extract(t.value, '$.reason'), json_extract(t.value, '$.scheduledTime'),
         json_extract(t.value, '$.startTime'), json_extract(t.value, '$.endTime'), json_extract(t.value, '$.updateTime'), json_extract(t.value, '$.input'), json_extract(t.value, '$.output')
       FROM json_each(?5) AS t WHERE ${rowWritten("?6", "?7")}`,
    )
    .bind(row.workflowId, row.workflowName, row.correlationId, row.priority, JSON.stringify(row.tasks), ...writeOrder(row));
}

/** The human task rows of `row`, inserted in one statement as its task rows are. */
function insertHumanRows(db: D1Database, row: IndexRow): D1PreparedStatement {
  const field = (name: keyof HumanIndexRow) => `json_extract(t.value, '$.${name}')`;
  return db
    .prepare(
      `INSERT OR REPLACE INTO human_tasks (task_id, workflow_id, workflow_name, task_ref_name, definition_name, display_name, state, assignee_type, assignee,
         claimant_type, claimant, created_on, updated_on, entry)
       SELECT ${field("taskId")}, ?1, ?2, ${field("taskRefName")}, ${field("definitionName")}, ${field("displayName")}, ${field("state")}, ${field("assigneeType")},
         ${field("assignee")}, ${field("claimantType")}, ${field("claimant")}, ${field("createdOn")}, ${field("updatedOn")}, ${field("entry")}
       FROM json_each(?3) AS t WHERE ${rowWritten("?4", "?5")}`,
    )
    .bind(row.workflowId, row.workflowName, JSON.stringify(row.humanTasks ?? []), ...writeOrder(row));
}

/** Webhook routing rows `waits` of `row`, inserted in one statement as its task rows are. */
function insertWebhookWaitRows(db: D1Database, row: IndexRow, waits: readonly WebhookWaitRow[]): D1PreparedStatement {
  const field = (name: keyof WebhookWaitRow) => `json_extract(t.value, '$.${name}')`;
  return db
    .prepare(
      `INSERT OR REPLACE INTO webhook_waits (task_id, workflow_id, workflow_name, workflow_version, task_ref_name, paths, match_key, created_on)
       SELECT ${field("taskId")}, ?1, ?2, ${field("workflowVersion")}, ${field("taskRefName")}, ${field("paths")}, ${field("matchKey")}, ${field("createdOn")}
       FROM json_each(?3) AS t WHERE ${rowWritten("?4", "?5")}`,
    )
    .bind(row.workflowId, row.workflowName, JSON.stringify(waits), ...writeOrder(row));
}

/** The deletion of an execution's task rows; with `row`, only while its stored row is that one (see {@link rowWritten}). */
function deleteTaskRows(db: D1Database, workflowId: string, row?: IndexRow): D1PreparedStatement[] {
  return ["task_index", "human_tasks", "webhook_waits"].map((table) =>
    row === undefined
      ? db.prepare(`DELETE FROM ${table} WHERE workflow_id = ?1`).bind(workflowId)
      : db.prepare(`DELETE FROM ${table} WHERE workflow_id = ?1 AND ${rowWritten("?2", "?3")}`).bind(workflowId, ...writeOrder(row)),
  );
}

/**
 * The upsert of one search row; an older row arriving after a newer one changes nothing (nor do its task rows, see
 * {@link rowWritten}), and neither does a row of a removed execution arriving after its removal (see
 * {@link deleteIndexRow}): its tombstone names an execution created at or after this row's. Older by its updateTime, which every code version compares, and, with the same updateTime, by
 * its sequence (`?18`): the object's writes between two workflow-level changes share their updateTime, and one of a
 * writer evicted with its batch on its way may land after a later one. The sequence only breaks that tie, rather than
 * ordering every write alone, because the stored one may be behind: code older than the column (mid-deploy, either
 * side) leaves it as it was (0 in a row it inserted), its rows carrying none. A write without one (null) is taken by its
 * updateTime alone, as that code's upsert takes it, and leaves the stored sequence; the object's next write numbers
 * above every one it sent, so a stored sequence never holds back a newer write of it (nor could it past the next
 * workflow-level change, which moves updateTime).
 */
function upsertIndexRow(db: D1Database, row: IndexRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, correlation_id, parent_workflow_id, reason,
         priority, create_time, start_time, end_time, update_time, input, output, failed_reference_task_names, failed_task_names, event, index_sequence)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, COALESCE(?18, 0)
       WHERE ${notRemoved("?1", "?9")}
       ON CONFLICT (workflow_id) DO UPDATE SET
         workflow_version = excluded.workflow_version, status = excluded.status, reason = excluded.reason, correlation_id = excluded.correlation_id,
         create_time = excluded.create_time, start_time = excluded.start_time, end_time = excluded.end_time, update_time = excluded.update_time,
         input = excluded.input, output = excluded.output, failed_reference_task_names = excluded.failed_reference_task_names,
         failed_task_names = excluded.failed_task_names, event = COALESCE(excluded.event, executions.event),
         index_sequence = COALESCE(?18, executions.index_sequence)
       WHERE excluded.update_time > executions.update_time
         OR (excluded.update_time = executions.update_time AND (?18 IS NULL OR ?18 >= executions.index_sequence))`,
    )
    .bind(
      row.workflowId,
      row.workflowName,
      row.workflowVersion,
      row.status,
      row.correlationId,
      row.parentWorkflowId,
      row.reasonForIncompletion,
      row.priority,
      row.createTime,
      row.startTime,
      row.endTime,
      row.updateTime,
      row.input,
      row.output,
      row.failedReferenceTaskNames,
      // A row made by code older than the column (mid-deploy) has none: null, as a row indexed before it.
      row.failedTaskNames ?? null,
      // Likewise. An execution's event is set at its start and never changes, so a row without one (null) keeps the
      // stored one (the upsert's COALESCE): a row of older code written mid-deploy, after one of newer code, erases nothing.
      row.event ?? null,
      row.indexSequence ?? null,
    );
}

/**
 * How long a removed execution's tombstone (`removed_executions`) refuses its late row writes: far longer than a write
 * can be on its way. A write lives only in memory: in its execution's call to the writer, in the writer's queue (which
 * holds about one write per execution, each waiting for its own before sending the next, and sends dozens of them per D1
 * round trip), or in the writer's D1 batch (D1 ends a query after 30 s). Nothing retries
 * it later: the writer answers its caller, and a caller that hears of no success writes afresh, never after its removal.
 */
export const REMOVED_TOMBSTONE_KEEP_MS = 24 * 60 * 60 * 1000;

/**
 * The condition that the execution `workflowId` (an SQL expression) of a row created at `createTime` was not removed:
 * no tombstone names it with a create time at or after the row's. A later execution under the same id (started once
 * its object's own tombstone is gone: an event's start derives its id from the event) was created after the removal,
 * so is not held back. A lookup by the tombstones' primary key.
 */
export function notRemoved(workflowId: string, createTime: string): string {
  return `NOT EXISTS (SELECT 1 FROM removed_executions WHERE workflow_id = ${workflowId} AND create_time >= ${createTime})`;
}

/** What a removal knows of the execution it removes: its create time (its last start's), and when it is removed. */
export interface Removal {
  createTime: number;
  removedAt: number;
}

/**
 * The deletion of an execution's search row and its task rows, leaving its tombstone: a row write of it landing after
 * this (one of an index writer reset with its batch on its way) then changes nothing (see {@link upsertIndexRow}), its
 * task rows neither (they go only with a row written, see {@link rowWritten}), and the metrics do not count it again.
 */
export function deleteIndexRow(db: D1Database, workflowId: string, removal: Removal): D1PreparedStatement[] {
  return [
    db.prepare(`DELETE FROM executions WHERE workflow_id = ?`).bind(workflowId),
    ...deleteTaskRows(db, workflowId),
    db
      .prepare(
        `INSERT INTO removed_executions (workflow_id, create_time, removed_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (workflow_id) DO UPDATE SET create_time = MAX(create_time, excluded.create_time), removed_at = excluded.removed_at`,
      )
      .bind(workflowId, removal.createTime, removal.removedAt),
  ];
}

/**
 * Most tombstones one batch prunes. Pruning rides on a removal's batch (one transaction, which holds D1's writes while
 * it runs), so its work is bounded rather than scaled by a backlog: a day after a bulk removal of a million executions
 * with no removal since, the next removal would otherwise delete them all in its batch, stalling the database and
 * risking D1's time limit, which would fail that removal and every one after it the same way. A batch adds at most
 * 40 tombstones (the writer's `INDEX_MAX_BATCH`), so each removal's batch takes a backlog down by far more than it adds.
 */
export const REMOVED_TOMBSTONE_PRUNE_LIMIT = 1000;

/**
 * The deletion of the oldest tombstones (at most {@link REMOVED_TOMBSTONE_PRUNE_LIMIT}) of executions removed longer
 * than {@link REMOVED_TOMBSTONE_KEEP_MS} before `now`.
 */
export function pruneRemovedTombstones(db: D1Database, now: number): D1PreparedStatement {
  return db
    .prepare(
      `DELETE FROM removed_executions WHERE workflow_id IN (
         SELECT workflow_id FROM removed_executions WHERE removed_at < ?1 ORDER BY removed_at LIMIT ?2)`,
    )
    .bind(now - REMOVED_TOMBSTONE_KEEP_MS, REMOVED_TOMBSTONE_PRUNE_LIMIT);
}

/** An idempotency key an execution was started with: keys are per workflow name. */
export interface HeldIdempotencyKey {
  workflowName: string;
  key: string;
}

/** The release of an idempotency key, only while `workflowId` still holds it (FAIL_ON_RUNNING may have handed it on). */
export function releaseIdempotencyKey(db: D1Database, workflowId: string, held: HeldIdempotencyKey): D1PreparedStatement {
  return db.prepare(`DELETE FROM idempotency_keys WHERE workflow_name = ? AND idempotency_key = ? AND workflow_id = ?`).bind(held.workflowName, held.key, workflowId);
}
