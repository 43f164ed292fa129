/**
 * Orkes' human task API on the worker's side: who the caller is to a human task (their groups, whether they may read
 * its workflow or complete it from outside), the task itself through its execution, and the human task list in D1
 * (`human_tasks`, written with the execution's search rows, so within about a second of each change).
 */
import type { IRequest } from "itty-router";
import type { JsonObject } from "../engine/model";
import { listedEntry } from "../engine/tasks/human/entry";
import { isAssignee, type HumanCaller } from "../engine/tasks/human/progress";
import type { HumanUser } from "../engine/tasks/human/settings";
import { isOutsideReservedName } from "./auth/grants";
import { namesGranted } from "./auth/permissions";
import { executionStub, retryingExecutionCall } from "./executions";
import { principalOf, taskChecks } from "./guard";
import { ApiError, notFound, validationError } from "./http/errors";
import { addIn, applyFreeText, applyReadableAny, countHits, MAX_LIKE_PATTERN_BYTES, utf8Length, whereOf, type Filter } from "./search";
import { GroupRepository } from "./security/groups";
import { findTask, type FoundTask } from "./task-lookup";
import type { HumanTaskSearchBody } from "./human-schemas";

/** A human task as a route finds it: where it is, its entry, and who the caller is to it. */
export interface HumanTaskAtHand {
  found: FoundTask;
  entry: JsonObject;
  caller: HumanCaller;
}

/** The groups user `userId` belongs to, by id. */
export async function groupIdsOf(env: Env, userId: string): Promise<string[]> {
  return (await new GroupRepository(env.DB).groupsOf(userId)).map((group) => group.id);
}

function humanTaskNotFound(taskId: string): ApiError {
  return notFound(`Human task ${taskId} not found (no execution holds it: tasks are found by id once their execution is searchable, which a lookup waits up to 1.45 s for)`);
}

/** The refusal of a HUMAN task the caller may not see. Its workflow is not named: the caller may not know of it. */
function humanTaskForbidden(taskId: string): ApiError {
  return new ApiError(403, "PERMISSION_DENIED", `Human task ${taskId} is not assigned to or claimed by you or a group of yours, and you may not read its workflow`);
}

/** Who the caller is, for every human task a request names: their id and groups, and their rights, read once. */
export interface HumanCallerContext {
  userId: string;
  groups: string[];
  checks: Awaited<ReturnType<typeof taskChecks>>;
  /** An outside sign-in named like this service's own user (see `isOutsideReservedName`): that user's tasks and groups are not its. */
  impostor: boolean;
}

/** The {@link HumanCallerContext} of `request`'s caller. */
export async function humanCallerContext(request: IRequest, env: Env): Promise<HumanCallerContext> {
  const principal = principalOf(request);
  const impostor = isOutsideReservedName(principal);
  const [groups, checks] = await Promise.all([impostor ? [] : groupIdsOf(env, principal.userId), taskChecks(request, env)]);
  return { userId: principal.userId, groups, checks, impostor };
}

/**
 * HUMAN task `taskId` and who the caller is to it; 404 when there is no such HUMAN task (to a caller who may learn
 * that, else the 403), 403 when the caller may not see it (see {@link mayView}). A request naming several tasks reads the caller's `context` once for all of them, and
 * gives where each task was `located` (looked up together: see `lookUpCandidates`).
 */
