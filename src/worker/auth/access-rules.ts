import { ApiError } from "../http/errors";
import { grantsAllow, scopeCovers, type Grant, type Permission } from "./permissions";
import type { Principal } from "./principal";
import { isUuid } from "../../engine/task-id";

/**
 * An API access rule (spec 2.5): requests whose path matches `apiPath` and whose method is in
 * `methods` need one of `requiredPermissions` (any one suffices; none listed means any
 * authenticated caller). `apiPath` segments may be `{name}` (one segment, available to scopes as
 * `${path.name}`) and the pattern may end in `*` (any rest, or none). A required scope may also use
 * `${workflow.name}`: the definition name of the execution or definition the request targets, and
 * `${task.refName}` and `${task.name}`: the reference name and the task (definition) name of the task a TaskResult
 * (`POST /api/tasks`, `/api/tasks/update-v2`) updates or a path names by id (`/api/tasks/{taskId}`, `…/log`), read from
 * its execution (a request naming no task of that execution meets no scope using them).
 */
export interface AccessRule {
  apiPath: string;
  methods: string[];
  requiredPermissions: Grant[];
}

/** A required scope met by the permission at any scope: list endpoints then filter what they show. */
export const ANY_SCOPE = "${any}";
/** The scope of one workflow (definitions and executions): `workflow:<name>`. */
export const WORKFLOW_SCOPE = "workflow:${workflow.name}";

/**
 * The permission that lets its holder start a workflow (at `workflow:<name>`): the default start rules
 * require it, and a SUB_WORKFLOW task may start only children its execution's starter held it for.
 */
export const START_PERMISSION: Permission = "WORKFLOW_ADMIN";

const ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const at = (action: Grant["action"], scope = "*"): Grant => ({ action, scope });

/**
 * The bulk lifecycle operations (Conductor's WorkflowBulkResource, its newer `remove` and `terminate-remove`, Orkes' bulk
 * delete): their routes and rules.
 */
export const BULK_OPERATIONS = [
  { method: "PUT", operation: "pause" },
  { method: "PUT", operation: "resume" },
  { method: "POST", operation: "restart" },
  { method: "POST", operation: "retry" },
  { method: "POST", operation: "terminate" },
  { method: "POST", operation: "delete" },
  { method: "DELETE", operation: "remove" },
  { method: "DELETE", operation: "terminate-remove" },
] as const;

/** One of {@link BULK_OPERATIONS}. */
export type BulkOperation = (typeof BULK_OPERATIONS)[number]["operation"];

/** Conductor's bulk read of workflows by id. */
export const BULK_SEARCH_PATH = "/api/workflow/bulk/search";

/** The path of a bulk operation. */
export function bulkPath(operation: BulkOperation): string {
  return `/api/workflow/bulk/${operation}`;
}

/**
 * The rules of the bulk lifecycle routes (`/api/workflow/bulk/…`): any authenticated caller reaches them, because
 * the route authorizes each id as its single-id route (`PUT /api/workflow/{id}/pause`, …), so the rules of those
 * routes, stored ones included, decide per execution, and an id refused there is listed as refused. Decided
 * before the stored rules: one written for the single-id routes (`/api/workflow/{workflowId}/pause`) also fits
 * `/api/workflow/bulk/pause` ("bulk" as the id) and would otherwise shut the bulk route for all but callers
 * allowed on every workflow, though it already applies to each id.
 */
export const BULK_ACCESS_RULES: readonly AccessRule[] = [
  ...BULK_OPERATIONS.map(({ method, operation }) => ({ apiPath: bulkPath(operation), methods: [method], requiredPermissions: [] })),
  // Each id is read as `GET /api/workflow/{id}` would read it, and authorized so.
  { apiPath: BULK_SEARCH_PATH, methods: ["POST"], requiredPermissions: [] },
];

/** What reporting a TaskResult needs: executing that task (by reference name or task name) or tasks of that workflow. */
const TASK_RESULT_PERMISSIONS: Grant[] = [at("TASK_EXECUTE", "task:${task.refName}"), at("TASK_EXECUTE", "task:${task.name}"), at("TASK_EXECUTE", WORKFLOW_SCOPE)];
/**
 * What updating a task by its reference name needs: executing that reference name (as the path names it), tasks of
 * that workflow, or tasks of the name the reference's latest instance has (the update is then refused if that
 * instance is no longer one of that name when it is applied: see the guard's `checkedTaskName`).
 */
