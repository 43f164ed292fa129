/**
 * Orkes' WebhookConfig as a request gives it (`POST /api/metadata/webhook`, `PUT /api/metadata/webhook/{id}`), checked
 * at the edge, and how it is shown back: its secrets (header values, `secretValue`) never, as `***`.
 *
 * Verifiers, each proving an event comes from its sender:
 * - `HEADER_BASED`: every header of `headers` with its exact value;
 * - `HMAC_BASED` and `SIGNATURE_BASED`: the header `headerKey` carries the HMAC-SHA256 of the body keyed by
 *   `secretValue`, in hex or base64, optionally after `sha256=` (GitHub's `X-Hub-Signature-256`) or `v1=` (PagerDuty's,
 *   several comma-separated while its secret is rotated);
 * - `SLACK_BASED`: Slack's signing secret (`X-Slack-Signature` over `v0:<X-Slack-Request-Timestamp>:<body>`, the
 *   timestamp within five minutes), and Slack's URL verification challenge answered;
 * - `STRIPE`: Stripe's `Stripe-Signature` (`t=…,v1=…` over `<t>.<body>`, within five minutes);
 * - `SENDGRID`: SendGrid's signed event webhook (ECDSA P-256 over the timestamp and the body), `secretValue` holding
 *   the verification key SendGrid shows.
 * `TWITTER` is refused (see {@link UNSUPPORTED_VERIFIERS}).
 */
import * as v from "valibot";
import { isHeaderName, isHeaderValueText, TOKEN_DESCRIPTION } from "../../engine/http-syntax";
import { parseWebhookKey } from "../../engine/tasks/wait-for-webhook/matches";
import type { StartIdempotencyStrategy } from "../../engine/tasks/start-workflow/request";
import { MAX_JAVA_INT } from "../../engine/definition/checks";
import { jacksonNumber, MAX_IDEMPOTENCY_KEY_LENGTH, requestObject, wellFormedText, WorkflowName } from "../schemas";
import { TagListSchema } from "../tags";

/** The verifiers this service checks. */
export const WEBHOOK_VERIFIERS = ["HEADER_BASED", "HMAC_BASED", "SIGNATURE_BASED", "SLACK_BASED", "STRIPE", "SENDGRID"] as const;
/** One of {@link WEBHOOK_VERIFIERS}. */
export type WebhookVerifier = (typeof WEBHOOK_VERIFIERS)[number];
/**
 * Orkes' verifiers this service does not offer: Twitter's answers a challenge (a GET with `crc_token`) with the HMAC of
 * whatever token it is sent, keyed by the secret that also signs events, so anyone could have any body signed.
 */
const UNSUPPORTED_VERIFIERS = ["TWITTER"];

/** How a secret is shown: never as it is. */
export const MASKED = "***";

/** Most workflows one webhook names (receivers, or to start). */
const MAX_WORKFLOWS = 50;
/** Most headers a HEADER_BASED webhook checks. */
const MAX_HEADERS = 20;
/** Longest header value or secret. */
const MAX_SECRET_LENGTH = 4096;
/** Keys of `workflowsToStart` that are settings, not workflows (Orkes'). */
export const START_SETTINGS = ["idempotencyKey", "idempotencyStrategy"] as const;
/** Idempotency strategies of the workflows an event starts. */
const IDEMPOTENCY_STRATEGIES = ["RETURN_EXISTING", "FAIL", "FAIL_ON_RUNNING"] as const;

const nullToUndefined = <T>(value: T | null | undefined): T | undefined => value ?? undefined;
const optionalText = (max: number) => v.pipe(v.nullish(v.pipe(v.string("must be a string"), v.maxLength(max, `must be at most ${max} characters`))), v.transform(nullToUndefined));
const secretText = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.maxLength(MAX_SECRET_LENGTH, `must be at most ${MAX_SECRET_LENGTH} characters`),
  // Encrypted as UTF-8, where it would be U+FFFD: a header or signing key no sender's bytes would match.
  wellFormedText,
  // Conductor's docs write `${workflow.secrets.NAME}` here; nothing resolves it for an event (no workflow runs yet), so
  // it would be checked as that very text and refuse every real event: said now instead.
  v.check((value: string) => !/^\$\{[^}]*\}$/.test(value.trim()), "must be the secret itself: a ${...} reference (such as ${workflow.secrets.NAME}) is not resolved for a webhook's events"),
);
/**
 * A checked header's value: as a request carries it, HTTP dropping the spaces and tabs around a header's value and
 * holding no line break, so that one saved otherwise (a pasted secret with a trailing space) refuses every event.
 */
const headerValue = v.pipe(
  secretText,
  v.check((value: string) => value === value.replace(/^[ \t]+|[ \t]+$/g, ""), "must not begin or end with spaces or tabs: HTTP drops them from a header's value, so no request could carry it"),
  v.check((value: string) => isHeaderValueText(value), "must not hold a line break or NUL: no header's value can"),
);
const headerName = v.pipe(v.string("must be a string"), v.check((name: string) => isHeaderName(name), `must be a header name, ${TOKEN_DESCRIPTION}`));

