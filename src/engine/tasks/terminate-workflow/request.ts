import { cutText, MAX_TASK_REASON_LENGTH } from "../../limits";
import { reasonMaskedOf } from "../../masked-reason";
import type { JsonObject } from "../../model";

/** The most workflows one TERMINATE_WORKFLOW terminates: each is a call to its execution. */
export const MAX_TERMINATED_WORKFLOWS = 100;

/** What a TERMINATE_WORKFLOW asks for, read from its resolved input (Orkes' Terminate Workflow). */
export interface TerminateWorkflowRequest {
  /** The executions to terminate, each once, in the order given. */
  workflowIds: string[];
  reason: string;
  /** Whether each one's failure workflow starts too, as a termination asking for it does. */
  triggerFailureWorkflow: boolean;
}

/** The ids a resolved `workflowId` names: a list of them (Orkes'), or one as text. */
function idsOf(value: unknown): string[] | undefined {
  const list = Array.isArray(value) ? value : [value];
  // `["${workflow.input.ids}"]` with a list as the input resolves to a list inside the list: flattened.
  const ids = list.flat();
  if (ids.length === 0 || !ids.every((id): id is string => typeof id === "string" && id.trim() !== "")) return undefined;
  return [...new Set(ids.map((id) => id.trim().toLowerCase()))];
}

/**
 * The terminations a TERMINATE_WORKFLOW's resolved `input` asks for, or why it asks for none. `masked`: the texts of its
 * input the API shows as `***` (see maskedInputValues), scrubbed from the reason before it is cut, as a TERMINATE's own
 * reason is: each terminated workflow shows the reason to whoever may read it.
 */
export function terminateWorkflowRequest(input: JsonObject, masked: readonly string[] = []): TerminateWorkflowRequest | { invalid: string } {
  const workflowIds = idsOf(input["workflowId"]);
  if (workflowIds === undefined) return { invalid: `workflowId resolved to ${JSON.stringify(input["workflowId"] ?? null)}, not a list of workflow ids` };
  if (workflowIds.length > MAX_TERMINATED_WORKFLOWS) return { invalid: `workflowId lists ${workflowIds.length} workflows; one task terminates at most ${MAX_TERMINATED_WORKFLOWS}` };
  const reason = input["terminationReason"] ?? "";
  if (typeof reason !== "string") return { invalid: `terminationReason resolved to ${JSON.stringify(reason)}, not text` };
  const trigger = input["triggerFailureWorkflow"] ?? false;
  if (typeof trigger !== "boolean") return { invalid: `triggerFailureWorkflow resolved to ${JSON.stringify(trigger)}, not true or false` };
  // Cut as a TERMINATE's own reason is: each terminated workflow keeps it in its row, search row and listeners' summaries.
  return { workflowIds, reason: cutText(reasonMaskedOf(reason, masked), MAX_TASK_REASON_LENGTH), triggerFailureWorkflow: trigger };
}