const TASK_BY_REF_PERMISSIONS: Grant[] = [at("TASK_EXECUTE", "task:${path.taskRefName}"), at("TASK_EXECUTE", WORKFLOW_SCOPE), at("TASK_EXECUTE", "task:${task.name}")];
/**
 * What reading a task by its id needs: reading tasks (all, or those of its name: the spec's TASK_READ "for a given
 * task", a task definition, not a reference name any workflow may use), its workflow, or executing tasks of its name.
 */
const TASK_READ_PERMISSIONS: Grant[] = [at("TASK_READ", "task:${task.name}"), at("WORKFLOW_READ", WORKFLOW_SCOPE), at("TASK_EXECUTE", "task:${task.name}")];

/**
 * The rule for every route of the service, most specific first; the first rule matching a request
 * decides. Anything else under /api (a route added without a rule) is for system admins only.
 */
export const DEFAULT_ACCESS_RULES: readonly AccessRule[] = [
  { apiPath: "/api/security/permissions", methods: ["GET"], requiredPermissions: [] },
  // Who the caller is: any authenticated caller, about themselves only.
  { apiPath: "/api/token/userInfo", methods: ["GET"], requiredPermissions: [] },
  // The server's version (Conductor's VersionResource): any authenticated caller, as it tells nothing of anyone's data.
  { apiPath: "/api/version", methods: ["GET"], requiredPermissions: [] },
  // Conductor's HealthCheckResource under /api: any authenticated caller, as it tells only that the server answers.
  { apiPath: "/api/health", methods: ["GET"], requiredPermissions: [] },
  // A stored rule decides before the defaults, so writing one could open any route: not for USER_ADMINs.
  { apiPath: "/api/security/rules/*", methods: ["POST", "PUT", "PATCH", "DELETE"], requiredPermissions: [at("SYSTEM_ADMIN")] },
  { apiPath: "/api/security/*", methods: ALL_METHODS, requiredPermissions: [at("USER_ADMIN")] },
  // Orkes' applications: identities with keys and roles, managed as users are.
  { apiPath: "/api/applications", methods: ALL_METHODS, requiredPermissions: [at("USER_ADMIN")] },
  { apiPath: "/api/applications/*", methods: ALL_METHODS, requiredPermissions: [at("USER_ADMIN")] },
  // Orkes' users: the security API's users under Orkes' paths.
  { apiPath: "/api/users", methods: ALL_METHODS, requiredPermissions: [at("USER_ADMIN")] },
  { apiPath: "/api/users/*", methods: ALL_METHODS, requiredPermissions: [at("USER_ADMIN")] },
  { apiPath: "/api/groups", methods: ALL_METHODS, requiredPermissions: [at("USER_ADMIN")] },
  { apiPath: "/api/groups/*", methods: ALL_METHODS, requiredPermissions: [at("USER_ADMIN")] },
  // Orkes' per-resource grants: who may reach what, given as users' direct permissions, roles' and groups' permissions.
  { apiPath: "/api/auth/authorization", methods: ALL_METHODS, requiredPermissions: [at("USER_ADMIN")] },
  { apiPath: "/api/auth/authorization/*", methods: ALL_METHODS, requiredPermissions: [at("USER_ADMIN")] },
  // What a subject was given per target: listed by any caller, the route refusing (403) all but their own grants to
  // one without USER_ADMIN on *, as Orkes does; revoked with USER_ADMIN, as the users' and groups' permissions are.
  { apiPath: "/api/auth/subjects/*", methods: ["GET"], requiredPermissions: [] },
  { apiPath: "/api/auth/subjects/*", methods: ["DELETE"], requiredPermissions: [at("USER_ADMIN")] },
  { apiPath: "/api/secrets/*", methods: ALL_METHODS, requiredPermissions: [at("SYSTEM_ADMIN")] },
  { apiPath: "/api/secrets-v2", methods: ["GET"], requiredPermissions: [at("SYSTEM_ADMIN")] },
  // A workflow definition's tags: as the definition itself (read it, or write it).
  { apiPath: "/api/metadata/workflow/{name}/tags", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", "workflow:${path.name}"), at("METADATA_ADMIN")] },
  { apiPath: "/api/metadata/workflow/{name}/tags", methods: ["POST", "PUT", "DELETE"], requiredPermissions: [at("METADATA_ADMIN"), at("WORKFLOW_WRITE", "workflow:${path.name}")] },
  { apiPath: "/api/metadata/workflow/{name}/rate-limit", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", "workflow:${path.name}"), at("METADATA_ADMIN")] },
  { apiPath: "/api/metadata/workflow/{name}/rate-limit", methods: ["PUT", "DELETE"], requiredPermissions: [at("METADATA_ADMIN"), at("WORKFLOW_WRITE", "workflow:${path.name}")] },
  // The listings of workflow definitions (all of them, Conductor's names and versions, each name's latest, in full or
  // as Conductor OSS's list items): reached with the read right on some workflow, and showing the definitions the
  // caller may read (auth/metadata-access.ts).
  { apiPath: "/api/metadata/workflow/names-and-versions", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE), at("METADATA_ADMIN")] },
  { apiPath: "/api/metadata/workflow/latest-versions", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE), at("METADATA_ADMIN")] },
  { apiPath: "/api/metadata/workflow/list", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE), at("METADATA_ADMIN")] },
  { apiPath: "/api/metadata/workflow/names", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE), at("METADATA_ADMIN")] },
  { apiPath: "/api/metadata/workflow/{name}/versions", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", "workflow:${path.name}"), at("METADATA_ADMIN")] },
  { apiPath: "/api/metadata/workflow", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE), at("METADATA_ADMIN")] },
  { apiPath: "/api/metadata/workflow/{name}", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", "workflow:${path.name}"), at("METADATA_ADMIN")] },
  { apiPath: "/api/metadata/workflow/{name}/{version}", methods: ["DELETE"], requiredPermissions: [at("METADATA_ADMIN"), at("WORKFLOW_WRITE", "workflow:${path.name}")] },
  { apiPath: "/api/metadata/workflow", methods: ["POST"], requiredPermissions: [at("METADATA_ADMIN"), at("WORKFLOW_WRITE", WORKFLOW_SCOPE)] },
  // Checking a definition without registering it asks what registering it would.
  { apiPath: "/api/metadata/workflow/validate", methods: ["POST"], requiredPermissions: [at("METADATA_ADMIN"), at("WORKFLOW_WRITE", WORKFLOW_SCOPE)] },
  // Replacing a list of definitions: each one's name is checked by the route, all or nothing (auth/metadata-access.ts).
  { apiPath: "/api/metadata/workflow", methods: ["PUT"], requiredPermissions: [at("METADATA_ADMIN"), at("WORKFLOW_WRITE", ANY_SCOPE)] },
  // Task definitions (and their tags) are read with TASK_READ and written with TASK_WRITE on `task:<name>` (the spec's
  // meaning of both, Orkes' READ and CREATE/UPDATE/DELETE on a TASK_DEF), as well as with the rights on all metadata.
  // The listing shows each caller those it may read; a registration's names are checked by its route, all or nothing.
  { apiPath: "/api/metadata/taskdefs", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ"), at("METADATA_ADMIN"), at("TASK_READ", ANY_SCOPE)] },
  { apiPath: "/api/metadata/taskdefs", methods: ["POST", "PUT"], requiredPermissions: [at("METADATA_ADMIN"), at("WORKFLOW_WRITE"), at("TASK_WRITE", ANY_SCOPE)] },
  { apiPath: "/api/metadata/taskdefs/{name}", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ"), at("METADATA_ADMIN"), at("TASK_READ", "task:${path.name}")] },
  { apiPath: "/api/metadata/taskdefs/{name}", methods: ["DELETE"], requiredPermissions: [at("METADATA_ADMIN"), at("WORKFLOW_WRITE"), at("TASK_WRITE", "task:${path.name}")] },
  { apiPath: "/api/metadata/task/{taskName}/tags", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ"), at("METADATA_ADMIN"), at("TASK_READ", "task:${path.taskName}")] },
  { apiPath: "/api/metadata/task/{taskName}/tags", methods: ["POST", "PUT", "DELETE"], requiredPermissions: [at("METADATA_ADMIN"), at("WORKFLOW_WRITE"), at("TASK_WRITE", "task:${path.taskName}")] },
  { apiPath: "/api/metadata/*", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ"), at("METADATA_ADMIN")] },
  { apiPath: "/api/metadata/*", methods: ["POST", "PUT", "DELETE"], requiredPermissions: [at("METADATA_ADMIN"), at("WORKFLOW_WRITE")] },
  // The schema registry is metadata: read as definitions are, written by metadata admins.
  { apiPath: "/api/schema", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ"), at("METADATA_ADMIN")] },
  { apiPath: "/api/schema/*", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ"), at("METADATA_ADMIN")] },
  { apiPath: "/api/schema", methods: ["POST"], requiredPermissions: [at("METADATA_ADMIN")] },
  { apiPath: "/api/schema/*", methods: ["DELETE"], requiredPermissions: [at("METADATA_ADMIN")] },
  { apiPath: "/api/workflow/search", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE)] },
  { apiPath: "/api/workflow/search-v2", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE)] },
  { apiPath: "/api/workflow/search-by-tasks", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE)] },
  { apiPath: "/api/workflow/search-by-tasks-v2", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE)] },
  { apiPath: "/api/workflow/execute/{name}/*", methods: ["POST"], requiredPermissions: [at(START_PERMISSION, "workflow:${path.name}")] },
  // Lookups by definition name (after execute: `POST /api/workflow/execute/{name}` is a start, not a lookup of "execute").
  // Each needs the read right on the name it names; the batch one, on some workflow. What they find is then
  // filtered as search filters, and Workflow JSON as GET /api/workflow/{workflowId} is authorized.
  { apiPath: "/api/workflow/running/{name}", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", "workflow:${path.name}")] },
  { apiPath: "/api/workflow/{name}/correlated/{correlationId}", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", "workflow:${path.name}")] },
  { apiPath: "/api/workflow/correlated/batch", methods: ["POST"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE)] },
  { apiPath: "/api/workflow/{name}/correlated", methods: ["POST"], requiredPermissions: [at("WORKFLOW_READ", "workflow:${path.name}")] },
  { apiPath: "/api/workflow", methods: ["POST"], requiredPermissions: [at(START_PERMISSION, WORKFLOW_SCOPE)] },
  // A test run starts the workflow its body names (before the start by name, whose pattern it fits).
  { apiPath: "/api/workflow/test", methods: ["POST"], requiredPermissions: [at(START_PERMISSION, WORKFLOW_SCOPE)] },
  { apiPath: "/api/workflow/test/sync", methods: ["POST"], requiredPermissions: [at(START_PERMISSION, WORKFLOW_SCOPE)] },
  { apiPath: "/api/workflow/{name}", methods: ["POST"], requiredPermissions: [at(START_PERMISSION, "workflow:${path.name}")] },
  // Conductor's decide names the execution after "decide", as no other route does.
  { apiPath: "/api/workflow/decide/{workflowId}", methods: ["PUT"], requiredPermissions: [at("WORKFLOW_ADMIN", WORKFLOW_SCOPE)] },
  // Conductor's AdminResource sweep and repair of one execution: its decide.
  { apiPath: "/api/admin/sweep/requeue/{workflowId}", methods: ["POST"], requiredPermissions: [at("WORKFLOW_ADMIN", WORKFLOW_SCOPE)] },
  { apiPath: "/api/admin/consistency/verifyAndRepair/{workflowId}", methods: ["POST"], requiredPermissions: [at("WORKFLOW_ADMIN", WORKFLOW_SCOPE)] },
  // Clearing a task name's cached outputs: as deleting its task definition (after which its tasks run anew too).
  { apiPath: "/api/admin/cache/clear/{taskDefName}", methods: ["POST"], requiredPermissions: [at("METADATA_ADMIN"), at("WORKFLOW_WRITE"), at("TASK_WRITE", "task:${path.taskDefName}")] },
  // A message to a workflow's queue feeds the PULL_WORKFLOW_MESSAGES task waiting for it, as a signal completes the WAIT a
  // workflow waits in: the right to complete that workflow's tasks, or the right to act on it (pause, terminate…).
  { apiPath: "/api/workflow/{workflowId}/messages", methods: ["POST"], requiredPermissions: [at("TASK_EXECUTE", WORKFLOW_SCOPE), at("WORKFLOW_ADMIN", WORKFLOW_SCOPE)] },
  { apiPath: "/api/workflow/{workflowId}/*", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", WORKFLOW_SCOPE)] },
  { apiPath: "/api/workflow/{workflowId}/*", methods: ["POST", "PUT", "DELETE"], requiredPermissions: [at("WORKFLOW_ADMIN", WORKFLOW_SCOPE)] },
  // Signals complete whichever WAIT the workflow waits in: the right to complete that workflow's tasks. One found in a
  // child is checked again, as that task's own completion by reference name (routes/signals.ts). Before the update by
  // reference name, whose pattern they fit.
  { apiPath: "/api/tasks/{workflowId}/{status}/signal", methods: ["POST"], requiredPermissions: [at("TASK_EXECUTE", WORKFLOW_SCOPE)] },
  { apiPath: "/api/tasks/{workflowId}/{status}/signal/sync", methods: ["POST"], requiredPermissions: [at("TASK_EXECUTE", WORKFLOW_SCOPE)] },
  { apiPath: "/api/tasks/{workflowId}/{taskRefName}/{status}", methods: ["POST"], requiredPermissions: TASK_BY_REF_PERMISSIONS },
  // Conductor's QueueAdminResource updates: the same as the update by reference name, or by id as a TaskResult is.
  { apiPath: "/api/queue/update/{workflowId}/task/{taskId}/{status}", methods: ["POST"], requiredPermissions: TASK_RESULT_PERMISSIONS },
  { apiPath: "/api/queue/update/{workflowId}/{taskRefName}/{status}", methods: ["POST"], requiredPermissions: TASK_BY_REF_PERMISSIONS },
  // A workflow's pending task by reference name: read as the workflow, or by whoever reads all tasks.
  { apiPath: "/api/tasks/in_progress/{workflowId}/{taskRefName}", methods: ["GET"], requiredPermissions: [at("TASK_READ"), at("WORKFLOW_READ", WORKFLOW_SCOPE)] },
  { apiPath: "/api/tasks/{workflowId}/{taskRefName}/{status}/sync", methods: ["POST"], requiredPermissions: TASK_BY_REF_PERMISSIONS },
  // The guard finds a TaskResult's task and workflow from its execution, so this agrees with the routes above; a
  // worker allowed to poll a task type (below) may report on its tasks too.
  { apiPath: "/api/tasks", methods: ["POST"], requiredPermissions: TASK_RESULT_PERMISSIONS },
  { apiPath: "/api/tasks/update-v2", methods: ["POST"], requiredPermissions: TASK_RESULT_PERMISSIONS },
  // Task workers: polling takes tasks of that name (Conductor's task type), so it needs the right to execute them.
  { apiPath: "/api/tasks/poll/batch/{taskType}", methods: ["GET"], requiredPermissions: [at("TASK_EXECUTE", "task:${path.taskType}")] },
  { apiPath: "/api/tasks/poll/{taskType}", methods: ["GET"], requiredPermissions: [at("TASK_EXECUTE", "task:${path.taskType}")] },
  // A task by its id: readable with its workflow, with TASK_READ on it, or by a worker allowed to execute tasks of its
  // name (the guard finds its execution). Its log reads the same way, and is written by whoever may report the task's
  // result (after the polls: `/api/tasks/poll/log` polls). Task search, before the task by id whose pattern it fits,
  // shows each caller the tasks it may read: by their workflow or their name (task-search.ts).
  { apiPath: "/api/tasks/search", methods: ["GET"], requiredPermissions: [at("TASK_READ", ANY_SCOPE), at("WORKFLOW_READ", ANY_SCOPE)] },
  { apiPath: "/api/tasks/search-v2", methods: ["GET"], requiredPermissions: [at("TASK_READ", ANY_SCOPE), at("WORKFLOW_READ", ANY_SCOPE)] },
  { apiPath: "/api/tasks/{taskId}", methods: ["GET"], requiredPermissions: TASK_READ_PERMISSIONS },
  { apiPath: "/api/tasks/{taskId}/log", methods: ["GET"], requiredPermissions: TASK_READ_PERMISSIONS },
  { apiPath: "/api/tasks/{taskId}/log", methods: ["POST"], requiredPermissions: TASK_RESULT_PERMISSIONS },
  // Conductor's ack does nothing here (see routes/tasks.ts): any worker may send it, about any id.
  { apiPath: "/api/tasks/{taskId}/ack", methods: ["POST"], requiredPermissions: [at("TASK_EXECUTE", ANY_SCOPE)] },
  // The worker queues: sizes and polls of the task types the caller may read tasks of (routes/workers.ts checks each).
  { apiPath: "/api/tasks/queue/*", methods: ["GET"], requiredPermissions: [at("TASK_READ", ANY_SCOPE)] },
  { apiPath: "/api/tasks/*", methods: ["GET"], requiredPermissions: [at("TASK_READ")] },
  // Schedules: any authenticated caller reaches the routes, which check each schedule's workflow themselves
  // (src/worker/schedules/access.ts: a rule cannot read which workflow a schedule starts).
  { apiPath: "/api/scheduler/*", methods: ALL_METHODS, requiredPermissions: [] },
  // Human tasks: any authenticated caller reaches the routes, which decide per task by who the caller is to it (its
  // assignee, claimant, a member of its group, one who may read its workflow or complete the task: human-tasks.ts).
  { apiPath: "/api/human/tasks/*", methods: ALL_METHODS, requiredPermissions: [] },
  // User forms: read by whoever fills them in; saved and deleted as task definitions are.
  { apiPath: "/api/human/template", methods: ["GET"], requiredPermissions: [] },
  { apiPath: "/api/human/template/*", methods: ["GET"], requiredPermissions: [] },
  { apiPath: "/api/human/template", methods: ["POST"], requiredPermissions: [at("TASK_WRITE"), at("METADATA_ADMIN")] },
  { apiPath: "/api/human/template/*", methods: ["POST", "PUT", "DELETE"], requiredPermissions: [at("TASK_WRITE"), at("METADATA_ADMIN")] },
  // Environment variables: read as metadata is; written by system admins only, because a value can decide where a
  // workflow sends what it holds (a URL beside a secret), which is the secrets' right (see routes/environment.ts).
  { apiPath: "/api/environment", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE), at("METADATA_ADMIN")] },
  { apiPath: "/api/environment/{key}", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE), at("METADATA_ADMIN")] },
  { apiPath: "/api/environment/{key}", methods: ["PUT", "DELETE"], requiredPermissions: [at("SYSTEM_ADMIN")] },
  { apiPath: "/api/environment/{key}/tags", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE), at("METADATA_ADMIN")] },
  { apiPath: "/api/environment/{key}/tags", methods: ["PUT", "DELETE"], requiredPermissions: [at("SYSTEM_ADMIN")] },
  // Metrics: any reader of some workflow or task; the route shows the series of those the caller may read.
  { apiPath: "/api/metrics", methods: ["GET"], requiredPermissions: [at("WORKFLOW_READ", ANY_SCOPE), at("TASK_READ", ANY_SCOPE)] },
  { apiPath: "/api/*", methods: ALL_METHODS, requiredPermissions: [at("SYSTEM_ADMIN")] },
];