/** A workflow's version in a webhook: a whole number; 0 or null for any version (receivers) or the latest (to start). */
const version = v.pipe(
  v.nullable(jacksonNumber(v.pipe(v.number("must be a version number"), v.integer("must be a whole number"), v.minValue(0, "must not be negative"), v.maxValue(MAX_JAVA_INT, `must be at most ${MAX_JAVA_INT}`)))),
  v.transform((value) => value ?? 0),
);

/** Workflow name → version, at most {@link MAX_WORKFLOWS}. */
const workflowVersions = v.pipe(
  v.nullish(v.record(WorkflowName, version), {}),
  v.transform((map) => map ?? {}),
  v.check((map) => Object.keys(map).length <= MAX_WORKFLOWS, `must name at most ${MAX_WORKFLOWS} workflows`),
);

/**
 * `workflowsToStart`: workflow name → version, with Orkes' reserved settings: `idempotencyKey` (a JSONPath into the
 * event's payload, such as `$.id`, or a text with `${workflow.input.<path>}` references: see `parseWebhookKey`; its
 * value keys the starts, so a sender's retried delivery starts nothing twice) and `idempotencyStrategy`.
 */
const workflowsToStart = v.pipe(
  v.nullish(v.record(v.string(), v.unknown()), {}),
  v.transform((map) => map ?? {}),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const workflows: Record<string, number> = {};
    let idempotencyKey: string | undefined;
    let idempotencyStrategy: (typeof IDEMPOTENCY_STRATEGIES)[number] | undefined;
    let bad = false;
    const problem = (key: string, message: string) => {
      bad = true;
      addIssue({ message, path: [{ type: "object", origin: "value", input: dataset.value, key, value: dataset.value[key] }] });
    };
    for (const [key, value] of Object.entries(dataset.value)) {
      if (key === "idempotencyKey") {
        if (value === null || value === undefined) continue;
        // As long as the key it makes may be (the API's limit): a key written longer, its text around the references
        // alone perhaps past the limit, would have every start refused, and nothing else bounds a text with references.
        if (typeof value === "string" && value.length > MAX_IDEMPOTENCY_KEY_LENGTH) problem(key, `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, as the key it makes`);
        else if (typeof value !== "string" || parseWebhookKey(value) instanceof Error) problem(key, "must be a JSONPath into the event's payload (such as $.id or $['data']['id']), or a text with ${workflow.input.<path>} references (such as ${workflow.input.id} or ${workflow.input.repo}-${workflow.input.number}), whose value keys each start");
        else idempotencyKey = value;
      } else if (key === "idempotencyStrategy") {
        if (value === null || value === undefined) continue;
        if (typeof value !== "string" || !(IDEMPOTENCY_STRATEGIES as readonly string[]).includes(value)) problem(key, `must be one of ${IDEMPOTENCY_STRATEGIES.join(", ")}`);
        else idempotencyStrategy = value as (typeof IDEMPOTENCY_STRATEGIES)[number];
      } else {
        const parsedName = v.safeParse(WorkflowName, key);
        const parsedVersion = v.safeParse(version, value);
        if (!parsedName.success) problem(key, `names no workflow: a workflow name ${parsedName.issues[0].message}`);
        else if (!parsedVersion.success) problem(key, `${parsedVersion.issues[0].message} (0 or null: the latest version)`);
        else workflows[key] = parsedVersion.output;
      }
    }
    if (Object.keys(workflows).length > MAX_WORKFLOWS) {
      bad = true;
      addIssue({ message: `must name at most ${MAX_WORKFLOWS} workflows` });
    }
    return bad ? NEVER : { workflows, idempotencyKey, idempotencyStrategy };
  }),
);

/** The body of a save (Orkes' WebhookConfig). Fields a read shows (`id`, `urlVerified`, `createdBy`…) are ignored. */
export const WebhookConfigRequest = requestObject({
  name: v.pipe(v.string("must be a string"), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(255, "must be at most 255 characters"), wellFormedText),
  verifier: v.pipe(
    v.string("must be a string"),
    v.check((value) => !UNSUPPORTED_VERIFIERS.includes(value), `is not supported by this service (TWITTER's challenge would sign any text with the webhook's secret for anyone who asks); use one of ${WEBHOOK_VERIFIERS.join(", ")}`),
    v.picklist(WEBHOOK_VERIFIERS, `must be one of ${WEBHOOK_VERIFIERS.join(", ")}`),
  ),
  headers: v.pipe(
    v.nullish(v.record(headerName, headerValue), {}),
    v.transform((map) => map ?? {}),
    v.check((map) => Object.keys(map).length <= MAX_HEADERS, `must have at most ${MAX_HEADERS} headers`),
  ),
  headerKey: v.pipe(v.nullish(headerName), v.transform(nullToUndefined)),
  secretKey: optionalText(255),
  // "" is none, as null: Orkes' docs save a Microsoft Teams webhook with `"secretValue": ""` until Teams gives the token.
  secretValue: v.pipe(v.nullish(v.union([v.literal(""), secretText])), v.transform((value) => (value === "" ? undefined : nullToUndefined(value)))),
  receiverWorkflowNamesToVersions: workflowVersions,
  workflowsToStart,
  sourcePlatform: optionalText(64),
  expression: optionalText(4096),
  evaluatorType: optionalText(64),
  tags: v.pipe(
    v.nullish(TagListSchema, []),
    v.transform((tags) => tags ?? []),
  ),
});
/** A parsed {@link WebhookConfigRequest}. */
export type WebhookConfigBody = v.InferOutput<typeof WebhookConfigRequest>;

