/**
 * Checks that an event sent to a webhook comes from its sender, by the webhook's verifier (see `config.ts`). Every
 * comparison of a secret or a signature is constant-time; a refusal names the header that failed, never a value.
 */
import { verifyCallback } from "../../actors/webhook-verification";
import { secretsEqual } from "../auth/constant-time";
import type { WebhookSecrets, WebhookSettings } from "./config";

const encoder = new TextEncoder();

/** How far a signed timestamp (Slack's, Stripe's) may be from now: a captured event cannot be replayed later. */
const SIGNED_TIMESTAMP_TOLERANCE_SECONDS = 300;

/** Why the event does not verify, or undefined when it does. */
export async function verifyEvent(settings: WebhookSettings, secrets: WebhookSecrets, headers: Headers, body: Uint8Array, now = Date.now()): Promise<string | undefined> {
  switch (settings.verifier) {
    case "HEADER_BASED":
      return verifyCallback({ headers: secrets.headers }, headers, body, now);
    case "HMAC_BASED":
    case "SIGNATURE_BASED":
      return verifyBodySignature(secrets.secretValue!, settings.headerKey!, headers, body);
    case "STRIPE":
      return verifyCallback(
        { headers: {}, signature: { secret: secrets.secretValue!, header: "Stripe-Signature", encoding: "hex", prefix: "", scheme: "stripe", toleranceSeconds: SIGNED_TIMESTAMP_TOLERANCE_SECONDS } },
        headers,
        body,
        now,
      );
    case "SLACK_BASED":
      return verifySlack(secrets.secretValue!, headers, body, now);
  }
}

async function hmac(secret: string, data: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, data));
}

const hex = (bytes: Uint8Array) => [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/**
 * The header `header` carries the HMAC-SHA256 of the body keyed by `secret`: hex (any case) or base64, after an
 * optional `sha256=` (GitHub) or `v1=`. Both encodings are compared, with no early exit.
 */
async function verifyBodySignature(secret: string, header: string, headers: Headers, body: Uint8Array): Promise<string | undefined> {
  const given = headers.get(header);
  if (given === null) return `Missing signature header ${header}`;
  const value = given.trim().replace(/^(sha256|v1)=/i, "");
  const mac = await hmac(secret, body);
  const asHex = await secretsEqual(value.toLowerCase(), hex(mac));
  const asBase64 = await secretsEqual(value, base64(mac));
  return asHex || asBase64 ? undefined : `Signature in header ${header} does not match the body`;
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
  const signed = new Uint8Array([...encoder.encode(`v0:${timestamp.trim()}:`), ...body]);
  const expected = `v0=${hex(await hmac(secret, signed))}`;
  return (await secretsEqual(signature.trim().toLowerCase(), expected)) ? undefined : "Signature in header X-Slack-Signature does not match the body";
}