/**
 * A path segment as the routes read it: percent-decoded, and lower case when shaped like a UUID (execution
 * ids are, and name the same execution in either case). Undefined for a malformed escape.
 */
function canonicalSegment(segment: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  return isUuid(decoded) ? decoded.toLowerCase() : decoded;
}

/**
 * Matches a path against a rule pattern; the captured `{name}` segments (decoded, case kept), or undefined.
 * Both are split at their raw slashes, as the router splits them, so an encoded `/` (`%2F`) stays inside its
 * segment and never changes which pattern a path fits; literal segments are compared canonically
 * ({@link canonicalSegment}), so `%5F` or an upper-case execution id does not slip past a rule.
 */
export function matchApiPath(pattern: string, path: string): Record<string, string> | undefined {
  const wildcard = pattern.endsWith("*");
  const patternSegments = (wildcard ? pattern.slice(0, -1) : pattern).split("/").filter(Boolean);
  const pathSegments = path.split("/").filter(Boolean);
  if (wildcard ? pathSegments.length < patternSegments.length : pathSegments.length !== patternSegments.length) return undefined;
  const variables: Record<string, string> = {};
  for (let i = 0; i < patternSegments.length; i++) {
    const expected = patternSegments[i]!;
    const actual = pathSegments[i]!;
    const variable = /^\{(\w+)\}$/.exec(expected);
    if (variable) {
      try {
        variables[variable[1]!] = decodeURIComponent(actual);
      } catch {
        return undefined;
      }
      continue;
    }
    const canonical = canonicalSegment(actual);
    // A stored pattern with a stray `%` is compared as written.
    if (canonical === undefined || canonical !== (canonicalSegment(expected) ?? expected)) return undefined;
  }
  return variables;
}

