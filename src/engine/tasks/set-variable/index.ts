import { referencedSecrets } from "../../expressions";
import type { JsonObject, TaskExecution, WorkflowTaskDef } from "../../model";
import { mergedVariables, variablesProblem } from "../../variables";
import { failedAtStart, type TaskTypeModule } from "../task-type";

/** Secrets the task's input template names: its own inputParameters and its task definition's inputTemplate. */
function namedSecrets(definition: WorkflowTaskDef): string[] {
  const template: JsonObject = { ...(definition.taskDefinition?.inputTemplate ?? {}), ...(definition.inputParameters ?? {}) };
  return referencedSecrets(template);
}

/**
 * SET_VARIABLE (Conductor's): its resolved input is merged into the workflow variables, shallow, key by key, and it
 * completes at once, in the same decision, with an empty output; tasks scheduled after it read the new values
 * (`${workflow.variables.x}`). Variables over MAX_PAYLOAD_BYTES fail it for good and stay as they were. A secret in
 * its input is refused at registration; one a task definition copied in at the start names fails it here (the
 * variables are shown by the API, and would hold only the mask).
 */
export const setVariableTask: TaskTypeModule = {
  type: "SET_VARIABLE",
  start(task, definition, execution, env) {
    const secrets = namedSecrets(definition);
    if (secrets.length > 0) return { task: failedAtStart(task, `SET_VARIABLE input names secrets (${secrets.join(", ")}): workflow variables are shown by the API, so a secret cannot be one`, env.now), dispatch: false };
    const variables = mergedVariables(execution.variables, task.inputData);
    const problem = variablesProblem("The workflow's variables object with this task's input", variables, env.config.maxPayloadBytes);
    if (problem !== undefined) return { task: failedAtStart(task, problem, env.now), dispatch: false };
    const completed: TaskExecution = { ...task, status: "COMPLETED", outputData: {}, startTime: env.now, endTime: env.now, updateTime: env.now };
    return { task: completed, dispatch: false, variables };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
