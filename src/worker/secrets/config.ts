import { ApiError } from "../http/errors";
import { loadKeyring, type SecretsKeyring } from "./crypto";

/**
 * The keyring for a request that must encrypt, or a 409 CONFLICT telling the operator how to
 * configure it. 409 rather than 500: the service works as built, its state (no key) refuses the
 * write, and the contract keeps 500 for real bugs. The message never contains the key.
 */
export async function requireKeyring(env: { SECRETS_ENCRYPTION_KEY?: string | undefined }): Promise<SecretsKeyring> {
  const result = await loadKeyring(env.SECRETS_ENCRYPTION_KEY);
  if (!result.ok) throw new ApiError(409, "CONFLICT", result.message);
  return result.keyring;
}
