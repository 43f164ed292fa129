import type { IRequest } from "itty-router";
import { validationError } from "../http/errors";
import { BOOLEAN_PARAMETER_MESSAGE, booleanWord } from "../http/params";
import { parseOrThrow, WorkflowName } from "../schemas";
import { applyFreeText, applyReadable, orderBy, searchPage, searchParam, sortParams, type Filter, type SearchFields } from "../search";
import type { NameFilter } from "../auth/permissions";
import { ScheduleRepository, type StoredSchedule } from "./store";

/**
 * The sort fields: Conductor's `name` (the only one its scheduler sorts by), and the stored columns its docs' examples
 * sort by (`createTime:DESC`). No `query`: the search's filters are its own parameters.
 */
const FIELDS: SearchFields = {
  query: {},
  sort: { name: "name", workflowName: "workflow_name", createTime: "create_time", updatedTime: "updated_time" },
  defaultOrder: "name ASC",
};

/**
 * The sort fields as Orkes' docs spell them (`workflowname`, `createtime`, `updatedtime`, and `startworkflowrequest`,
 * which sorts by the workflow's name), any case, to those of {@link FIELDS}: its docs' search of schedule definitions
 * lists these, and a porting team sending `sort=workflowname` was refused with a 400.
 */
const SORT_ALIASES: Readonly<Record<string, string>> = {
  name: "name",
  workflowname: "workflowName",
  createtime: "createTime",
  updatedtime: "updatedTime",
  startworkflowrequest: "workflowName",
};

/** `sort` (`|`-joined terms) with each term's field spelled as {@link FIELDS} does; a field it does not know is left to be refused. */
function canonicalSort(sort: string): string {
  return sort
    .split("|")
    .map((term) => term.replace(/^(\s*)(\w+)/, (whole, space: string, field: string) => {
      const known = Object.hasOwn(SORT_ALIASES, field.toLowerCase()) ? SORT_ALIASES[field.toLowerCase()] : undefined;
      return known === undefined ? whole : `${space}${known}`;
    }))
    .join("|");
}

/** `paused` as Spring binds a boolean ({@link booleanWord}), or undefined when absent; anything else is a 400. */
function pausedParam(request: IRequest): boolean | undefined {
  const given = searchParam(request, "paused");
  if (given === undefined) return undefined;
  const paused = booleanWord(given);
  if (paused === undefined) throw validationError("Invalid schedule search", [{ path: "paused", message: BOOLEAN_PARAMETER_MESSAGE }]);
  return paused;
}

/**
 * `GET /api/scheduler/schedules/search` (Conductor's SchedulerResource `searchSchedules`): the schedules whose workflow
 * the caller may read (`readable`), one page of them in name order unless `sort` says otherwise, with how many there
 * are. `workflowName` exact; `scheduleName` (or `name`, as Orkes' docs and Conductor's UI send it) within the name,
 * case counted, as Conductor's stores match it; `paused`; `freeText` (`*`: everything) within the schedule and workflow
 * names, as `search/executions`' free text (Conductor's stores ignore it; its UI sends its search box's text there).
 */
export async function searchSchedules(db: D1Database, request: IRequest, readable: NameFilter): Promise<{ totalHits: number; schedules: StoredSchedule[] }> {
  const { start, size } = searchPage(request);
  const filter: Filter = { clauses: [], bindings: [] };
  applyReadable(filter, readable, "schedules");
  const workflowName = searchParam(request, "workflowName");
  if (workflowName !== undefined) {
    filter.clauses.push("workflow_name = ?");
    filter.bindings.push(parseOrThrow(WorkflowName, workflowName, "schedule search", "workflowName"));
  }
  for (const param of ["scheduleName", "name"]) {
    const part = searchParam(request, param);
    if (part === undefined) continue;
    // instr, not LIKE: LIKE ignores ASCII case, and `_` (which names hold) is one of its wildcards.
    filter.clauses.push("instr(name, ?) > 0");
    filter.bindings.push(part);
  }
  const paused = pausedParam(request);
  if (paused !== undefined) {
    filter.clauses.push("paused = ?");
    filter.bindings.push(paused ? 1 : 0);
  }
  applyFreeText(filter, searchParam(request, "freeText"), ["name", "workflow_name"]);
  // Spring binds Conductor's `List<String> sort` from comma-separated options too.
  const sort = sortParams(request);
  const order = orderBy(sort === undefined ? undefined : canonicalSort(sort.replaceAll(",", "|")), FIELDS);
  return new ScheduleRepository(db).search(filter, order, start, size);
}
