import type { JsonObject, JsonValue } from "../../model";
import { isHeaderName, TOKEN_DESCRIPTION } from "../../http-syntax";
import { exceedsJsonDepth, holdsNonFiniteNumber, MAX_JSON_DEPTH, NON_FINITE_MESSAGE } from "../../definition/checks";
import { setOwn } from "../../own-property";
import type { ValidationIssue } from "../../validation-issue";

/** A callback body that was understood. */
export interface WebhookCallback {
  status: "COMPLETED" | "FAILED";
  output: JsonObject;
  /** For FAILED: the reason shown on the task (the output's `reason`, else its `error`: the first not blank). */
  reason?: string;
}

/** Either the callback or every problem with its body. */
export type WebhookCallbackParse = { ok: true; callback: WebhookCallback } | { ok: false; issues: ValidationIssue[] };

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Parses a callback body `{status: COMPLETED|FAILED, output: {...}}` (spec section 4). On FAILED
 * the output carries `error` and `reason` strings; when present they must be strings.
 */
export function parseWebhookCallback(text: string): WebhookCallbackParse {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, issues: [{ path: "(body)", message: "must be JSON: {\"status\": \"COMPLETED\"|\"FAILED\", \"output\": {...}}" }] };
  }
  if (!isObject(body)) return { ok: false, issues: [{ path: "(body)", message: "must be a JSON object with status and output" }] };
  const issues: ValidationIssue[] = [];
  const status = body["status"];
  if (status === undefined) issues.push({ path: "status", message: "is required: COMPLETED or FAILED" });
  else if (status !== "COMPLETED" && status !== "FAILED") issues.push({ path: "status", message: `must be COMPLETED or FAILED, not ${JSON.stringify(status)}` });
  const output: JsonValue | undefined = body["output"];
  if (output !== undefined && !isObject(output)) issues.push({ path: "output", message: "must be a JSON object" });
  // A deep value would overflow the stack wherever it is stored or walked.
  else if (exceedsJsonDepth(output)) issues.push({ path: "output", message: `must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels` });
  // Expressions would see Infinity where the stored (and shown) value is null.
  else if (holdsNonFiniteNumber(output)) issues.push({ path: "output", message: NON_FINITE_MESSAGE });
  if (isObject(output) && status === "FAILED") {
    for (const field of ["error", "reason"]) {
      if (output[field] !== undefined && typeof output[field] !== "string") issues.push({ path: `output.${field}`, message: "must be a string" });
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  const callback: WebhookCallback = { status: status as WebhookCallback["status"], output: isObject(output) ? output : {} };
  if (callback.status === "FAILED") callback.reason = failureReason(callback.output);
  return { ok: true, callback };
}

/**
 * A FAILED callback's reason: its `reason`, else its `error` (the spec's failure body carries both), else a default. A
 * blank text (empty or whitespace only) says nothing, so a blank `reason` falls back to `error` as an absent one does
 * (as Conductor's StringUtils.isBlank passes over a blank TERMINATE reason); the one taken is kept as sent.
 */
function failureReason(output: JsonObject): string {
  const given = [output["reason"], output["error"]].find((text): text is string => typeof text === "string" && text.trim() !== "");
  return given ?? "The callback reported a failure";
}

/** How a callback proves it comes from the expected sender. */
export interface WebhookExpectations {
  /** Header name (as configured) → the exact value it must have. */
  headers: Record<string, string>;
  signature?: {
    secret: string;
    header: string;
    encoding: "hex" | "base64";
    prefix: string;
    /** `plain`: the header is prefix + HMAC(body). `stripe`: the header is `t=<unix>,v1=<hex>[,v1=…]`, HMAC over `<t>.<body>`. */
    scheme: "plain" | "stripe";
    /** stripe: how far the signed timestamp may be from now, in seconds. */
    toleranceSeconds: number;
  };
}

/** Either what a callback must carry, or why no callback can be verified (then every one is refused). */
export type WebhookExpectationsResult = { ok: true; expectations: WebhookExpectations } | { ok: false; reason: string };

/** A header value as a callback must carry it; undefined for nothing (null, absent, empty) or a non-scalar. */
function expectedText(value: JsonValue | undefined): string | undefined {
  const text = typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : undefined;
  return text === undefined || text === "" ? undefined : text;
}

/**
 * What a callback must carry, from the task's input resolved with real secret values. A configured check
 * that resolved to nothing (a missing input, an empty secret) or to a header name HTTP cannot carry fails
 * closed: skipping it would let anyone complete the task.
 */
export function webhookExpectations(input: JsonObject): WebhookExpectationsResult {
  const expectations: WebhookExpectations = { headers: {} };
  const headers = input["headers"];
  if (headers !== undefined && headers !== null) {
    if (!isObject(headers)) return { ok: false, reason: "the task's headers are not an object of header values" };
    for (const [name, value] of Object.entries(headers)) {
      if (!isHeaderName(name)) return { ok: false, reason: `the task's header name ${JSON.stringify(name)} is not a valid header name` };
      const text = expectedText(value);
      // The value may be a secret: name the header, never what it resolved to.
      if (text === undefined) return { ok: false, reason: `the expected value of header ${name} resolved to nothing` };
      setOwn(expectations.headers, name, text);
    }
  }
  const signature = input["signature"];
  if (signature === undefined || signature === null) return { ok: true, expectations };
  if (!isObject(signature)) return { ok: false, reason: "the task's signature is not an object" };
  const secret = expectedText(signature["secret"]);
  const header = signature["header"];
  if (secret === undefined) return { ok: false, reason: "the signature secret resolved to nothing" };
  if (!isHeaderName(header)) return { ok: false, reason: `the signature header ${JSON.stringify(header)} is not a valid header name` };
  expectations.signature = {
    secret,
    header: header as string,
    encoding: signature["encoding"] === "base64" ? "base64" : "hex",
    prefix: typeof signature["prefix"] === "string" ? signature["prefix"] : "",
    scheme: signature["scheme"] === "stripe" ? "stripe" : "plain",
    toleranceSeconds: typeof signature["toleranceSeconds"] === "number" ? signature["toleranceSeconds"] : 300,
  };
  return { ok: true, expectations };
}

/**
 * Why a started webhook task can never be called back, or undefined. Names are checked at registration;
 * one from an expression is only known once resolved. Values may still be masked secrets here, so only
 * names are checked: values are checked against each callback (see {@link webhookExpectations}).
 */
export function webhookConfigProblem(input: JsonObject): string | undefined {
  const headers = input["headers"];
  if (isObject(headers)) {
    const bad = Object.keys(headers).find((name) => !isHeaderName(name));
    if (bad !== undefined) return `headers name ${JSON.stringify(bad.slice(0, 60))} must be ${TOKEN_DESCRIPTION}`;
  }
  const signature = input["signature"];
  if (isObject(signature) && !isHeaderName(signature["header"])) {
    const header = signature["header"];
    const shown = typeof header === "string" ? JSON.stringify(header.slice(0, 60)) : JSON.stringify(header ?? null);
    return `signature.header ${shown} resolved to a name that must be ${TOKEN_DESCRIPTION}`;
  }
  return undefined;
}
