/**
 * Encryption at rest of secret values: AES-256-GCM through WebCrypto, no other dependency, so the
 * same code runs in the Worker, the Durable Object and Node (unit tests).
 *
 * A stored value reads `v1:<base64 iv>:<base64 ciphertext+tag>`. The version names the key that
 * encrypted it, so a later key can be added as `v2` (and made current) while values written under
 * `v1` still decrypt until they are put again. The secret's name is the additional authenticated
 * data: a ciphertext copied to another name fails authentication instead of leaking under it.
 */

/** Why the secrets store cannot encrypt: nothing configured, or a key that is not 32 bytes of base64. */
export type KeyProblem = "missing" | "malformed";

/** The keys the store can use, by version, and the version new values are written with. */
export interface SecretsKeyring {
  /** Version written into new values (the first segment of the stored form). */
  readonly current: string;
  /** Every version that can still be read. */
  readonly keys: ReadonlyMap<string, CryptoKey>;
}

/** The outcome of loading the keyring from configuration. Never carries the key material. */
export type KeyringResult = { ok: true; keyring: SecretsKeyring } | { ok: false; problem: KeyProblem; message: string };

/** The version of values encrypted with `SECRETS_ENCRYPTION_KEY`. */
export const KEY_VERSION_1 = "v1";

/** What an operator is told when no key is configured; names the exact command to fix it. */
export const NOT_CONFIGURED_MESSAGE = "secrets are not configured: set SECRETS_ENCRYPTION_KEY (wrangler secret put SECRETS_ENCRYPTION_KEY)";

/** What an operator is told when the key is unusable. Deliberately says nothing about the value given. */
export const MALFORMED_KEY_MESSAGE =
  "secrets are not configured: SECRETS_ENCRYPTION_KEY must be the base64 of 32 random bytes (e.g. `openssl rand -base64 32`); set it with wrangler secret put SECRETS_ENCRYPTION_KEY";

const IV_BYTES = 12;
const KEY_BYTES = 32;
const encoder = new TextEncoder();
// fatal: a value that decrypts to invalid UTF-8 is corrupt, not something to show with U+FFFD.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Bytes per `fromCharCode` call of {@link toBase64}: under the argument limit, and large enough to be few. */
const BASE64_CHUNK = 0x2000;

/**
 * Standard base64 of bytes; chunked so a large value (a cached task output of 768 KiB) does not exceed the argument
 * limit of `fromCharCode`. `apply` with the typed array itself, not a spread: some five times faster for large values.
 */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let offset = 0; offset < bytes.length; offset += BASE64_CHUNK) {
    binary += String.fromCharCode.apply(null, bytes.subarray(offset, offset + BASE64_CHUNK) as unknown as number[]);
  }
  return btoa(binary);
}

/** Bytes of standard base64, or undefined when it is not base64 (atob alone accepts some oddities, so the alphabet is checked first). */
export function fromBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  try {
    // A plain loop: `Uint8Array.from` with a mapping function is some twenty times slower on large values.
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
    return bytes;
  } catch {
    return undefined;
  }
}

async function importKey(raw: string | undefined): Promise<KeyringResult> {
  if (raw === undefined || raw.trim() === "") return { ok: false, problem: "missing", message: NOT_CONFIGURED_MESSAGE };
  const bytes = fromBase64(raw.trim());
  if (!bytes || bytes.length !== KEY_BYTES) return { ok: false, problem: "malformed", message: MALFORMED_KEY_MESSAGE };
  // Not extractable: nothing that gets hold of the CryptoKey can read the key back out.
  const key = await crypto.subtle.importKey("raw", bytes, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
  return { ok: true, keyring: { current: KEY_VERSION_1, keys: new Map([[KEY_VERSION_1, key]]) } };
}

// One entry: an isolate sees one configuration, and importing per request would be wasted work.
let cached: { raw: string | undefined; result: Promise<KeyringResult> } | undefined;

/**
 * The keyring for the configured `SECRETS_ENCRYPTION_KEY`: `ok: false` (with an operator-facing
 * message) when it is missing or not base64 of exactly 32 bytes. Never throws and never echoes the key.
 */
export function loadKeyring(raw: string | undefined): Promise<KeyringResult> {
  if (cached !== undefined && cached.raw === raw) return cached.result;
  const result = importKey(raw);
  cached = { raw, result };
  return result;
}

/** Encrypts `value` for the secret `name` with the keyring's current key, in the stored form `v1:<iv>:<ciphertext>`. */
export async function encryptSecret(keyring: SecretsKeyring, name: string, value: string): Promise<string> {
  const key = keyring.keys.get(keyring.current);
  if (!key) throw new Error(`secrets keyring has no key for its current version ${keyring.current}`);
  // A fresh random IV per value: GCM must never reuse an IV under one key, and it makes equal values look different.
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const ciphertext = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(name) }, key, encoder.encode(value));
  return `${keyring.current}:${toBase64(iv)}:${toBase64(new Uint8Array(ciphertext))}`;
}

/**
 * The plaintext of a stored value for the secret `name`, or undefined when it cannot be trusted:
 * unknown format or key version, wrong key, tampered bytes, or a ciphertext belonging to another name.
 */
export async function decryptSecret(keyring: SecretsKeyring, name: string, stored: string): Promise<string | undefined> {
  const parts = stored.split(":");
  if (parts.length !== 3) return undefined;
  const [version, ivText, ciphertextText] = parts as [string, string, string];
  const key = keyring.keys.get(version);
  const iv = fromBase64(ivText);
  const ciphertext = fromBase64(ciphertextText);
  if (!key || !iv || iv.length !== IV_BYTES || !ciphertext) return undefined;
  try {
    const plaintext = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(name) }, key, ciphertext);
    return decoder.decode(plaintext);
  } catch {
    // Authentication failure (wrong key, other name, tampering) or invalid UTF-8: the same "unusable" to the caller.
    return undefined;
  }
}
