import type { JsonObject, TaskExecution } from "../../engine/model";
import { updateSecretRequest } from "../../engine/tasks/update-secret";
import { encryptSecret, loadKeyring } from "../../worker/secrets/crypto";
import { putEncryptedSecret } from "../../worker/secrets/store";
import { resultOf, type DispatchResult } from "./result";

/**
 * Performs an UPDATE_SECRET with its live input (a value taken from another secret is real here, `***` in the stored
 * input): writes the secret, encrypted as the secrets API writes it, creating it when it does not exist, and completes
 * with its name. Writing the same value again (a dispatch repeated after an eviction) changes nothing a reader sees. A
 * service without `SECRETS_ENCRYPTION_KEY`, or an input naming no secret or giving no text, fails the task for good,
 * never quoting the value.
 */
export async function dispatchUpdateSecret(db: D1Database, encryptionKey: string | undefined, task: TaskExecution, input: JsonObject, now: number): Promise<DispatchResult> {
  const result = resultOf(task);
  const request = updateSecretRequest(input);
  if ("invalid" in request) return result("FAILED_WITH_TERMINAL_ERROR", {}, request.invalid);
  const keyring = await loadKeyring(encryptionKey);
  if (!keyring.ok) return result("FAILED_WITH_TERMINAL_ERROR", {}, `Secret ${request.key} was not written: ${keyring.message}`);
  await putEncryptedSecret(db, request.key, await encryptSecret(keyring.keyring, request.key, request.value), now);
  return result("COMPLETED", { secretKey: request.key });
}
