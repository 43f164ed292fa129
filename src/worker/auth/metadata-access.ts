import { ApiError } from "../http/errors";
import { requiredFor, type Access } from "../security/resource-grants";
import { eitherName, grantsAllow, namesGranted, type Grant, type NameFilter, type Permission } from "./permissions";

/**
 * Who may read and write which definitions, and read which task types' queues, for the routes that show each caller
 * only those or check each name a body gives. The access rules let a caller holding the permission at any scope reach
 * such a route (`GET /api/metadata/workflow`, `/api/metadata/taskdefs`, the summaries, the worker queues, a `PUT` of
 * several definitions); these checks then keep what the caller could reach one by one at its own route.
 */

/** True when `grants` let their holder read tasks named `name` (their definition, queue, polls and metrics): TASK_READ on `task:<name>`. */
export function mayReadTasksNamed(grants: readonly Grant[], name: string): boolean {
  return grantsAllow(grants, "TASK_READ", `task:${name}`);
}

/** The kinds of definition the listings filter by the caller's grants: workflow definitions and task definitions. */
type DefinitionKind = "workflow" | "task";

/**
 * One way of holding a right over definitions of a kind: a permission at each definition's own scope
 * (`<kind>:<name>`), or at `*` (every definition, whatever its name).
 */
interface Holding {
  action: Permission;
  at: "own" | "every";
}

/**
 * The ways of holding each access to each kind of definition (any one suffices). Reading or writing a workflow
 * definition: METADATA_ADMIN, or WORKFLOW_READ (WORKFLOW_WRITE) on `workflow:<name>`. Reading or writing a task
 * definition: METADATA_ADMIN or WORKFLOW_READ (WORKFLOW_WRITE) on every workflow (which read and write every task
 * definition, as before there were task scopes), or TASK_READ (TASK_WRITE) on `task:<name>` (what Orkes' READ, and its
 * CREATE, UPDATE and DELETE, on a TASK_DEF give; the spec's "create and modify task definitions", at a given task or
 * globally). EXECUTE, as Orkes' grant of it is held here: WORKFLOW_ADMIN on `workflow:<name>`, TASK_EXECUTE on
 * `task:<name>` (see `security/resource-grants.ts`).
 */
const HOLDINGS: Record<DefinitionKind, { read: readonly Holding[]; write: readonly Holding[] }> = {
  workflow: {
    read: [{ action: "METADATA_ADMIN", at: "every" }, { action: "WORKFLOW_READ", at: "own" }],
    write: [{ action: "METADATA_ADMIN", at: "every" }, { action: "WORKFLOW_WRITE", at: "own" }],
  },
  task: {
    read: [{ action: "METADATA_ADMIN", at: "every" }, { action: "WORKFLOW_READ", at: "every" }, { action: "TASK_READ", at: "own" }],
    write: [{ action: "METADATA_ADMIN", at: "every" }, { action: "WORKFLOW_WRITE", at: "every" }, { action: "TASK_WRITE", at: "own" }],
  },
};

/** The ways of holding `access` to a definition of `kind`. */
function holdingsOf(kind: DefinitionKind, access: Access): readonly Holding[] {
  if (access === "READ") return HOLDINGS[kind].read;
  if (access !== "EXECUTE") return HOLDINGS[kind].write;
  // Orkes' EXECUTE as a grant holds it: at the definition's own scope (`requiredFor` names the scope with the name).
  const required = requiredFor({ type: kind === "workflow" ? "WORKFLOW_DEF" : "TASK_DEF", id: "" }, "EXECUTE");
  return [{ action: required.action, at: required.scope === "*" ? "every" : "own" }];
}

/** True when `grants` hold one of `holdings` for the definition of `kind` named `name`. */
function holds(grants: readonly Grant[], kind: DefinitionKind, holdings: readonly Holding[], name: string): boolean {
  return holdings.some((holding) => grantsAllow(grants, holding.action, holding.at === "every" ? "*" : `${kind}:${name}`));
}

/** True when `grants` let their holder read the workflow definition `name`: METADATA_ADMIN, or WORKFLOW_READ on `workflow:<name>`. */
export function mayReadWorkflowDef(grants: readonly Grant[], name: string): boolean {
  return holds(grants, "workflow", HOLDINGS.workflow.read, name);
}

/**
 * True when `grants` let their holder read the task definition `name`: METADATA_ADMIN or WORKFLOW_READ on every
 * workflow, or TASK_READ on `task:<name>` (see {@link HOLDINGS}).
 */
export function mayReadTaskDef(grants: readonly Grant[], name: string): boolean {
  return holds(grants, "task", HOLDINGS.task.read, name);
}

