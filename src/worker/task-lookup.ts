import { executionIdPrefix } from "../engine/task-id";
import { executionStub, retryingExecutionCall } from "./executions";

/** Most executions whose ids share a task id's prefix that one lookup asks (64 random bits: one, in practice). */
const MAX_CANDIDATES = 4;

/** Where a task was found: its execution, and what requests on it are scoped by. */
export interface FoundTask {
  workflowId: string;
  workflowName: string;
  /** Its definition's reference name (a loop task's run `approve__2` is `approve`). */
  taskRefName: string;
  taskName: string;
}

/**
 * The execution holding task `taskId`, found through the execution index by the prefix a task's id shares with its
 * execution's (see `engine/task-id.ts`). Undefined when none does: an unknown id, an execution removed, one whose
 * search row is not written yet (it lags the start by up to a second, unless a task of it waits in a worker queue),
 * or one started before task ids carried the prefix whose execution has not written its task rows since it woke under
 * this code (see {@link lookUpByTaskRow}). Looked up once per `request` (a request names one task).
 */
export function findTask(request: object, env: Env, taskId: string): Promise<FoundTask | undefined> {
  // Once per request: the guard finds the task to check the caller's rights, and the route then serves it.
  let found = lookups.get(request);
  if (found === undefined || found.taskId !== taskId) {
    found = { taskId, task: lookUpTask(env, taskId) };
    lookups.set(request, found);
  }
  return found.task;
}

const lookups = new WeakMap<object, { taskId: string; task: Promise<FoundTask | undefined> }>();

/**
 * How long a lookup that finds no execution by the prefix looks again, and how often: 1.45 s in all, longer than a
 * running execution's row takes (its start waits up to 500 ms to write it once, then the writer's batch; 0.62–0.77 s
 * measured). A client reading a task by the id a start's answer just gave it (the JavaScript client's `getTask` after
 * `executeWorkflow`, as its README example does) is answered, not told 404. An execution with a task in a worker queue
 * writes its row as the task is queued, but the push and the write run side by side: a worker that polls the task at
 * once and names it in its next request can be a few milliseconds ahead of the row. Only an id no execution holds
 * waits the whole time (on timers, not CPU).
 */
const ROW_LAG_RETRIES_MS = [50, 100, 200, 300, 400, 400] as const;

/**
 * A task whose id does not share its execution's prefix: one created before task ids carried it, by code older than
 * the scheme, still running after the deploy that brought it. No execution's id starts with its prefix, so it is found
 * through its row in the task search index (by its whole id), which its execution writes again once it wakes under
 * the new code (its stored index signature is of the older form). Only asked when the prefix finds no execution.
 */
async function lookUpByTaskRow(env: Env, taskId: string): Promise<FoundTask | undefined> {
  const id = taskId.toLowerCase();
  const row = await env.DB.prepare("SELECT workflow_id FROM task_index WHERE task_id = ?1").bind(id).first<{ workflow_id: string }>();
  if (row === null) return undefined;
  const scope = await retryingExecutionCall(env, row.workflow_id, (stub) => stub.getTaskScope(id));
  if (scope === null || scope.taskRefName === null || scope.taskName === null) return undefined;
  return { workflowId: row.workflow_id, workflowName: scope.workflowName, taskRefName: scope.taskRefName, taskName: scope.taskName };
}

/**
 * The execution holding task `taskId` (see {@link findTask}), looked up afresh: for callers outside a request (an
 * UPDATE_TASK naming a task by its id).
 */
export async function lookUpTask(env: Env, taskId: string): Promise<FoundTask | undefined> {
  const prefix = executionIdPrefix(taskId);
  if (prefix === undefined) return undefined;
  // The prefix ends with "-", and "." sorts right after it: the range holds every id starting with the prefix.
  const upper = `${prefix.slice(0, -1)}.`;
  const candidates = env.DB.prepare("SELECT workflow_id FROM executions WHERE workflow_id >= ?1 AND workflow_id < ?2 LIMIT ?3").bind(prefix, upper, MAX_CANDIDATES);
  let rows = await candidates.all<{ workflow_id: string }>();
  if (rows.results.length === 0) {
    const older = await lookUpByTaskRow(env, taskId);
    if (older !== undefined) return older;
  }
  for (const wait of ROW_LAG_RETRIES_MS) {
    if (rows.results.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, wait));
    rows = await candidates.all<{ workflow_id: string }>();
  }
  return taskAmong(env, taskId, rows.results.map((row) => row.workflow_id));
}