/**
 * What a request targets, for the placeholders of a rule's scopes; a field is absent when the request names
 * nothing of the kind (an unknown execution, a task not in it, no or a malformed body).
 */
export interface RequestTarget {
  /** `${workflow.name}`: the definition name of the execution or definition the request targets. */
  workflowName?: string | undefined;
  /** `${task.refName}`: the reference name of the task a request updates by id, read from its execution. */
  taskRefName?: string | undefined;
  /** `${task.name}`: the task (definition) name of that task, which workers poll by. */
  taskName?: string | undefined;
  /**
   * True when `workflowName` was read from an execution (an id in the path, a task's or a TaskResult's execution),
   * not named by the request itself: a refusal then names it only to a caller holding something on that workflow.
   */
  workflowNameFromExecution?: boolean | undefined;
}

/** Finds what a request targets when a rule needs it (only then, and once: it may cost a lookup). */
export type TargetResolver = (variables: Record<string, string>) => Promise<RequestTarget>;

/** Every placeholder a required scope may use; filled in one pass, so a value is never read as one. */
const PLACEHOLDER = /\$\{(?:path\.(\w+)|(workflow\.name)|task\.(refName|name))\}/g;
const TARGET_PLACEHOLDER = /\$\{(?:workflow\.name|task\.refName|task\.name)\}/;

