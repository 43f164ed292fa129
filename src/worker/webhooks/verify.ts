/**
 * Checks that an event sent to a webhook comes from its sender, by the webhook's verifier (see `config.ts`). Every
 * comparison of a secret or a signature is constant-time; a refusal names the header that failed, never a value.
 */
import { encode, hmacSha256, prefixed, signaturesIn, verifyCallback } from "../../actors/webhook-verification";
import { secretsEqual } from "../auth/constant-time";
import type { WebhookSecrets, WebhookSettings } from "./config";

/** How far a signed timestamp (Slack's, Stripe's) may be from now: a captured event cannot be replayed later. */
const SIGNED_TIMESTAMP_TOLERANCE_SECONDS = 300;

/**
 * Why the event does not verify, or undefined when it does: the webhook's `headers` (HEADER_BASED's check, and one
 * made with any verifier that has them), then its verifier's own check.
 */
export async function verifyEvent(settings: WebhookSettings, secrets: WebhookSecrets, headers: Headers, body: Uint8Array, now = Date.now()): Promise<string | undefined> {
  const headerFailure = await verifyCallback({ headers: secrets.headers }, headers, body, now);
  if (headerFailure !== undefined) return headerFailure;
  if (settings.verifier === "HEADER_BASED") return undefined;
  const secret = secrets.secretValue;
  // Only a platform's verifier is saved without its secret (see `webhookOf`): nothing can verify until it is given.
  if (secret === undefined) return `The webhook has no secretValue yet (the ${settings.verifier} secret its events are checked with): save it with one; every event is refused until then`;
  switch (settings.verifier) {
    case "HMAC_BASED":
    case "SIGNATURE_BASED":
      return verifyBodySignature(secret, settings.headerKey!, headers, body);
    case "STRIPE":
      return verifyCallback(
        { headers: {}, signature: { secret, header: "Stripe-Signature", encoding: "hex", prefix: "", scheme: "stripe", toleranceSeconds: SIGNED_TIMESTAMP_TOLERANCE_SECONDS } },
        headers,
        body,
        now,
      );
    case "SLACK_BASED":
      return verifySlack(secret, headers, body, now);
    case "SENDGRID":
      return verifySendGrid(secret, headers, body);
  }
}

/** How a webhook checking HTTP Basic credentials asks for them (RFC 7617). */
const BASIC_CHALLENGE = 'Basic realm="webhook", charset="UTF-8"';

/**
 * For a webhook whose `headers` check HTTP Basic credentials (`Authorization: Basic …`), the `WWW-Authenticate`
 * challenge its refusals carry; undefined for any other webhook. Twilio sends the credentials of a webhook URL written
 * `https://user:password@host/…` only once a 401 with such a challenge asks for them (a 401 without one, it gives up),
 * so every one of its events comes first without them. `unasked` is true when the event verifies but for the
 * `Authorization` header it does not carry: that request guessed nothing, and is not counted as a failed verification
 * (each Twilio event would count one, and the lockout would soon refuse them all).
 */
export async function basicChallenge(settings: WebhookSettings, secrets: WebhookSecrets, headers: Headers, body: Uint8Array, now = Date.now()): Promise<{ challenge: string; unasked: boolean } | undefined> {
  const isAuthorization = (name: string) => name.toLowerCase() === "authorization";
  const expected = Object.entries(secrets.headers).find(([name]) => isAuthorization(name))?.[1];
  // Only the scheme is read, which is no secret.
  if (expected === undefined || !/^basic\s/i.test(expected)) return undefined;
  if (headers.has("Authorization")) return { challenge: BASIC_CHALLENGE, unasked: false };
  const others = Object.fromEntries(Object.entries(secrets.headers).filter(([name]) => !isAuthorization(name)));
  const otherwise = await verifyEvent(settings, { ...secrets, headers: others }, headers, body, now);
  return { challenge: BASIC_CHALLENGE, unasked: otherwise === undefined };
}

/** The HMAC-SHA256 of `data` keyed by `secret`, as bytes. */
const hmac = async (secret: string, data: Uint8Array) => new Uint8Array(await hmacSha256(secret, data));
const hex = (bytes: Uint8Array) => encode(bytes, "hex");
const base64 = (bytes: Uint8Array) => encode(bytes, "base64");

/** The HMAC-SHA256 of `data` keyed by the bytes `key`. */
async function hmacWithKeyBytes(key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const imported = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, data));
}

/** The bytes a secret written in base64 stands for (Microsoft Teams gives its security token so); undefined for other text. */
function base64Bytes(secret: string): Uint8Array | undefined {
  if (secret.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(secret)) return undefined;
  return Uint8Array.from(atob(secret), (char) => char.charCodeAt(0));
}

/**
 * The header `header` carries the HMAC-SHA256 of the body keyed by `secret`: hex (any case) or base64, after an
 * optional `sha256=` (GitHub), `v1=` (PagerDuty) or `HMAC ` (Microsoft Teams' outgoing webhooks, in `Authorization`).
 * Several signatures separated by commas are each compared, one matching being enough: PagerDuty signs with each of its
 * secrets while one is rotated (`v1=<hex>,v1=<hex>`). A secret written in base64 is also tried as the bytes it stands
 * for, the key Teams signs with. Every signature, encoding and key is compared, with no early exit.
 */
