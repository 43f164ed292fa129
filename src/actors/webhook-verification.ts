import type { WebhookExpectations } from "../engine/tasks/wait-for-webhook/callback";
import { hexOf } from "../engine/task-id";
import { secretsEqual } from "../worker/auth/constant-time";

const encoder = new TextEncoder();

/** `bytes` as lower-case hex or as base64. */
export function encode(bytes: ArrayBuffer | Uint8Array, encoding: "hex" | "base64"): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (encoding === "hex") return hexOf(view);
  return btoa(String.fromCharCode(...view));
}

/** The HMAC-SHA256 of `data` keyed by `secret` (UTF-8). */
export async function hmacSha256(secret: string, data: Uint8Array): Promise<ArrayBuffer> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return crypto.subtle.sign("HMAC", key, data);
}

/** `text` (UTF-8) followed by `body`: what Stripe, Slack and SendGrid sign. */
export function prefixed(text: string, body: Uint8Array): Uint8Array {
  const head = encoder.encode(text);
  const all = new Uint8Array(head.length + body.length);
  all.set(head);
  all.set(body, head.length);
  return all;
}

/** Most comma-separated signatures of one header compared (PagerDuty sends two while a secret is rotated). */
const MAX_SIGNATURES_PER_HEADER = 8;

/**
 * The signatures a header holds, trimmed: several separated by commas, as PagerDuty sends while a secret is rotated
 * (`v1=<hex>,v1=<hex>`, one per secret), of which one matching is enough (neither hex nor base64 holds a comma). At most
 * {@link MAX_SIGNATURES_PER_HEADER}: each costs a constant-time comparison.
 */
export function signaturesIn(header: string): string[] {
  return header
    .split(",")
    .slice(0, MAX_SIGNATURES_PER_HEADER)
    .map((signature) => signature.trim());
}

/**
 * Checks a callback against what its task expects: every configured header with its exact value,
 * then the HMAC-SHA256 signature over the raw body. Answers undefined when it passes, otherwise a
 * message naming the header that failed, never the expected value. All comparisons are constant-time.
 */
export async function verifyCallback(expected: WebhookExpectations, headers: Headers, rawBody: Uint8Array, now = Date.now()): Promise<string | undefined> {
  for (const [name, value] of Object.entries(expected.headers)) {
    const given = headers.get(name);
    if (given === null) return `Missing header ${name}`;
    if (!(await secretsEqual(given, value))) return `Header ${name} does not have the expected value`;
  }
  const signature = expected.signature;
  if (signature) {
    const given = headers.get(signature.header);
    if (given === null) return `Missing signature header ${signature.header}`;
    if (signature.scheme === "stripe") return verifyStripeStyle(signature.secret, given, rawBody, signature.header, signature.toleranceSeconds, now);
    const mac = await hmacSha256(signature.secret, rawBody);
    const expectedValue = `${signature.prefix}${encode(mac, signature.encoding)}`;
    // Hex digests compare case-insensitively (senders differ); base64 does not.
    const normalise = (text: string) => (signature.encoding === "hex" ? text.trim().toLowerCase() : text.trim());
    // Each signature of the header is compared (a sender rotating its secret signs with each), read as webhooks read
    // them; a prefix holding a comma itself is compared with the whole header.
    const candidates = signature.prefix.includes(",") ? [given] : signaturesIn(given);
    let matched = false;
    // No early exit: timing does not tell which one matched.
    for (const candidate of candidates) matched = (await secretsEqual(normalise(candidate), normalise(expectedValue))) || matched;
    if (!matched) return `Signature in header ${signature.header} does not match the body`;
  }
  return undefined;
}

/**
 * Stripe's layout: `t=<unix seconds>,v1=<hex HMAC of "<t>.<body>">` (several v1 during a secret
 * rotation). The timestamp must be within the tolerance, so a captured callback cannot be replayed later.
 */
async function verifyStripeStyle(secret: string, header: string, rawBody: Uint8Array, name: string, toleranceSeconds: number, now: number): Promise<string | undefined> {
  const parts = header.split(",").map((part) => part.trim().split("="));
  const timestamp = parts.find(([field]) => field === "t")?.[1];
  const candidates = parts.filter(([field, value]) => field === "v1" && value !== undefined).map(([, value]) => value!.toLowerCase());
  if (timestamp === undefined || !/^\d+$/.test(timestamp) || candidates.length === 0) return `Signature header ${name} must be t=<timestamp>,v1=<signature>`;
  if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) return `Signature in header ${name} is older than ${toleranceSeconds} seconds`;
  const expectedValue = encode(await hmacSha256(secret, prefixed(`${timestamp}.`, rawBody)), "hex");
  let matched = false;
  // Compare with every candidate (no early exit), so timing does not tell which one matched.
  for (const candidate of candidates) matched = (await secretsEqual(candidate, expectedValue)) || matched;
  return matched ? undefined : `Signature in header ${name} does not match the body`;
}