/** What a target's placeholders fill in as: the names found, or markers for what was not. */
interface FilledTarget {
  workflowName: string;
  taskRefName: string;
  taskName: string;
}

function substitute(scope: string, variables: Record<string, string>, target: FilledTarget): string {
  return scope.replace(PLACEHOLDER, (_match, pathName: string | undefined, workflow: string | undefined, task: string | undefined) => {
    if (pathName !== undefined) return variables[pathName] ?? "";
    if (workflow !== undefined) return target.workflowName;
    return task === "name" ? target.taskName : target.taskRefName;
  });
}

/**
 * A required scope with its placeholders filled in, or undefined when it names a task the request does
 * not target (then no grant meets it, not even `task:*`). An unknown workflow fills in as the empty name,
 * which only grants on every workflow cover: they would let the caller reach it anyway.
 */
function fillScope(scope: string, variables: Record<string, string>, target: RequestTarget): string | undefined {
  if (target.taskRefName === undefined && scope.includes("${task.refName}")) return undefined;
  if (target.taskName === undefined && scope.includes("${task.name}")) return undefined;
  return substitute(scope, variables, { workflowName: target.workflowName ?? "", taskRefName: target.taskRefName ?? "", taskName: target.taskName ?? "" });
}

/** True when some grant gives `action` at scope `*`, which covers every scope a rule could name. */
function holdsEverywhere(grants: readonly Grant[], action: Grant["action"]): boolean {
  return grants.some((grant) => grant.action === action && grant.scope === "*");
}