/** True when `grants` let their holder register, replace or delete the workflow definition `name`: METADATA_ADMIN, or WORKFLOW_WRITE on `workflow:<name>`. */
export function mayWriteWorkflowDef(grants: readonly Grant[], name: string): boolean {
  return holds(grants, "workflow", HOLDINGS.workflow.write, name);
}

/**
 * True when `grants` let their holder register, replace or delete the task definition `name`: METADATA_ADMIN or
 * WORKFLOW_WRITE on every workflow, or TASK_WRITE on `task:<name>` (see {@link HOLDINGS}).
 */
export function mayWriteTaskDef(grants: readonly Grant[], name: string): boolean {
  return holds(grants, "task", HOLDINGS.task.write, name);
}

/**
 * True when `grants` give their holder Orkes' `access` to the workflow (`kind` "workflow") or task definition `name`, as
 * the listings' `access` parameter asks: READ and the writes (CREATE, UPDATE, DELETE) as the routes check them (see
 * {@link mayReadWorkflowDef}, {@link mayWriteWorkflowDef} and the task ones), EXECUTE as Orkes' grant of it is held here.
 */
export function mayAccessDefinition(grants: readonly Grant[], kind: DefinitionKind, name: string, access: Access): boolean {
  return holds(grants, kind, holdingsOf(kind, access), name);
}

/**
 * The names of the definitions of `kind` a listing asked with `access` answers `grants`' holder, as filters every one
 * of which a name must pass: those it may read ({@link mayReadTaskDef} or {@link mayReadWorkflowDef}) and, for another
 * `access`, holds that access to ({@link mayAccessDefinition}); the very names those predicates let through one by one.
 * A listing reads, and its bound counts, only those: never the sizes of definitions the caller may not see.
 */
export function listedDefinitionNames(grants: readonly Grant[], kind: DefinitionKind, access: Access = "READ"): NameFilter[] {
  const namesHeld = (holding: Holding): NameFilter =>
    holding.at === "own" ? namesGranted(grants, holding.action, `${kind}:`) : grantsAllow(grants, holding.action, "*") ? "every" : { names: [], prefixes: [] };
  const held = (holdings: readonly Holding[]) => eitherName(holdings.map(namesHeld));
  return access === "READ" ? [held(HOLDINGS[kind].read)] : [held(HOLDINGS[kind].read), held(holdingsOf(kind, access))];
}

/**
 * Throws 403 when a task definition's `inputTemplate` holds an expression (`${…}`) and `grants` may write task
 * definitions only for some names: resolved in every execution using the task, it would copy data of workflows its
 * writer may not read into tasks it may. Writers of every task definition (or all metadata) may.
 */
export function requireTemplateWriter(grants: readonly Grant[], taskDefs: ReadonlyArray<{ name: string; inputTemplate?: unknown }>): void {
  // A writer of the scope `task:*` writes every task definition (so does one of all metadata).
  if (mayWriteTaskDef(grants, "*")) return;
  const reading = taskDefs.filter((taskDef) => taskDef.inputTemplate !== undefined && JSON.stringify(taskDef.inputTemplate).includes("${"));
  if (reading.length === 0) return;
  throw new ApiError(
    403,
    "PERMISSION_DENIED",
    `Permission denied: an inputTemplate with expressions reads the data of every workflow using the task; it needs METADATA_ADMIN, or WORKFLOW_WRITE or TASK_WRITE on * (${reading.map((taskDef) => taskDef.name).join(", ")})`,
  );
}

/** The `name` of each object of a request's body (a list of definitions) that gives one as text: checked before validation. */
export function givenNames(definitions: readonly unknown[]): string[] {
  return definitions.flatMap((definition) => {
    const name = typeof definition === "object" && definition !== null ? (definition as { name?: unknown }).name : undefined;
    return typeof name === "string" ? [name] : [];
  });
}

/**
 * Throws 403 unless `grants` let their holder write every one of `names` (a request registering several is all or
 * nothing), naming those it may not write and what writing one needs.
 */
export function requireWritable(grants: readonly Grant[], kind: "workflow" | "task", names: Iterable<string>): void {
  const mayWrite = kind === "workflow" ? mayWriteWorkflowDef : mayWriteTaskDef;
  const denied = [...new Set(names)].filter((name) => !mayWrite(grants, name));
  if (denied.length === 0) return;
  const needed = kind === "workflow" ? "METADATA_ADMIN or WORKFLOW_WRITE on workflow:<name>" : "METADATA_ADMIN, WORKFLOW_WRITE on *, or TASK_WRITE on task:<name>";
  throw new ApiError(403, "PERMISSION_DENIED", `Permission denied: writing a ${kind} definition needs ${needed}; not held for ${denied.join(", ")}`);
}
