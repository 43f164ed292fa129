import { awaitingOutsideTask } from "../awaiting-outside";

/**
 * YIELD (Orkes'): no side effect; it waits, IN_PROGRESS, until it is resumed from outside: by a signal
 * (`POST /api/tasks/{workflowId}/{status}/signal[/sync]`, which takes the workflow's first WAIT or YIELD) or by any
 * task update naming it. The synchronous execute endpoint answers when the workflow reaches one.
 */
export const yieldTask = awaitingOutsideTask("YIELD");