async function allows(principal: Principal, required: Grant, variables: Record<string, string>, target: () => Promise<RequestTarget>): Promise<boolean> {
  if (required.scope === ANY_SCOPE) return principal.grants.some((grant) => grant.action === required.action);
  if (holdsEverywhere(principal.grants, required.action)) return true;
  const scope = fillScope(required.scope, variables, TARGET_PLACEHOLDER.test(required.scope) ? await target() : {});
  return scope !== undefined && grantsAllow(principal.grants, required.action, scope);
}

/**
 * How a 403 names what was required: scopes as resolved, with markers for what was not looked up or found. A task's
 * names read from its execution stay markers: the caller, refused, may not know what that workflow runs.
 */
function describeRequired(required: readonly Grant[], variables: Record<string, string>, target: RequestTarget | undefined, grants: readonly Grant[]): string {
  const filled: FilledTarget = {
    workflowName: target ? shownWorkflowName(target, grants) : "<workflow>",
    taskRefName: "<task>",
    taskName: "<task name>",
  };
  return required
    .map((grant) => `${grant.action} on ${grant.scope === ANY_SCOPE ? "some scope" : substitute(grant.scope, variables, filled)}`)
    .join(" or ");
}

/**
 * The workflow name a 403 shows: the one the request named, or one read from an execution only to a caller holding
 * some permission on that workflow. Anyone else gets the marker, for an unknown execution too, so that a refusal
 * tells neither which workflow a stranger's execution (or task) belongs to nor whether the id exists at all.
 */
