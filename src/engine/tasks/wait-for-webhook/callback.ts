import type { JsonObject, JsonValue } from "../../model";
import type { ValidationIssue } from "../../validation-issue";

/** A callback body that was understood. */
export interface WebhookCallback {
  status: "COMPLETED" | "FAILED";
  output: JsonObject;
  /** For FAILED: the reason shown on the task (the output's `reason`, else its `error`). */
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
  if (isObject(output) && status === "FAILED") {
    for (const field of ["error", "reason"]) {
      if (output[field] !== undefined && typeof output[field] !== "string") issues.push({ path: `output.${field}`, message: "must be a string" });
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  const callback: WebhookCallback = { status: status as WebhookCallback["status"], output: isObject(output) ? output : {} };
  if (callback.status === "FAILED") {
    const reason = callback.output["reason"] ?? callback.output["error"];
    callback.reason = typeof reason === "string" && reason !== "" ? reason : "The callback reported a failure";
  }
  return { ok: true, callback };
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

/**
 * What a callback must carry, from the task's input resolved with real secret values. Header values
 * that are not strings, and a signature without secret or header, cannot be checked and are refused
 * at registration; here they are skipped.
 */
export function webhookExpectations(input: JsonObject): WebhookExpectations {
  const expectations: WebhookExpectations = { headers: {} };
  const headers = input["headers"];
  if (isObject(headers)) {
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") expectations.headers[name] = String(value);
    }
  }
  const signature = input["signature"];
  if (isObject(signature) && typeof signature["secret"] === "string" && typeof signature["header"] === "string") {
    expectations.signature = {
      secret: signature["secret"],
      header: signature["header"],
      encoding: signature["encoding"] === "base64" ? "base64" : "hex",
      prefix: typeof signature["prefix"] === "string" ? signature["prefix"] : "",
      scheme: signature["scheme"] === "stripe" ? "stripe" : "plain",
      toleranceSeconds: typeof signature["toleranceSeconds"] === "number" ? signature["toleranceSeconds"] : 300,
    };
  }
  return expectations;
}