export async function humanTaskAtHand(
  request: IRequest,
  env: Env,
  taskId: string,
  context: Promise<HumanCallerContext> = humanCallerContext(request, env),
  located?: Promise<FoundTask | undefined>,
): Promise<HumanTaskAtHand> {
  const [found, known] = await Promise.all([located ?? findTask(request, env, taskId), context]);
  // Whether an id names no task, or a task that is no HUMAN one, is told only to whom `GET /api/tasks/{taskId}` would
  // tell it; anyone else gets the 403 a stranger's HUMAN task gets, so the answer tells them nothing of what exists.
  if (found === undefined) throw (await known.checks.readUnknownTask(taskId)) ? humanTaskNotFound(taskId) : humanTaskForbidden(taskId);
  const [entryJson, manager, workflowReader, taskReader] = await Promise.all([
    retryingExecutionCall(env, found.workflowId, (stub) => stub.getHumanTask(taskId.toLowerCase())),
    known.checks.complete(found),
    known.checks.read(found.workflowId, found.workflowName),
    known.checks.readTask(taskId, found),
  ]);
  if (entryJson === null) throw taskReader || workflowReader || manager ? humanTaskNotFound(taskId) : humanTaskForbidden(taskId);
  const entry = JSON.parse(entryJson) as JsonObject;
  // Claiming an open task stays with readers of its workflow; one who may read only the task (TASK_READ on its name)
  // sees it, as at GET /api/tasks/{taskId}, and acts on it only as its assignee or claimant.
  const caller: HumanCaller = { userId: known.userId, groups: known.groups, manager, reader: workflowReader, ...(known.impostor ? { impostor: true } : {}) };
  if (!taskReader && !mayView(entry, caller)) throw humanTaskForbidden(taskId);
  return { found, entry, caller };
}

/** Whether `caller` may see human task `entry`: its assignee or claimant (a group's member too), or one who may read its workflow or complete it. */
export function mayView(entry: JsonObject, caller: HumanCaller): boolean {
  if (caller.reader || caller.manager) return true;
  if (caller.impostor === true) return false;
  return [entry["assignee"], entry["claimant"]].some((user) => isAssignee(user as HumanUser | undefined, caller.userId, caller.groups));
}