function shownWorkflowName(target: RequestTarget, grants: readonly Grant[]): string {
  const name = target.workflowName;
  if (!target.workflowNameFromExecution) return name ?? "";
  return name !== undefined && grants.some((grant) => scopeCovers(grant.scope, `workflow:${name}`)) ? name : "<workflow>";
}

/**
 * Throws 403 unless the first rule matching the request lets the principal make it. The message
 * names the permissions and scopes that were required (never anything about other users or keys).
 * Returns the required permission that let it (undefined when the rule requires none), so a route can hold the
 * request to what was checked.
 */
export async function authorize(
  principal: Principal,
  method: string,
  path: string,
  rules: readonly AccessRule[],
  resolveTarget: TargetResolver,
): Promise<Grant | undefined> {
  for (const rule of rules) {
    if (!rule.methods.includes(method) && !rule.methods.includes("*")) continue;
    const variables = matchApiPath(rule.apiPath, path);
    if (!variables) continue;
    if (rule.requiredPermissions.length === 0) return undefined;
    let resolved: RequestTarget | undefined;
    const target = async () => (resolved ??= await resolveTarget(variables));
    for (const required of rule.requiredPermissions) {
      if (await allows(principal, required, variables, target)) return required;
    }
    throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: ${method} ${path} needs ${describeRequired(rule.requiredPermissions, variables, resolved, principal.grants)}`);
  }
  throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: no access rule allows ${method} ${path}`);
}

