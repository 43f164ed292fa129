import { awaitingOutsideTask } from "../awaiting-outside";

/**
 * HUMAN (Conductor OSS's): no side effect; it waits, IN_PROGRESS, for a person's decision reported from outside
 * (`POST /api/tasks`, `/api/tasks/{workflowId}/{ref}/{status}`, the UI's Complete), whose output becomes its own.
 * Orkes' assignment and form settings (`__humanTaskDefinition` in its input) are kept in the input and shown, not acted on.
 */
export const humanTask = awaitingOutsideTask("HUMAN");