/** A GLOB pattern of `text`, where `*` matches anything and every other character stands for itself. */
function globOf(text: string): string {
  return text.replace(/[?[]/g, (c) => `[${c}]`);
}

/**
 * How a search matches one of its texts: exactly, or, when it holds a `*` (matching anything), as a GLOB pattern, which
 * D1 takes up to 50 bytes long (a longer one is the caller's 400, naming `path`).
 */
function textMatch(text: string, path: string): { eq: string } | { glob: string } {
  if (!text.includes("*")) return { eq: text };
  const glob = globOf(text);
  if (utf8Length(glob) > MAX_LIKE_PATTERN_BYTES) {
    throw validationError("Invalid human task search", [{ path, message: `"${text.slice(0, 60)}…" holds a *, so it is a pattern, and a pattern may be at most ${MAX_LIKE_PATTERN_BYTES} bytes long` }]);
  }
  return { glob };
}

/** SQL true when `expression` matches the {@link textMatch} that `match` (a JSON object in SQL) is. */
function matchesText(expression: string, match: string): string {
  return `(${expression} = json_extract(${match}, '$.eq') OR ${expression} GLOB json_extract(${match}, '$.glob'))`;
}

/** Rows assigned to or claimed by one of `users` (of the column pair `prefix_type`, `prefix`; of any kind for one without `userType`), `*` matching anything in a name. */
function addUsers(filter: Filter, prefix: "assignee" | "claimant", users: ReadonlyArray<{ user: string; userType?: HumanUser["userType"] | undefined }>): void {
  if (users.length === 0) return;
  // One JSON parameter for the list: D1 binds at most 100 a statement, and nests at most 100 ORs deep.
  filter.clauses.push(
    `EXISTS (SELECT 1 FROM json_each(?) AS wanted WHERE (json_extract(wanted.value, '$.type') IS NULL OR ${prefix}_type = json_extract(wanted.value, '$.type')) AND ${matchesText(prefix, "wanted.value")})`,
  );
  filter.bindings.push(JSON.stringify(users.map((user, index) => ({ type: user.userType ?? null, ...textMatch(user.user, `${prefix}s[${index}].user`) }))));
}

/**
 * The rows the caller sees: for ADMIN, those of the workflows they may read (as workflow search shows them) and of the
 * task names they may read tasks of; for INBOX, those assigned to or claimed by them or a group of theirs, and those
 * waiting, open to anyone, in workflows they may read.
 */
async function applyVisibility(filter: Filter, request: IRequest, env: Env, searchType: "ADMIN" | "INBOX"): Promise<void> {
  const principal = principalOf(request);
  const workflows = namesGranted(principal.grants, "WORKFLOW_READ", "workflow:");
  const readable: Filter = { clauses: [], bindings: [] };
  if (searchType === "ADMIN") {
    // Those of the workflows the caller may read, and those of the task names it may read tasks of.
    applyReadableAny(readable, [
      { readable: workflows, column: "human_tasks.workflow_name" },
      { readable: namesGranted(principal.grants, "TASK_READ", "task:"), column: "human_tasks.definition_name" },
    ]);
  } else {
    // The open tasks an inbox lists are those its owner may claim: of the workflows they may read.
    applyReadableAny(readable, [{ readable: workflows, column: "human_tasks.workflow_name" }]);
  }
  // Always a clause: the display names' query has no other.
  const mayRead = readable.clauses.length === 0 ? "1" : readable.clauses.join(" AND ");
  if (searchType === "ADMIN") {
    filter.clauses.push(`(${mayRead})`);
    filter.bindings.push(...readable.bindings);
    return;
  }
  const open = `(state = 'ASSIGNED' AND assignee IS NULL AND claimant IS NULL AND ${mayRead})`;
  // An outside sign-in named like this service's own user is not that user: nothing assigned to or claimed in that
  // name, nor to that user's groups, is in its inbox; only the open tasks of the workflows it may read.
  if (isOutsideReservedName(principal)) {
    filter.clauses.push(`state <> 'DELETED' AND ${open}`);
    filter.bindings.push(...readable.bindings);
    return;
  }
  const groups = await groupIdsOf(env, principal.userId);
  // A deleted task is out of the inboxes (it keeps its assignee and claimant, for the record).
  filter.clauses.push(
    `state <> 'DELETED' AND ((assignee_type = 'CONDUCTOR_USER' AND assignee = ?) OR (assignee_type = 'CONDUCTOR_GROUP' AND assignee IN (SELECT value FROM json_each(?)))` +
      ` OR (claimant_type = 'CONDUCTOR_USER' AND claimant = ?) OR ${open})`,
  );
  filter.bindings.push(principal.userId, JSON.stringify(groups), principal.userId, ...readable.bindings);
}

/** Fields of a task's input or output a query may name: dotted names of letters, digits and `_`. */
const QUERY_FIELD = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;
/** One condition of Orkes' input and output queries: `field = value` or `field IN (v1, v2)`, values quoted or not. */
const QUERY_CONDITION = /^\s*([^\s=]+)\s*(?:=\s*("[^"]*"|'[^']*'|[^\s()]+)|IN\s*\(([^)]*)\))\s*$/i;
/** Most conditions one query may join. */
const MAX_QUERY_CONDITIONS = 10;

function unquoted(value: string): string {
  const text = value.trim();
  return /^(".*"|'.*')$/.test(text) ? text.slice(1, -1) : text;
}

/**
 * Orkes' `taskInputQuery` / `taskOutputQuery`: conditions on fields of the task's input (`which`) or output, each
 * `field = value` or `field IN (v1, v2)`, joined by AND or OR (AND first, as in SQL). Values compare as text (`true`,
 * `12`), `*` matching anything.
 */
function addFieldQuery(filter: Filter, which: "input" | "output", query: string, path: string): void {
  const alternatives = query.split(/\s+OR\s+/i).map((part) => part.split(/\s+AND\s+/i));
  const conditions = alternatives.flat();
  if (conditions.length > MAX_QUERY_CONDITIONS) throw validationError("Invalid human task search", [{ path, message: `must have at most ${MAX_QUERY_CONDITIONS} conditions` }]);
  const sql: string[] = [];
  for (const alternative of alternatives) {
    const parts: string[] = [];
    for (const condition of alternative) {
      const match = QUERY_CONDITION.exec(condition);
      if (!match || !QUERY_FIELD.test(match[1]!)) {
        throw validationError("Invalid human task search", [{ path, message: `cannot understand "${condition.trim()}"; write field = value or field IN (value1, value2), joined by AND or OR` }]);
      }
      const values = match[2] !== undefined ? [unquoted(match[2])] : match[3]!.split(",").map(unquoted).filter((value) => value !== "");
      const jsonPath = `$.${which}.${match[1]!.split(".").map((key) => `"${key}"`).join(".")}`;
      // One JSON parameter per condition, its path and its values (D1 binds at most 100 a statement). Booleans read as
      // true/false (json_extract gives 1/0), other scalars as their text.
      const field = "json_extract(wanted.condition, '$.path')";
      const text = `(CASE json_type(entry, ${field}) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(json_extract(entry, ${field}) AS TEXT) END)`;
      parts.push(`EXISTS (SELECT 1 FROM (SELECT ? AS condition) AS wanted, json_each(wanted.condition, '$.values') AS value WHERE ${matchesText(text, "value.value")})`);
      filter.bindings.push(JSON.stringify({ path: jsonPath, values: values.map((value) => textMatch(value, path)) }));
    }
    sql.push(`(${parts.join(" AND ")})`);
  }
  filter.clauses.push(`(${sql.join(" OR ")})`);
}

/** Most texts one `fullTextQuery` may join with AND and OR. */
const MAX_FULL_TEXT_TERMS = 10;

/**
 * `query` split where `separator` (` AND `, ` OR `: upper case, as Lucene's operators, so that "terms and conditions"
 * stays one text) stands outside double quotes.
 */
function splitOutsideQuotes(query: string, separator: RegExp): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let index = 0; index < query.length; index++) {
    if (query[index] === '"') quoted = !quoted;
    if (quoted) continue;
    const match = separator.exec(query.slice(index));
    if (match === null || match.index !== 0) continue;
    parts.push(query.slice(start, index));
    start = index + match[0].length;
    index = start - 1;
  }
  parts.push(query.slice(start));
  return parts;
}

