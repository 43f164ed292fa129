/**
 * UPDATE_SECRET (Orkes'): writes a secret as the workflow runs, creating it when it does not exist: `_secrets.secretKey`
 * names it, `_secrets.secretValue` gives its value (a token a task just fetched, say), both usually expressions. The
 * input is masked wherever the service shows it (`_secrets`). The actor writes the secret, encrypted as the secrets
 * API does (`actors/dispatch/update-secret.ts`); later tasks read it as `${workflow.secrets.<key>}`.
 *
 * Writing a secret is the secrets API's right (`SYSTEM_ADMIN` on `*`), checked when a definition holding one is
 * registered; so a task known only as the workflow runs (a DYNAMIC's choice, a dynamic fork's) may not be one.
 */
import type { WorkflowDef, WorkflowTaskDef } from "../../model";
import { flattenTasks } from "../../plan";
import { inlineChildDefinition } from "../sub-workflow";
import { dynamicInlineChild } from "../dynamic/concrete";
import { dispatchedTaskType } from "../task-type";

export { UPDATE_SECRET_INPUT, updateSecretRequest, type UpdateSecretRequest } from "./request";

/** Its attempt: one encryption and one write. */
export const updateSecretTask = dispatchedTaskType("UPDATE_SECRET", 1);

/**
 * The UPDATE_SECRET tasks of `definition`, inside branches, loops and inline sub workflow definitions too (a DYNAMIC's
 * written in place among them: it runs as one when the DYNAMIC chooses a SUB_WORKFLOW).
 */
export function secretUpdatingTasks(definition: Pick<WorkflowDef, "tasks">): WorkflowTaskDef[] {
  return flattenTasks(definition.tasks).flatMap((task) => {
    const child = task.type === "SUB_WORKFLOW" ? inlineChildDefinition(task) : task.type === "DYNAMIC" ? (dynamicInlineChild(task) as WorkflowDef | undefined) : undefined;
    const own = task.type === "UPDATE_SECRET" ? [task] : [];
    return child === undefined || !Array.isArray(child.tasks) ? own : [...own, ...secretUpdatingTasks(child)];
  });
}
