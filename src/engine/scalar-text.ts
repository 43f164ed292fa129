/**
 * A JSON scalar read as text, as Jackson reads one into a Java String field (Conductor's and Orkes' models): a number
 * or boolean becomes its text (`42` is `"42"`), an object or array is refused. Shared by the API's request schemas and
 * the tasks that start workflows, so that a key or correlation id is the same text whichever way it came.
 */

/**
 * True for an integer beyond 2^53: JSON.parse has already rounded it (12345678901234567890 and …891 read alike), so
 * its text is not what the client sent. Refused where it would be taken as text, rather than merged with another.
 */
export function hasLostDigits(value: unknown): boolean {
  return typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value);
}

/** True for a value that reads as text: a string, a boolean, or a finite number whose digits are all there. */
export function isTextScalar(value: unknown): value is string | number | boolean {
  if (typeof value === "string" || typeof value === "boolean") return true;
  return typeof value === "number" && Number.isFinite(value) && !hasLostDigits(value);
}

/** Why a number beyond 2^53 is not taken as text. */
export const LOST_DIGITS_MESSAGE = "must be a string when it is a number this large (its digits are lost as a JSON number)";

/** What a definition may write where a task reads text ({@link isTextScalar}): an expression is a string too. */
export const TEXT_SCALAR_RULE = "a string, a number or a boolean (an expression is allowed; an integer beyond 2^53 only as text, since a JSON number loses its digits)";