/**
 * Orkes' `fullTextQuery`: texts anywhere in the entry, each as the other searches' freeText reads one (a substring,
 * ASCII case ignored, `*` matching anything, a double-quoted text taken whole), joined by AND and OR (AND first), the
 * operations Orkes' human task search takes in it. A text of `*` matches every entry.
 */
function addFullText(filter: Filter, query: string): void {
  const alternatives = splitOutsideQuotes(query, /^\s+OR\s+/).map((part) => splitOutsideQuotes(part, /^\s+AND\s+/).map((text) => text.trim()));
  if (alternatives.flat().length > MAX_FULL_TEXT_TERMS) {
    throw validationError("Invalid human task search", [{ path: "fullTextQuery", message: `must join at most ${MAX_FULL_TEXT_TERMS} texts with AND and OR` }]);
  }
  const parts = alternatives.map((texts) => {
    const part: Filter = { clauses: [], bindings: [] };
    for (const text of texts) applyFreeText(part, text, ["entry"], { path: "fullTextQuery" });
    return part;
  });
  // An alternative of texts that match anything (`*`) lets every entry through.
  if (parts.some((part) => part.clauses.length === 0)) return;
  filter.clauses.push(`(${parts.map((part) => `(${part.clauses.join(" AND ")})`).join(" OR ")})`);
  filter.bindings.push(...parts.flatMap((part) => part.bindings));
}

/** The rows of a human task search, and how many match in all. */
export interface HumanSearchPage {
  totalHits: number;
  results: JsonObject[];
}

