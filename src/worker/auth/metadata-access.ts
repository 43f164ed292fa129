import { ApiError } from "../http/errors";
import { requiredFor, type Access } from "../security/resource-grants";
import { grantsAllow, type Grant } from "./permissions";

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

/** True when `grants` let their holder read the workflow definition `name`: METADATA_ADMIN, or WORKFLOW_READ on `workflow:<name>`. */
export function mayReadWorkflowDef(grants: readonly Grant[], name: string): boolean {
  return grantsAllow(grants, "METADATA_ADMIN", "*") || grantsAllow(grants, "WORKFLOW_READ", `workflow:${name}`);
}

/**
 * True when `grants` let their holder read the task definition `name`: METADATA_ADMIN or WORKFLOW_READ on every
 * workflow (which read every task definition, as before there were task scopes), or TASK_READ on `task:<name>` (what
 * Orkes' READ access to a TASK_DEF gives).
 */
export function mayReadTaskDef(grants: readonly Grant[], name: string): boolean {
  return grantsAllow(grants, "METADATA_ADMIN", "*") || grantsAllow(grants, "WORKFLOW_READ", "*") || mayReadTasksNamed(grants, name);
}

/** True when `grants` let their holder register, replace or delete the workflow definition `name`: METADATA_ADMIN, or WORKFLOW_WRITE on `workflow:<name>`. */
export function mayWriteWorkflowDef(grants: readonly Grant[], name: string): boolean {
  return grantsAllow(grants, "METADATA_ADMIN", "*") || grantsAllow(grants, "WORKFLOW_WRITE", `workflow:${name}`);
}

/**
 * True when `grants` let their holder register, replace or delete the task definition `name`: METADATA_ADMIN or
 * WORKFLOW_WRITE on every workflow (as before there were task scopes), or TASK_WRITE on `task:<name>` (the spec's
 * "create and modify task definitions", at a given task or globally; Orkes' CREATE, UPDATE and DELETE on a TASK_DEF).
 */
export function mayWriteTaskDef(grants: readonly Grant[], name: string): boolean {
  return grantsAllow(grants, "METADATA_ADMIN", "*") || grantsAllow(grants, "WORKFLOW_WRITE", "*") || grantsAllow(grants, "TASK_WRITE", `task:${name}`);
}

/**
 * True when `grants` give their holder Orkes' `access` to the workflow (`kind` "workflow") or task definition `name`, as
 * the listings' `access` parameter asks: READ and the writes (CREATE, UPDATE, DELETE) as the routes check them (see
 * {@link mayReadWorkflowDef}, {@link mayWriteWorkflowDef} and the task ones), EXECUTE as Orkes' grant of it is held here
 * (WORKFLOW_ADMIN on `workflow:<name>`, TASK_EXECUTE on `task:<name>`: see `security/resource-grants.ts`).
 */
export function mayAccessDefinition(grants: readonly Grant[], kind: "workflow" | "task", name: string, access: Access): boolean {
  if (access === "READ") return kind === "workflow" ? mayReadWorkflowDef(grants, name) : mayReadTaskDef(grants, name);
  if (access === "EXECUTE") {
    const required = requiredFor({ type: kind === "workflow" ? "WORKFLOW_DEF" : "TASK_DEF", id: name }, "EXECUTE");
    return grantsAllow(grants, required.action, required.scope);
  }
  return kind === "workflow" ? mayWriteWorkflowDef(grants, name) : mayWriteTaskDef(grants, name);
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