async function verifyBodySignature(secret: string, header: string, headers: Headers, body: Uint8Array): Promise<string | undefined> {
  const given = headers.get(header);
  if (given === null) return `Missing signature header ${header}`;
  const values = signaturesIn(given).map((signature) => signature.replace(/^(?:(?:sha256|v1)=|hmac\s+)/i, ""));
  const decodedKey = base64Bytes(secret);
  const macs = [await hmac(secret, body), ...(decodedKey === undefined ? [] : [await hmacWithKeyBytes(decodedKey, body)])];
  let matches = false;
  for (const mac of macs) {
    for (const value of values) {
      const asHex = await secretsEqual(value.toLowerCase(), hex(mac));
      const asBase64 = await secretsEqual(value, base64(mac));
      matches = matches || asHex || asBase64;
    }
  }
  return matches ? undefined : `Signature in header ${header} does not match the body`;
}

/**
 * Slack's request signing: `X-Slack-Signature` is `v0=` and the hex HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<body>`
 * keyed by the app's signing secret, the timestamp within five minutes.
 */
async function verifySlack(secret: string, headers: Headers, body: Uint8Array, now: number): Promise<string | undefined> {
  const signature = headers.get("X-Slack-Signature");
  const timestamp = headers.get("X-Slack-Request-Timestamp");
  if (signature === null) return "Missing signature header X-Slack-Signature";
  if (timestamp === null || !/^\d+$/.test(timestamp.trim())) return "Missing or malformed header X-Slack-Request-Timestamp";
  if (Math.abs(now / 1000 - Number(timestamp)) > SIGNED_TIMESTAMP_TOLERANCE_SECONDS) return `Signature in header X-Slack-Signature is older than ${SIGNED_TIMESTAMP_TOLERANCE_SECONDS} seconds`;
  const signed = prefixed(`v0:${timestamp.trim()}:`, body);
  const expected = `v0=${hex(await hmac(secret, signed))}`;
  return (await secretsEqual(signature.trim().toLowerCase(), expected)) ? undefined : "Signature in header X-Slack-Signature does not match the body";
}

const SENDGRID_SIGNATURE = "X-Twilio-Email-Event-Webhook-Signature";
const SENDGRID_TIMESTAMP = "X-Twilio-Email-Event-Webhook-Timestamp";

/**
 * SendGrid's signed event webhook: `X-Twilio-Email-Event-Webhook-Signature` is the base64 DER ECDSA (P-256, SHA-256)
 * signature of `X-Twilio-Email-Event-Webhook-Timestamp` followed by the body, checked with the verification key
 * SendGrid shows (base64 of its public key), kept as `secretValue`.
 */
async function verifySendGrid(publicKey: string, headers: Headers, body: Uint8Array): Promise<string | undefined> {
  const signature = headers.get(SENDGRID_SIGNATURE);
  const timestamp = headers.get(SENDGRID_TIMESTAMP);
  if (signature === null) return `Missing signature header ${SENDGRID_SIGNATURE}`;
  if (timestamp === null) return `Missing header ${SENDGRID_TIMESTAMP}`;
  const key = await sendGridKey(publicKey);
  const raw = rawEcdsaSignature(decodeBase64(signature.trim()));
  if (key === undefined) return "The webhook's verification key (secretValue) is not a base64 P-256 public key";
  if (raw === undefined) return `Signature in header ${SENDGRID_SIGNATURE} is not a base64 DER ECDSA signature`;
  const signed = prefixed(timestamp, body);
  const valid = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, raw, signed);
  return valid ? undefined : `Signature in header ${SENDGRID_SIGNATURE} does not match the body`;
}

/** The P-256 public key of base64 SPKI `text`, undefined when it is none. */
async function sendGridKey(text: string): Promise<CryptoKey | undefined> {
  const der = decodeBase64(text.trim());
  if (der === undefined) return undefined;
  try {
    return await crypto.subtle.importKey("spki", der, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  } catch {
    return undefined;
  }
}

function decodeBase64(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/**
 * A DER ECDSA signature (`SEQUENCE { INTEGER r, INTEGER s }`) as WebCrypto takes it: r and s as 32 bytes each; undefined
 * when it is not one.
 */
export function rawEcdsaSignature(der: Uint8Array | undefined): Uint8Array | undefined {
  if (der === undefined || der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2) return undefined;
  const raw = new Uint8Array(64);
  let at = 2;
  for (const offset of [0, 32]) {
    if (der[at] !== 0x02) return undefined;
    const length = der[at + 1]!;
    const integer = der.subarray(at + 2, at + 2 + length);
    if (length === 0 || integer.length !== length) return undefined;
    // Big-endian, with a leading zero when its high bit is set: at most 32 bytes once that is dropped.
    const value = integer[0] === 0 ? integer.subarray(1) : integer;
    if (value.length > 32) return undefined;
    raw.set(value, offset + 32 - value.length);
    at += 2 + length;
  }
  return at === der.length ? raw : undefined;
}
