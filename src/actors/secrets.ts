import type { JsonValue } from "../engine/model";
import { decryptSecret, loadKeyring } from "../worker/secrets/crypto";
import { isValidSecretName, readEncryptedSecrets } from "../worker/secrets/store";

/**
 * Where `${workflow.secrets.<name>}` values come from at dispatch (and callback verification) time:
 * exactly the names the task references, read from D1 in one query and decrypted in memory. Nothing
 * is cached, so a secret put or deleted through `/api/secrets` applies to the next dispatch.
 *
 * A name that is unknown, or whose value cannot be decrypted (no or wrong `SECRETS_ENCRYPTION_KEY`,
 * a ciphertext moved from another name), is missing: the task fails with "secret '<name>' is not
 * defined" instead of calling a service with an empty or wrong credential. Undecryptable values are
 * logged by name only, never by value, so an operator can tell "missing" from "key problem".
 */
export async function secretLookup(env: Env, names: string[]): Promise<(name: string) => string | undefined> {
  const wanted = [...new Set(names)].filter(isValidSecretName);
  const values = new Map<string, string>();
  if (wanted.length === 0) return (name) => values.get(name);
  const stored = await readEncryptedSecrets(env.DB, wanted);
  if (stored.size === 0) return (name) => values.get(name);
  const keyring = await loadKeyring(env.SECRETS_ENCRYPTION_KEY);
  if (!keyring.ok) {
    console.error(JSON.stringify({ msg: "secrets cannot be decrypted; treated as missing", reason: keyring.problem, names: [...stored.keys()] }));
    return (name) => values.get(name);
  }
  for (const [name, encrypted] of stored) {
    const plaintext = await decryptSecret(keyring.keyring, name, encrypted);
    if (plaintext === undefined) console.error(JSON.stringify({ msg: "secret could not be decrypted (wrong key or tampered value); treated as missing", name }));
    else values.set(name, plaintext);
  }
  // A Map, not an object: a name like `__proto__` or `constructor` must not find anything inherited.
  return (name) => values.get(name);
}

/** What a redacted secret value is replaced with; the same stand-in the engine stores for secrets. */
const MASK = "***";

/**
 * `value` with every occurrence of any of `secrets` (in strings and object keys) replaced by `***`.
 * For whatever a side effect brings back (a service that echoes its Authorization header, an error
 * message quoting a URL): the engine masks the input it stores, but only the caller of a dispatch
 * knows the real values and can scrub what comes back before it is stored and shown.
 * Longest values first, so a secret containing another is masked whole.
 */
export function redactSecretValues<T extends JsonValue>(value: T, secrets: Iterable<string>): T {
  const needles = [...new Set(secrets)].filter((secret) => secret !== "").sort((a, b) => b.length - a.length);
  if (needles.length === 0) return value;
  const scrub = (text: string): string => needles.reduce((acc, needle) => acc.split(needle).join(MASK), text);
  const walk = (node: JsonValue): JsonValue => {
    if (typeof node === "string") return scrub(node);
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === "object") {
      const out: Record<string, JsonValue> = {};
      // defineProperty: a key such as `__proto__` stays a plain key instead of setting the prototype.
      for (const [key, child] of Object.entries(node)) Object.defineProperty(out, scrub(key), { value: walk(child), enumerable: true, writable: true, configurable: true });
      return out;
    }
    return node;
  };
  return walk(value) as T;
}
