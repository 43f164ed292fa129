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

/** `encode(secret)`, or undefined when the codec refuses it (a lone surrogate, a malformed `%` escape). */
function tryForm(encode: (secret: string) => string, secret: string): string | undefined {
  try {
    return encode(secret);
  } catch {
    return undefined;
  }
}

/**
 * The shapes a secret value takes on its way out and back: as sent in a URL (percent-encoded as a
 * query value, a path, a form field, or as a URL parser serializes it), as read back by a server (`+`
 * as a space, escapes decoded), inside a JSON text (quotes and backslashes escaped), and trimmed as a header. A derived
 * shape much shorter than the secret (a decoded or dot-normalized one) is left out: it would mask
 * ordinary text.
 */
function secretForms(secret: string): string[] {
  const forms = [
    secret,
    tryForm(encodeURIComponent, secret),
    tryForm(encodeURI, secret),
    tryForm((text) => new URLSearchParams([["", text]]).toString().slice(1), secret),
    tryForm((text) => new URL(`http://h/?${text}`).search.slice(1), secret),
    tryForm((text) => new URL(`http://h/${text}`).pathname.slice(1), secret),
    secret.replaceAll("+", " "),
    tryForm(decodeURIComponent, secret),
    JSON.stringify(secret).slice(1, -1),
    // As a header value carries it (see buildHttpRequest): a secret stored with a trailing newline is sent without it.
    secret.trim(),
  ];
  return forms.filter((form): form is string => form !== undefined && form !== "" && form.length * 2 >= secret.length);
}

/**
 * `value` with every occurrence of any of `secrets` (in strings and object keys) replaced by `***`,
 * in any of the encoded shapes of {@link secretForms}. For whatever a side effect brings back (a
 * service that echoes its Authorization header or the query it got): the engine masks the input it
 * stores, but only the caller of a dispatch knows the real values and can scrub what comes back
 * before it is stored and shown. Longest forms first, so a secret containing another is masked whole.
 */
export function redactSecretValues<T extends JsonValue>(value: T, secrets: Iterable<string>): T {
  const needles = [...new Set([...secrets].flatMap(secretForms))].sort((a, b) => b.length - a.length);
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
