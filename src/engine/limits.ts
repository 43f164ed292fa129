import type { JsonValue } from "./model";

const encoder = new TextEncoder();

/**
 * The size in bytes of a value as stored (UTF-8 JSON), when it exceeds `limit`; undefined when it
 * fits. Checked where a payload comes from outside the engine's control (a response, a completion,
 * a child's output, outputParameters), so an oversized one fails clearly instead of breaking the
 * write that would persist it.
 */
export function oversize(value: JsonValue, limit: number): number | undefined {
  const json = JSON.stringify(value);
  // Cheap first: a UTF-8 encoding is at most 3 bytes per UTF-16 unit.
  if (json.length * 3 <= limit) return undefined;
  const bytes = encoder.encode(json).length;
  return bytes > limit ? bytes : undefined;
}

/** The reason given when a payload is too large. */
export function oversizeReason(what: string, bytes: number, limit: number): string {
  return `${what} is ${bytes} bytes, over the limit of ${limit} bytes (MAX_PAYLOAD_BYTES)`;
}
