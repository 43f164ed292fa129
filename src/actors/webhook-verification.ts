import type { WebhookExpectations } from "../engine/tasks/wait-for-webhook/callback";
import { secretsEqual } from "../worker/auth/constant-time";

const encoder = new TextEncoder();

function encode(bytes: ArrayBuffer, encoding: "hex" | "base64"): string {
  const view = new Uint8Array(bytes);
  if (encoding === "hex") return [...view].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return btoa(String.fromCharCode(...view));
}

/**
 * Checks a callback against what its task expects: every configured header with its exact value,
 * then the HMAC-SHA256 signature over the raw body. Answers undefined when it passes, otherwise a
 * message naming the header that failed, never the expected value. All comparisons are constant-time.
 */
export async function verifyCallback(expected: WebhookExpectations, headers: Headers, rawBody: Uint8Array): Promise<string | undefined> {
  for (const [name, value] of Object.entries(expected.headers)) {
    const given = headers.get(name);
    if (given === null) return `Missing header ${name}`;
    if (!(await secretsEqual(given, value))) return `Header ${name} does not have the expected value`;
  }
  const signature = expected.signature;
  if (signature) {
    const given = headers.get(signature.header);
    if (given === null) return `Missing signature header ${signature.header}`;
    const key = await crypto.subtle.importKey("raw", encoder.encode(signature.secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = await crypto.subtle.sign("HMAC", key, rawBody);
    const expectedValue = `${signature.prefix}${encode(mac, signature.encoding)}`;
    // Hex digests compare case-insensitively (senders differ); base64 does not.
    const normalise = (text: string) => (signature.encoding === "hex" ? text.trim().toLowerCase() : text.trim());
    if (!(await secretsEqual(normalise(given), normalise(expectedValue)))) return `Signature in header ${signature.header} does not match the body`;
  }
  return undefined;
}