/**
 * `POST /api/human/tasks/search`: Orkes' HumanTaskSearch over the human task list, newest change first. `totalHits` is
 * counted as the workflow search counts it ({@link countHits}): the list grows with every HUMAN task run, and its count
 * would read every hit on each page an inbox or a client asks for.
 */
export async function searchHumanTasks(request: IRequest, env: Env, search: HumanTaskSearchBody): Promise<HumanSearchPage> {
  const filter: Filter = { clauses: [], bindings: [] };
  await applyVisibility(filter, request, env, search.searchType);
  if (search.states.length > 0) addIn(filter, "state", search.states);
  addUsers(filter, "assignee", search.assignees);
  addUsers(filter, "claimant", search.claimants);
  if (search.definitionNames.length > 0) addIn(filter, "definition_name", search.definitionNames);
  if (search.displayNames.length > 0) addIn(filter, "display_name", search.displayNames);
  if (search.workflowIds.length > 0) addIn(filter, "workflow_id", search.workflowIds.map((id) => id.toLowerCase()));
  if (search.workflowNames.length > 0) addIn(filter, "workflow_name", search.workflowNames);
  if (search.taskRefNames.length > 0) {
    // A task in a loop runs as `ref__<iteration>`: its definition's name finds every run.
    // Compared by their head, not as patterns: D1 takes a GLOB pattern up to 50 bytes, and a reference name may be longer.
    const run = "EXISTS (SELECT 1 FROM json_each(?) AS ref WHERE substr(task_ref_name, 1, length(ref.value) + 2) = ref.value || '__' AND substr(task_ref_name, length(ref.value) + 3, 1) GLOB '[0-9]')";
    filter.clauses.push(`(task_ref_name IN (SELECT value FROM json_each(?)) OR ${run})`);
    filter.bindings.push(JSON.stringify(search.taskRefNames), JSON.stringify(search.taskRefNames));
  }
  if (search.updateStartTime !== undefined) {
    filter.clauses.push("updated_on >= ?");
    filter.bindings.push(search.updateStartTime);
  }
  if (search.updateEndTime !== undefined) {
    filter.clauses.push("updated_on <= ?");
    filter.bindings.push(search.updateEndTime);
  }
  if (search.fullTextQuery !== undefined && search.fullTextQuery.trim() !== "") addFullText(filter, search.fullTextQuery.trim());
  if (search.taskInputQuery !== undefined && search.taskInputQuery.trim() !== "") addFieldQuery(filter, "input", search.taskInputQuery, "taskInputQuery");
  if (search.taskOutputQuery !== undefined && search.taskOutputQuery.trim() !== "") addFieldQuery(filter, "output", search.taskOutputQuery, "taskOutputQuery");
  const where = whereOf(filter);
  const [count, page] = await env.DB.batch([
    countHits(env.DB, "human_tasks", where, filter.bindings, search),
    env.DB.prepare(`SELECT entry FROM human_tasks ${where} ORDER BY updated_on DESC, task_id LIMIT ? OFFSET ?`).bind(...filter.bindings, search.size, search.start),
  ]);
  const total = (count!.results[0] as { total: number } | undefined)?.total ?? 0;
  return { totalHits: total, results: (page!.results as Array<{ entry: string }>).map((row) => listedEntry(JSON.parse(row.entry) as JsonObject)) };
}

/** `GET /api/human/tasks/getTaskDisplayNames`: the display names of the human tasks the caller sees, in order. */
export async function humanTaskDisplayNames(request: IRequest, env: Env, searchType: "ADMIN" | "INBOX"): Promise<string[]> {
  const filter: Filter = { clauses: [], bindings: [] };
  await applyVisibility(filter, request, env, searchType);
  const { results } = await env.DB.prepare(`SELECT DISTINCT display_name FROM human_tasks WHERE ${filter.clauses.join(" AND ")} ORDER BY display_name LIMIT 1000`)
    .bind(...filter.bindings)
    .all<{ display_name: string }>();
  return results.map((row) => row.display_name);
}
