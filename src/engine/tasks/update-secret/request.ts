import { isJsonObjectValue } from "../workflow-start-fields";
import type { JsonObject } from "../../model";
import { isValidSecretName, MAX_SECRET_VALUE_BYTES } from "../../secret-rules";

/** The input key holding what an UPDATE_SECRET writes (Orkes'): masked wherever the service shows it. */
export const UPDATE_SECRET_INPUT = "_secrets";

/** What an UPDATE_SECRET writes, read from its resolved input (Orkes' Update Secret). */
export interface UpdateSecretRequest {
  /** The secret's name. */
  key: string;
  /** Its new value. */
  value: string;
}

/**
 * The secret an UPDATE_SECRET's resolved `input` writes, or why it writes none. The value is never quoted: it is a
 * secret, and a reason is shown.
 */
export function updateSecretRequest(input: JsonObject): UpdateSecretRequest | { invalid: string } {
  const given = input[UPDATE_SECRET_INPUT];
  if (!isJsonObjectValue(given)) return { invalid: `${UPDATE_SECRET_INPUT} must be an object with secretKey and secretValue` };
  const key = given["secretKey"];
  if (typeof key !== "string" || !isValidSecretName(key)) {
    return { invalid: `${UPDATE_SECRET_INPUT}.secretKey resolved to ${JSON.stringify(key ?? null)}, not a secret name (1 to 128 characters of A-Z, a-z, 0-9, '_', '.' or '-')` };
  }
  const value = given["secretValue"];
  if (typeof value !== "string" || value === "") return { invalid: `${UPDATE_SECRET_INPUT}.secretValue resolved to no text (it must be a non-empty string)` };
  const bytes = new TextEncoder().encode(value).byteLength;
  if (bytes > MAX_SECRET_VALUE_BYTES) return { invalid: `${UPDATE_SECRET_INPUT}.secretValue is ${bytes} bytes; a secret holds at most ${MAX_SECRET_VALUE_BYTES}` };
  return { key, value };
}
