import type { JsonObject, JsonValue } from "./model";
import { setOwn } from "./own-property";

/** `${path}` in an event handler's action, Conductor's JsonPath over the event's payload (`${}` and `${  }` too: see {@link isBlankPath}). */
const PLACEHOLDER = /\$\{([^}]*)\}/g;

/** Within text: an escaped `$${` (a literal `${`), else a {@link PLACEHOLDER}. */
const TEXT_PLACEHOLDER = /\$\$\{|\$\{([^}]*)\}/g;

/**
 * True for the path of `${}` or `${   }`, which Conductor's ParametersUtils.replaceVariables resolves to "" ("if the
 * paramPath is blank ... set the value to empty string"), as workflow expressions here do: not the whole payload, which
 * a path of no steps would name (`${$}` does).
 */
function isBlankPath(path: string): boolean {
  return path.trim() === "";
}

/** The steps of a path such as `$.order.items[0]['unit price']` or `items[-1]` (the leading `$.` is optional). */
function pathSteps(path: string): Array<string | number> {
  const steps: Array<string | number> = [];
  const source = path.trim().replace(/^\$\.?/, "");
  const step = /([^.[\]]+)|\[(-?\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/g;
  for (const match of source.matchAll(step)) {
    if (match[1] !== undefined) steps.push(match[1]);
    else if (match[2] !== undefined) steps.push(Number(match[2]));
    else steps.push(match[3] ?? match[4] ?? "");
  }
  return steps;
}

/** The value at `path` in `payload`, or null when there is none (as Conductor's lenient JsonPath answers). */
export function payloadValue(payload: JsonValue, path: string): JsonValue {
  let value: JsonValue = payload;
  for (const step of pathSteps(path)) {
    let next: JsonValue | undefined;
    // A negative index counts from the end, as JsonPath's `[-1]`.
    if (typeof step === "number") next = Array.isArray(value) ? value[step < 0 ? value.length + step : step] : undefined;
    else if (value !== null && typeof value === "object" && !Array.isArray(value)) next = Object.hasOwn(value, step) ? value[step] : undefined;
    if (next === undefined) return null;
    value = next;
  }
  return value;
}

/**
 * The first `${path}` in `template` (at any depth) naming what a path here cannot follow: JsonPath's wildcards (`[*]`,
 * `.*`), deep scan (`..`), filters and functions (`[?(…)]`, `length()`), which pick several values or compute one;
 * undefined when every path names one value. Such a path resolved to null here, silently.
 */
export function unfollowablePath(template: JsonValue): string | undefined {
  if (typeof template === "string") {
    for (const [, path] of template.matchAll(PLACEHOLDER)) if (/\*|\.\.|\?\(|\(\)/.test(path!.trim().replace(/^\$/, ""))) return path;
    return undefined;
  }
  if (Array.isArray(template)) return template.map(unfollowablePath).find((path) => path !== undefined);
  if (template === null || typeof template !== "object") return undefined;
  return Object.values(template).map(unfollowablePath).find((path) => path !== undefined);
}

/**
 * `template` with each `${path}` replaced from `payload` (Conductor's `ParametersUtils.replace` for event actions): a
 * string that is one placeholder becomes that value, whatever its type; placeholders within text are written as
 * text (JSON for objects and arrays, `null` for null, as Conductor's `Objects.toString` and workflow expressions
 * write it), `${}` (or blank) is "", and `$${` is a literal `${`. Keys are not templates.
 */
export function withPayload(template: JsonValue, payload: JsonValue): JsonValue {
  if (typeof template === "string") {
    const whole = /^\$\{([^}]*)\}$/.exec(template);
    if (whole) return isBlankPath(whole[1]!) ? "" : payloadValue(payload, whole[1]!);
    return template.replace(TEXT_PLACEHOLDER, (_match: string, path: string | undefined) => {
      if (path === undefined) return "${";
      if (isBlankPath(path)) return "";
      const value = payloadValue(payload, path);
      return typeof value === "object" && value !== null ? JSON.stringify(value) : String(value);
    });
  }
  if (Array.isArray(template)) return template.map((item) => withPayload(item, payload));
  if (template === null || typeof template !== "object") return template;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(template)) setOwn(out, key, withPayload(value, payload));
  return out;
}

/**
 * `value` with strings that hold a JSON object or array parsed, at any depth (Conductor's `expandInlineJSON`, for
 * payloads whose fields carry JSON as text). A string that does not parse stays as it is.
 */
export function expandInlineJson(value: JsonValue): JsonValue {
  if (typeof value === "string") {
    const text = value.trim();
    if (!(text.startsWith("{") && text.endsWith("}")) && !(text.startsWith("[") && text.endsWith("]"))) return value;
    try {
      return expandInlineJson(JSON.parse(text) as JsonValue);
    } catch {
      return value;
    }
  }
  if (Array.isArray(value)) return value.map(expandInlineJson);
  if (value === null || typeof value !== "object") return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) setOwn(out, key, expandInlineJson(item));
  return out;
}

/** A value of the payload as text, for the ids and names an action takes from it; undefined for none. */
export function payloadText(value: JsonValue | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text === "" ? undefined : text;
}

/** What every action writes of the message it acts on (Conductor's `conductor.event.*` fields). */
export function eventStamp(messageId: string, event: string): JsonObject {
  return { "conductor.event.messageId": messageId, "conductor.event.name": event };
}

/** The parameters of complete_task and fail_task (Conductor's `TaskDetails`): a task id alone names a task too. */
export interface TaskActionParams {
  workflowId?: string;
  taskRefName?: string;
  taskId?: string;
  output?: JsonObject;
  /** fail_task's reason (Conductor's `reasonForIncompletion`), the payload's values put in. */
  reasonForIncompletion?: string;
}

/**
 * The task a complete_task or fail_task acts on, and the output it gives it: as Conductor writes it, the action's
 * parameters and its `output`'s, the payload's values put in, with the message's stamp. `workflowId`, `taskId` and
 * `taskRefName` are always in it, null when not given, as Conductor's SimpleActionProcessor.completeTask puts the three
 * into the output map whatever they are (its maps keep null values in JSON).
 */
export function taskAction(params: TaskActionParams, payload: JsonObject, stamp: JsonObject): { workflowId?: string; taskId?: string; taskRefName?: string; reason?: string; output: JsonObject } {
  const given: JsonObject = { workflowId: params.workflowId ?? null, taskId: params.taskId ?? null, taskRefName: params.taskRefName ?? null };
  const output: JsonObject = { ...(withPayload({ ...given, ...(params.output ?? {}) }, payload) as JsonObject), ...stamp };
  const target: { workflowId?: string; taskId?: string; taskRefName?: string; reason?: string } = {};
  const reason = params.reasonForIncompletion === undefined ? undefined : payloadText(withPayload(params.reasonForIncompletion, payload));
  if (reason !== undefined) target.reason = reason;
  const workflowId = payloadText(output["workflowId"]);
  const taskId = payloadText(output["taskId"]);
  const taskRefName = payloadText(output["taskRefName"]);
  if (workflowId !== undefined) target.workflowId = workflowId;
  if (taskId !== undefined) target.taskId = taskId;
  if (taskRefName !== undefined) target.taskRefName = taskRefName;
  return { ...target, output };
}
