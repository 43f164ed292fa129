import type { JsonValue } from "../engine/model";
import { decryptSecret, loadKeyring } from "../worker/secrets/crypto";
import { isValidSecretName, readEncryptedSecrets } from "../worker/secrets/store";

/** The secrets a task names as read for it: their values, and the stored (encrypted) form of each that decrypted. */
export interface SecretRead {
  lookup: (name: string) => string | undefined;
  /** Name to the encrypted value `lookup` gives the plaintext of: what to keep to recognise that value later. */
  sealed: ReadonlyMap<string, string>;
}

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
  return (await readSecrets(env, names)).lookup;
}

/** {@link secretLookup}, with the encrypted values read (see {@link SecretRead}). */
export async function readSecrets(env: Env, names: string[]): Promise<SecretRead> {
  const wanted = [...new Set(names)].filter(isValidSecretName);
  const values = new Map<string, string>();
  const sealed = new Map<string, string>();
  // A Map, not an object: a name like `__proto__` or `constructor` must not find anything inherited.
  const read: SecretRead = { lookup: (name) => values.get(name), sealed };
  if (wanted.length === 0) return read;
  const stored = await readEncryptedSecrets(env.DB, wanted);
  if (stored.size === 0) return read;
  const keyring = await loadKeyring(env.SECRETS_ENCRYPTION_KEY);
  if (!keyring.ok) {
    console.error(JSON.stringify({ msg: "secrets cannot be decrypted; treated as missing", reason: keyring.problem, names: [...stored.keys()] }));
    return read;
  }
  for (const [name, encrypted] of stored) {
    const plaintext = await decryptSecret(keyring.keyring, name, encrypted);
    if (plaintext === undefined) console.error(JSON.stringify({ msg: "secret could not be decrypted (wrong key or tampered value); treated as missing", name }));
    else {
      values.set(name, plaintext);
      sealed.set(name, encrypted);
    }
  }
  return read;
}

/**
 * The plaintexts of values kept in their encrypted form (`sealed`, as {@link SecretRead} gives them): those a worker or
 * a service was handed, which it may quote back after the secret was replaced or deleted. One that no longer decrypts
 * (the key was rotated away) is left out.
 */
export async function unsealSecretValues(env: Env, sealed: ReadonlyArray<{ name: string; sealed: string }>): Promise<string[]> {
  if (sealed.length === 0) return [];
  const keyring = await loadKeyring(env.SECRETS_ENCRYPTION_KEY);
  if (!keyring.ok) return [];
  const values = await Promise.all(sealed.map((entry) => decryptSecret(keyring.keyring, entry.name, entry.sealed)));
  return values.filter((value): value is string => value !== undefined);
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

/** Shortest string inside a JSON-valued secret masked on its own (a key file's `private_key`, not its `type`). */
const MIN_JSON_LEAF_LENGTH = 16;

/** Fewest digits of a secret masked where a JSON answer gives it as a number (a four-digit PIN, not a count). */
const MIN_NUMBER_SECRET_LENGTH = 4;

/**
 * The shapes a secret value takes on its way out and back: as sent in a URL (percent-encoded as a
 * query value, a path, a form field, or as a URL parser serializes it), as read back by a server (`+`
 * as a space, escapes decoded), inside a JSON text (quotes and backslashes escaped), trimmed as a header, with its
 * whitespace run together (as a failure reason quotes a service's answer), as a host a URL holds (lower-cased, as a
 * service echoes its `Host`), inside base64 (an echo in a binary answer),
 * and, for a secret that is JSON text itself, the value it reads as (a quoted string) or the long strings it holds (a
 * service account's key file echoed as an object). A derived shape much shorter than the secret (a decoded or
 * dot-normalized one) is left out: it would mask ordinary text.
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
    secret.replace(/\s+/g, " ").trim(),
    hostForm(secret),
    ...base64Forms(secret),
  ];
  const sized = forms.filter((form): form is string => form !== undefined && form !== "" && form.length * 2 >= secret.length);
  return [...sized, ...jsonForms(secret)];
}

/**
 * A secret that is a host name (a tenant's) as a URL holds it, lower-cased and punycoded (`Acme.Example` as
 * `acme.example`), which is how a service echoes the `Host` it was called at; undefined for a secret that is not one
 * (a URL would take only its start as the host), or a number.
 */
function hostForm(secret: string): string | undefined {
  // Only a name with a dot, as a host a service is called at has: a lower-cased user name (`Admin` as `admin`) would
  // mask ordinary words.
  if (!/^[^\s/?#@:\\]+$/.test(secret) || !secret.includes(".")) return undefined;
  const host = tryForm((text) => new URL(`http://${text}/`).hostname, secret);
  // A number read as an IPv4 address (a PIN `4821` as `0.0.18.213`) is not how anything echoes the secret.
  return host === undefined || /^[\d.]+$/.test(host) ? undefined : host;
}

/**
 * The base64 text a secret's UTF-8 bytes become inside a longer base64 text, at each of the three alignments: only the
 * characters its bytes alone decide (the ones at its edges also depend on the bytes around it).
 */
function base64Forms(secret: string): string[] {
  const bytes = new TextEncoder().encode(secret);
  return [0, 1, 2].map((offset) => {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    const encoded = btoa(binaryString(padded));
    return encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
  });
}

/** `bytes` as a string of one character per byte, for `btoa`; in chunks, as a secret may be 64 KiB (too many arguments to spread). */
function binaryString(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return binary;
}

/** For a secret that is JSON text: the string it reads as, or the long strings it holds. */
function jsonForms(secret: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(secret);
  } catch {
    return [];
  }
  if (typeof parsed === "string") return parsed.length * 2 >= secret.length && parsed !== "" ? [parsed] : [];
  const leaves: string[] = [];
  const walk = (node: unknown): void => {
    if (typeof node === "string" && node.length >= MIN_JSON_LEAF_LENGTH) leaves.push(node);
    else if (node !== null && typeof node === "object") Object.values(node).forEach(walk);
  };
  walk(parsed);
  return leaves;
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
  // A secret that is a number (a PIN) comes back as one from a JSON answer; one of fewer digits would mask counts.
  const numbers = new Set(needles.filter((needle) => needle.length >= MIN_NUMBER_SECRET_LENGTH));
  const walk = (node: JsonValue): JsonValue => {
    if (typeof node === "string") return scrub(node);
    if (typeof node === "number" && numbers.has(String(node))) return MASK;
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