/** A webhook's settings as stored: the config without its secrets. */
export interface WebhookSettings {
  name: string;
  verifier: WebhookVerifier;
  /** HEADER_BASED: the names of the headers checked (their values are secrets). */
  headerNames: string[];
  headerKey?: string;
  secretKey?: string;
  /** True when a `secretValue` is kept (shown as {@link MASKED}). */
  hasSecretValue: boolean;
  receiverWorkflowNamesToVersions: Record<string, number>;
  workflowsToStart: Record<string, number>;
  idempotencyKey?: string;
  idempotencyStrategy?: StartIdempotencyStrategy;
  sourcePlatform?: string;
  expression?: string;
  evaluatorType?: string;
  tags: Array<{ key: string; value: string }>;
}

/** A webhook's secrets: the values of its checked headers, and the key of its signatures. */
export interface WebhookSecrets {
  headers: Record<string, string>;
  secretValue?: string;
}

/**
 * The settings and secrets a save makes of `body`, or its problems (by path); `kept`: the secrets saved before (an
 * update), whose values a body may give back as {@link MASKED}, as a read showed them, to keep them.
 */
export function webhookOf(body: WebhookConfigBody, kept?: WebhookSecrets): { settings: WebhookSettings; secrets: WebhookSecrets } | { problems: Array<{ path: string; message: string }> } {
  const problems: Array<{ path: string; message: string }> = [];
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(body.headers)) {
    if (value !== MASKED) headers[name] = value;
    else if (kept?.headers[name] !== undefined) headers[name] = kept.headers[name]!;
    else problems.push({ path: `headers.${name}`, message: `has no saved value to keep: give the value (${MASKED} keeps one a read showed)` });
  }
  // *** gives back the saved secret; with none saved (Orkes' docs' update sends *** for a HEADER_BASED webhook) it is
  // no secret, which only SIGNATURE_BASED refuses below.
  const secretValue = body.secretValue === MASKED ? kept?.secretValue : body.secretValue;
  const needs = (field: string, present: boolean, why: string) => {
    if (!present) problems.push({ path: field, message: `is required with verifier ${body.verifier}: ${why}` });
  };
  if (body.verifier === "HEADER_BASED") needs("headers", Object.keys(body.headers).length > 0, "the headers (and their values) every event must carry");
  if (body.verifier === "HMAC_BASED" || body.verifier === "SIGNATURE_BASED") needs("headerKey", body.headerKey !== undefined, "the header carrying the signature");
  if (body.verifier === "SIGNATURE_BASED") needs("secretValue", secretValue !== undefined, `the key the signature is made with (${MASKED} keeps one a read showed)`);
  // HMAC_BASED and a platform's verifiers (SLACK_BASED, STRIPE, SENDGRID) may be saved without their secret: Microsoft
  // Teams (HMAC_BASED), Stripe and SendGrid give it only once they know the webhook's URL, which this save gives.
  // Every event is refused until one is saved.
  const start = body.workflowsToStart;
  if (Object.keys(body.receiverWorkflowNamesToVersions).length === 0 && Object.keys(start.workflows).length === 0) {
    problems.push({ path: "receiverWorkflowNamesToVersions", message: "a webhook must name the workflows whose WAIT_FOR_WEBHOOK tasks its events complete, or workflows to start (workflowsToStart), or both" });
  }
  if (problems.length > 0) return { problems };
  const settings: WebhookSettings = {
    name: body.name,
    verifier: body.verifier,
    headerNames: Object.keys(headers),
    hasSecretValue: secretValue !== undefined,
    receiverWorkflowNamesToVersions: body.receiverWorkflowNamesToVersions,
    workflowsToStart: start.workflows,
    tags: body.tags,
  };
  for (const field of ["headerKey", "secretKey", "sourcePlatform", "expression", "evaluatorType"] as const) {
    if (body[field] !== undefined) settings[field] = body[field];
  }
  if (start.idempotencyKey !== undefined) settings.idempotencyKey = start.idempotencyKey;
  if (start.idempotencyStrategy !== undefined) settings.idempotencyStrategy = start.idempotencyStrategy;
  const secrets: WebhookSecrets = { headers };
  if (secretValue !== undefined) secrets.secretValue = secretValue;
  return { settings, secrets };
}