/**
 * Task `taskId` in the first of executions `workflowIds` (its candidates: see {@link lookUpCandidates}) that holds it,
 * asking each in turn; undefined when none does.
 */
export async function taskAmong(env: Env, taskId: string, workflowIds: readonly string[]): Promise<FoundTask | undefined> {
  const id = taskId.toLowerCase();
  for (const workflowId of workflowIds) {
    const scope = await retryingExecutionCall(env, workflowId, (stub) => stub.getTaskScope(id));
    if (scope !== null && scope.taskRefName !== null && scope.taskName !== null) return { workflowId, workflowName: scope.workflowName, taskRefName: scope.taskRefName, taskName: scope.taskName };
  }
  return undefined;
}

/** Each of `prefixes`' executions (at most {@link MAX_CANDIDATES} a prefix), in one statement whatever their number. */
async function executionsByPrefix(env: Env, prefixes: readonly string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  if (prefixes.length === 0) return found;
  // The list is one bound parameter (D1 binds at most 100): each prefix's range, as lookUpTask reads it, by the index.
  const { results } = await env.DB.prepare(
    "SELECT prefix, workflow_id FROM (SELECT wanted.value AS prefix, e.workflow_id, row_number() OVER (PARTITION BY wanted.value ORDER BY e.workflow_id) AS n " +
      "FROM json_each(?1) AS wanted JOIN executions AS e ON e.workflow_id >= wanted.value AND e.workflow_id < substr(wanted.value, 1, length(wanted.value) - 1) || '.') WHERE n <= ?2",
  )
    .bind(JSON.stringify(prefixes), MAX_CANDIDATES)
    .all<{ prefix: string; workflow_id: string }>();
  for (const row of results) found.set(row.prefix, [...(found.get(row.prefix) ?? []), row.workflow_id]);
  return found;
}

/**
 * The executions that may hold each of `taskIds` (by its lower-case id), as {@link lookUpTask} finds them, for a
 * request naming many tasks: each step is one D1 statement for all the ids, and the wait for the search rows of
 * executions not written yet ({@link ROW_LAG_RETRIES_MS}) is waited once for all the ids still missing, not once an
 * id (100 unknown ids waited 1.45 s each, past any client's timeout). At most 2 + {@link ROW_LAG_RETRIES_MS}' length
 * statements, whatever the number of ids. An id no execution may hold has none; ask the candidates with
 * {@link taskAmong}. A task found only by its task index row (see {@link lookUpByTaskRow}) has that row's execution.
 */
export async function lookUpCandidates(env: Env, taskIds: readonly string[]): Promise<Map<string, string[]>> {
  const prefixOf = new Map<string, string>();
  for (const taskId of taskIds) {
    const prefix = executionIdPrefix(taskId);
    if (prefix !== undefined) prefixOf.set(taskId.toLowerCase(), prefix);
  }
  const byPrefix = await executionsByPrefix(env, [...new Set(prefixOf.values())]);
  const candidates = new Map<string, string[]>();
  const missing = (): string[] => [...prefixOf.keys()].filter((id) => !candidates.has(id) && !byPrefix.has(prefixOf.get(id)!));
  const unprefixed = missing();
  if (unprefixed.length > 0) {
    const { results } = await env.DB.prepare("SELECT task_id, workflow_id FROM task_index WHERE task_id IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify(unprefixed))
      .all<{ task_id: string; workflow_id: string }>();
    for (const row of results) candidates.set(row.task_id, [row.workflow_id]);
  }
  for (const wait of ROW_LAG_RETRIES_MS) {
    const waiting = missing();
    if (waiting.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, wait));
    for (const [prefix, workflowIds] of await executionsByPrefix(env, [...new Set(waiting.map((id) => prefixOf.get(id)!))])) byPrefix.set(prefix, workflowIds);
  }
  for (const [id, prefix] of prefixOf) if (!candidates.has(id)) candidates.set(id, byPrefix.get(prefix) ?? []);
  return candidates;
}
