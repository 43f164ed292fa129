/**
 * Task ids. A task's id shares its first 64 bits (the first 19 characters, `xxxxxxxx-xxxx-4xxx-`) with its execution's
 * id, the rest (`yxxx-xxxxxxxxxxxx`, 62 random bits) its own: both are version 4 UUIDs, and a task can be found by its
 * id alone (`GET /api/tasks/{taskId}`) through the execution index, with no index of tasks written on every transition.
 */

/** How many leading characters of a task id are its execution id's. */
export const EXECUTION_PREFIX_LENGTH = 19;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is shaped like a UUID (the ids of executions, tasks and webhooks). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * The id of a new task of execution `workflowId`, from `randomId` (a fresh random UUID): `randomId` with the
 * execution's prefix, or `randomId` itself when either is no UUID (ids made up by tests).
 */
export function taskIdWithin(workflowId: string, randomId: string): string {
  if (!UUID.test(workflowId) || !UUID.test(randomId)) return randomId;
  return `${workflowId.slice(0, EXECUTION_PREFIX_LENGTH)}${randomId.slice(EXECUTION_PREFIX_LENGTH)}`.toLowerCase();
}

/** The prefix the id of the execution of task `taskId` starts with, or undefined when `taskId` is no UUID. */
export function executionIdPrefix(taskId: string): string | undefined {
  return UUID.test(taskId) ? taskId.slice(0, EXECUTION_PREFIX_LENGTH).toLowerCase() : undefined;
}

/** `bytes` as lower-case hex, two digits a byte. */
export function hexOf(bytes: Uint8Array): string {
  return [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * The first 16 bytes of `digest` (a SHA-256 or an HMAC-SHA256) shaped as a UUID of `version`: 4 where it stands in for a
 * random id, 8 where it is derived from what anyone may know. The same digest gives the same id, on every run.
 */
export function uuidFromDigest(digest: Uint8Array, version: 4 | 8): string {
  const bytes = digest.slice(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | (version << 4);
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = hexOf(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