/**
 * The scopes at which `grants` let their holder start workflows: a snapshot stored with each execution
 * they start (or restart, rerun, retry), which bounds what its SUB_WORKFLOW tasks may start. `["*"]`
 * for a holder who may start every workflow.
 */
export function startScopes(grants: readonly Grant[]): string[] {
  if (holdsEverywhere(grants, START_PERMISSION)) return ["*"];
  return [...new Set(grants.filter((grant) => grant.action === START_PERMISSION).map((grant) => grant.scope))];
}

/** True when a snapshot from {@link startScopes} lets its execution start workflow `name` as a child. */
export function mayStartWorkflow(scopes: readonly string[], name: string): boolean {
  return scopes.some((scope) => scopeCovers(scope, `workflow:${name}`));
}

/**
 * Why an execution may not start workflow `name` on behalf of whoever started it (`starter` names what they
 * started), holding their recorded start `scopes`: a SUB_WORKFLOW child, a failure workflow. Undefined when it may,
 * or when no scopes were recorded (executions stored before they were, which start unchecked).
 */
export function startOnBehalfDenial(scopes: readonly string[] | undefined, starter: string, name: string): string | undefined {
  return onBehalfDenial(scopes, starter, name, "start");
}

/**
 * Why an execution may not act on workflow `name`'s executions (`action`: terminate them, update their tasks) on behalf
 * of whoever started it: as for a start, the {@link START_PERMISSION} their recorded start `scopes` hold on it, which
 * is also what managing its lifecycle takes. Undefined when it may, or when no scopes were recorded. Given what its
 * task's input named (`given`: "execution <id>", "task <id>"), the reason names that, as given, rather than the workflow
 * or the execution found from it: those were read from the execution, and a reason shown to whoever reads the acting
 * workflow must not tell them what a stranger's execution is (as a refused request's 403 does not: see
 * `describeRequired`).
 */
export function onBehalfDenial(scopes: readonly string[] | undefined, starter: string, name: string, action: string, given?: string): string | undefined {
  if (scopes === undefined || mayStartWorkflow(scopes, name)) return undefined;
  if (given !== undefined) return `whoever started ${starter} may not ${action} ${given} (it needs ${START_PERMISSION} on its workflow)`;
  return `whoever started ${starter} may not ${action} workflow ${name} (it needs ${START_PERMISSION} on workflow:${name})`;
}
