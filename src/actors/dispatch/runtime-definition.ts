import { referencedSecrets } from "../../engine/expressions";
import type { JsonValue, WorkflowDef } from "../../engine/model";
import { secretUpdatingTasks } from "../../engine/tasks/update-secret";
import { validateDefinitions } from "../../worker/definition-validation";
import { ApiError } from "../../worker/http/errors";

/** A definition a task's input gave as its workflow ran, ready to start, or why it cannot run. */
export type RuntimeDefinition = { ok: true; definition: WorkflowDef } | { ok: false; reason: string };

/**
 * Checks a workflow definition a task's input gave as the workflow ran (a SUB_WORKFLOW's `workflowDefinition`
 * expression, a START_WORKFLOW's `workflowDef`) as its registration would be checked, its problems named under `field`.
 * Given as data, which whoever starts the workflow may choose, it may not read secrets nor write them (only a
 * registered definition may, whoever registers it being checked for the right to). A `written` one, a definition the
 * registered one holds as written, may read them (that registration checked the right to), never write them; and,
 * accepted by that registration, it is not refused for what only a registration's lint rules catch (a rule added since
 * must not fail a definition that registered and ran before it): rules protecting the run still apply.
 */
export async function runtimeDefinition(env: Env, given: JsonValue, field: string, written = false): Promise<RuntimeDefinition> {
  let definition: WorkflowDef;
  try {
    [definition] = (await validateDefinitions([given], env, () => field, written)) as [WorkflowDef];
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) return { ok: false, reason: error.message };
    throw error;
  }
  const secrets = written ? [] : referencedSecrets(definition as unknown as JsonValue);
  if (secrets.length > 0) {
    const named = secrets.map((name) => `\${workflow.secrets.${name}}`).join(", ");
    return { ok: false, reason: `${field} reads secrets (${named}): a definition given as the workflow runs may not; only a registered one may` };
  }
  const writer = secretUpdatingTasks(definition)[0];
  if (writer !== undefined) return { ok: false, reason: `${field} holds an UPDATE_SECRET (${writer.taskReferenceName}): a definition given as the workflow runs may not write secrets` };
  return { ok: true, definition };
}
