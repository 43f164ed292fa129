import type { JsonObject, JsonValue, TaskExecution, WorkflowDef, WorkflowStatus, WorkflowTaskDef } from "../../model";
import type { TaskTypeModule } from "../task-type";
import { START_IDEMPOTENCY_STRATEGIES, type StartIdempotencyStrategy } from "../start-workflow/request";
import { idempotencyKeyOf, isJsonObjectValue, loneSurrogateDomainProblem, priorityOf, taskToDomainOf, workflowVersionOf } from "../workflow-start-fields";
import { jacksonBooleanOf } from "../../definition/checks";

/** The error code of a SUB_WORKFLOW task whose child could not start or did not succeed (spec section 7). */
export const SUB_WORKFLOW_ERROR = "SUB_WORKFLOW_ERROR";

/** Why a child could not be started, as `details.errorCode`. */
export type ChildStartErrorCode = "WORKFLOW_NOT_FOUND" | "VERSION_NOT_FOUND" | "INVALID_PARAMETERS" | "NESTING_TOO_DEEP" | "ALREADY_STARTED";

/** Everything the actor needs to start the child, read from the task's resolved input. */
export interface ChildStartRequest {
  name: string;
  version?: number;
  input: JsonObject;
  taskToDomain?: Record<string, string>;
  priority?: number;
  idempotencyKey?: string;
  idempotencyStrategy?: StartIdempotencyStrategy;
  waitForCompletion: boolean;
}

/**
 * The template a SUB_WORKFLOW task's input is resolved from. `subWorkflowParam` and
 * `waitForCompletion` may sit beside `inputParameters` or inside it; the task-level placement wins
 * (the spec leaves precedence open; task level is the more explicit of the two).
 */
export function subWorkflowInputTemplate(definition: WorkflowTaskDef): JsonObject {
  const template: JsonObject = { ...(definition.inputParameters ?? {}) };
  if (definition.subWorkflowParam !== undefined) {
    // An inline child is started as given (see `inlineChildDefinition`): its expressions are its own, not the parent's.
    // An expression giving the child is resolved with the input, as Conductor's mapper does.
    const { workflowDefinition: inline, ...param } = definition.subWorkflowParam;
    template["subWorkflowParam"] = isJsonObjectValue(inline) ? param : definition.subWorkflowParam;
  }
  if (definition.waitForCompletion !== undefined) template["waitForCompletion"] = definition.waitForCompletion;
  return { ...template, ...shownChildFields(definition, template["subWorkflowParam"]) };
}

/**
 * The task input keys that show the child as Conductor's SubWorkflowTaskMapper adds them, each the `subWorkflowParam`
 * field it shows (so resolved as that field is). Control keys, never part of the child's input.
 */
const SHOWN_CHILD_FIELDS = { subWorkflowName: "name", subWorkflowVersion: "version", subWorkflowTaskToDomain: "taskToDomain", priority: "priority" } as const;

/**
 * The keys of {@link SHOWN_CHILD_FIELDS} for the fields `param` gives, as expressions or values of the template. A
 * key the task's own input already has (its `inputParameters` or its task definition's `inputTemplate`) is left to it
 * and stays part of the child's input, as it was before these keys were shown.
 */
function shownChildFields(definition: WorkflowTaskDef, param: JsonValue | undefined): JsonObject {
  const shown: JsonObject = {};
  if (!isJsonObjectValue(param)) return shown;
  const own = childInputKeys(definition);
  for (const [key, field] of Object.entries(SHOWN_CHILD_FIELDS)) {
    const value = param[field];
    if (value !== undefined && value !== null && value !== "" && !own.has(key)) shown[key] = value;
  }
  return shown;
}

/**
 * The `subWorkflowVersion` to add to the task's `input` once its child started with `version`, when the input does not
 * show one yet (the child was named by an expression, or without a version inside `inputParameters`) and the task's
 * own input does not use that key: undefined otherwise.
 */
export function shownChildVersion(input: JsonObject, definition: WorkflowTaskDef | undefined, version: number | undefined): JsonObject | undefined {
  if (version === undefined || Object.hasOwn(input, "subWorkflowVersion") || childInputKeys(definition).has("subWorkflowVersion")) return undefined;
  return { subWorkflowVersion: version };
}

/** The keys SUB_WORKFLOW task `definition` itself gives its input: they are the child's, whatever their names. */
function childInputKeys(definition: WorkflowTaskDef | undefined): ReadonlySet<string> {
  return new Set([...Object.keys(definition?.inputParameters ?? {}), ...Object.keys(definition?.taskDefinition?.inputTemplate ?? {})]);
}

/** The keys of a SUB_WORKFLOW task's own input template that describe its child: the rest are the child's input. */
const DESCRIBING_KEYS: ReadonlySet<string> = new Set(["subWorkflowParam", "waitForCompletion"]);

/**
 * SUB_WORKFLOW task `definition` with only the keys of its input (and of its task definition's `inputTemplate`) that
 * describe its child: resolved, it gives what {@link withChildDescription} keeps, and a failing expression in a key the
 * given input replaces (one over MAX_PAYLOAD_BYTES, say) does not fail it.
 */
export function childDescriptionTask(definition: WorkflowTaskDef): WorkflowTaskDef {
  const describing = (template: JsonObject): JsonObject => Object.fromEntries(Object.entries(template).filter(([key]) => DESCRIBING_KEYS.has(key)));
  const described: WorkflowTaskDef = { ...definition, inputParameters: describing(definition.inputParameters ?? {}) };
  const taskDefinition = definition.taskDefinition;
  if (taskDefinition?.inputTemplate !== undefined) described.taskDefinition = { ...taskDefinition, inputTemplate: describing(taskDefinition.inputTemplate) };
  return described;
}

/**
 * The input of SUB_WORKFLOW task `definition` given from outside (a rerun's `taskInput`, a jump's body) as the child's
 * input: `given` as it is, over the keys of `resolved` (its input resolved from its step) that describe the child
 * rather than being its input (`subWorkflowParam`, `waitForCompletion`, the keys showing the child), unless `given`
 * names its child itself. Without them the child could not be started.
 */
export function withChildDescription(given: JsonObject, resolved: JsonObject, definition: WorkflowTaskDef): JsonObject {
  if (Object.hasOwn(given, "subWorkflowParam")) return given;
  const own = childInputKeys(definition);
  const describesChild = (key: string): boolean => DESCRIBING_KEYS.has(key) || (Object.hasOwn(SHOWN_CHILD_FIELDS, key) && !own.has(key));
  return { ...Object.fromEntries(Object.entries(resolved).filter(([key]) => describesChild(key))), ...given };
}

/** The inline child definition of SUB_WORKFLOW task `definition` (validated at registration), undefined when it names a registered one. */
export function inlineChildDefinition(definition: WorkflowTaskDef | undefined): WorkflowDef | undefined {
  const inline = definition?.subWorkflowParam?.["workflowDefinition"];
  return isJsonObjectValue(inline) ? (inline as unknown as WorkflowDef) : undefined;
}

/** Keys of the task input that describe the child rather than being its input. */
const CONTROL_KEYS = new Set(["subWorkflowParam", "waitForCompletion", "input", "workflowInput"]);

/**
 * Reads the child's start request from the resolved task input of SUB_WORKFLOW task `definition`. The child's input is
 * `inputParameters.input` (also Conductor's `workflowInput`, unless empty) when given, otherwise the other keys of
 * `inputParameters`: the keys showing the child (`subWorkflowName`, …) are left out unless `definition` gives them
 * itself. Answers a message when the input cannot describe a child.
 */
export function childStartRequest(input: JsonObject, definition?: WorkflowTaskDef): ChildStartRequest | { invalid: string } {
  const param = input["subWorkflowParam"];
  if (!isJsonObjectValue(param)) return { invalid: "subWorkflowParam is missing or not an object" };
  const name = param["name"];
  if (typeof name !== "string" || name.trim() === "") return { invalid: `subWorkflowParam.name resolved to ${JSON.stringify(name ?? null)}, not a workflow name` };
  // Read as the task-level field is stored (a Boolean as Jackson reads one: "FALSE" and 0 are false); anything else,
  // none included, is the spec's default, waiting.
  const request: ChildStartRequest = { name: name.trim(), input: {}, waitForCompletion: jacksonBooleanOf(input["waitForCompletion"]) !== false };
  const version = workflowVersionOf(param["version"], "subWorkflowParam.version");
  if (typeof version === "object") return version;
  if (version !== undefined) request.version = version;
  const explicitInput = explicitChildInput(input);
  if ("invalid" in explicitInput) return explicitInput;
  request.input = explicitInput.given ?? otherKeys(input, definition);
  const domains = param["taskToDomain"];
  // One an expression gave as something else than a map (a domain's name, say) fails the task rather than leaving the
  // child its parent's domains, as a START_WORKFLOW's does: Conductor's mapper ignores it, and the child's tasks would
  // wait in queues other than the ones meant. Only the kind is named: the value may hold masked secrets or be large.
  if (domains !== undefined && domains !== null && domains !== "" && !isJsonObjectValue(domains)) {
    return { invalid: `subWorkflowParam.taskToDomain resolved to ${kindOf(domains)}, not an object of task names to domains` };
  }
  // A domain holding half a character fails the task too: its queue is one no poll can name.
  const halfCharacter = isJsonObjectValue(domains) ? loneSurrogateDomainProblem(domains, "subWorkflowParam.taskToDomain") : undefined;
  if (halfCharacter !== undefined) return { invalid: halfCharacter };
  const taskToDomain = taskToDomainOf(domains);
  if (taskToDomain !== undefined) request.taskToDomain = taskToDomain;
  const priority = priorityOf(param["priority"], "subWorkflowParam.priority");
  if (typeof priority === "object") return priority;
  if (priority !== undefined) request.priority = priority;
  const idempotencyKey = idempotencyKeyOf(param["idempotencyKey"], "subWorkflowParam.idempotencyKey");
  if (typeof idempotencyKey === "object") return idempotencyKey;
  if (idempotencyKey !== undefined) request.idempotencyKey = idempotencyKey;
  const strategy = param["idempotencyStrategy"];
  if (strategy !== undefined && strategy !== null && strategy !== "") {
    if (!(START_IDEMPOTENCY_STRATEGIES as readonly JsonValue[]).includes(strategy)) {
      return { invalid: `subWorkflowParam.idempotencyStrategy resolved to ${JSON.stringify(strategy)}, not one of ${START_IDEMPOTENCY_STRATEGIES.join(", ")}` };
    }
    request.idempotencyStrategy = strategy as StartIdempotencyStrategy;
  }
  return request;
}

/** `input` without its control keys: the child's input when no explicit one is given. */
function otherKeys(input: JsonObject, definition: WorkflowTaskDef | undefined): JsonObject {
  const own = childInputKeys(definition);
  const isControlKey = (key: string): boolean => CONTROL_KEYS.has(key) || (Object.hasOwn(SHOWN_CHILD_FIELDS, key) && !own.has(key));
  return Object.fromEntries(Object.entries(input).filter(([key]) => !isControlKey(key)));
}

/**
 * The child's input given as `input` (or Conductor's `workflowInput`), `input` first; `given` is undefined
 * when neither is. Null counts as not given, as in Conductor, and so does an empty `workflowInput` (Conductor's
 * SubWorkflow starts the child with the task's input then); an empty `input` is this service's explicit empty input.
 * Any other non-object is refused: it cannot be a workflow input, and falling back to the other keys would start the
 * child with the wrong one.
 */
function explicitChildInput(input: JsonObject): { given: JsonObject | undefined } | { invalid: string } {
  let given: JsonObject | undefined;
  for (const key of ["input", "workflowInput"]) {
    const value = input[key];
    if (value === undefined || value === null) continue;
    if (key === "workflowInput" && isJsonObjectValue(value) && Object.keys(value).length === 0) continue;
    // Only the kind is named: the value may hold masked secrets or be large.
    if (!isJsonObjectValue(value)) return { invalid: `${key} resolved to ${kindOf(value)}, not an object (the child workflow's input)` };
    given ??= value;
  }
  return { given };
}

function kindOf(value: JsonValue): string {
  if (Array.isArray(value)) return "an array";
  return typeof value === "boolean" ? "a boolean" : typeof value === "number" ? "a number" : "a string";
}

/** The spec's failure output of a SUB_WORKFLOW task, plus the reason shown on the task. */
export function subWorkflowFailure(subWorkflowId: string | null, errorCode: string, message: string, errorMessage: string): { output: JsonObject; reason: string } {
  const output: JsonObject = { status: "FAILED", error: SUB_WORKFLOW_ERROR, message, details: { subWorkflowId, errorCode, errorMessage } };
  if (subWorkflowId !== null) output["subWorkflowId"] = subWorkflowId;
  return { output, reason: message };
}

/** How a child ended, as the SUB_WORKFLOW task waiting for it takes it. */
export interface ChildEnding {
  status: WorkflowStatus;
  output: JsonObject;
  reason?: string;
  /** The child's workflow name and version, which the reason of a task it did not complete names (absent: the bare id). */
  workflowName?: string;
  workflowVersion?: number;
  /** The child's object holds no execution (its storage lost): there is no reason of its own to quote. */
  lost?: boolean;
}

/** How a child's terminal status ends its SUB_WORKFLOW task. */
export function childOutcome(subWorkflowId: string, child: ChildEnding): Pick<TaskExecution, "status" | "outputData"> & { reasonForIncompletion?: string } {
  if (child.status === "COMPLETED") return { status: "COMPLETED", outputData: { ...child.output, subWorkflowId } };
  // Conductor's reason (SubWorkflow.updateTaskStatus, for every ending but COMPLETED), which its "Debugging workflows"
  // guide lists for users to look for; the child is named as its WorkflowModel.toShortString does, name.version/id.
  const named = child.workflowName !== undefined && child.workflowVersion !== undefined ? `${child.workflowName}.${child.workflowVersion}/${subWorkflowId}` : subWorkflowId;
  const errorMessage = child.lost ? `Sub workflow ${subWorkflowId} no longer exists` : (child.reason ?? `Sub workflow ended ${child.status}`);
  const reason = child.lost ? errorMessage : `Sub workflow ${named} failure reason: ${errorMessage}`;
  // However it ended, the task shows what the child output (Conductor adds it for every ending), under the keys this
  // service's own fields keep.
  if (child.status === "TERMINATED") return { status: "CANCELED", outputData: { ...child.output, subWorkflowId }, reasonForIncompletion: reason };
  const errorCode = child.status === "TIMED_OUT" ? "TIMED_OUT" : "TASK_ERROR";
  const { output } = subWorkflowFailure(subWorkflowId, errorCode, reason, errorMessage);
  return { status: "FAILED", outputData: { ...child.output, ...output }, reasonForIncompletion: reason };
}

/**
 * SUB_WORKFLOW: its side effect starts the child. The child's id is chosen when the task starts and
 * stored before the dispatch, so a dispatch repeated after an eviction finds the same child instead
 * of starting a second one.
 */
export const subWorkflowTask: TaskTypeModule = {
  type: "SUB_WORKFLOW",
  inputTemplate: subWorkflowInputTemplate,
  start(task, _definition, _execution, env) {
    return {
      task: {
        ...task,
        status: "IN_PROGRESS",
        startTime: env.now,
        updateTime: env.now,
        attempt: task.attempt + 1,
        attemptDeadline: this.attemptDeadline(task, env),
        subWorkflowId: task.subWorkflowId ?? env.newId(),
      },
      dispatch: true,
    };
  },
  afterResult(_task, result) {
    // A child that could not start (its failure names no child) never existed: the id chosen for it is not shown, so
    // that nothing follows it to a 404, as Conductor sets no subWorkflowId then.
    const details = result.outputData?.["details"];
    const notStarted = result.status !== "IN_PROGRESS" && result.status !== "COMPLETED" && isJsonObjectValue(details) && details["subWorkflowId"] === null;
    return notStarted ? { ...result, subWorkflowId: undefined } : result;
  },
  attemptDeadline(_task, env) {
    // Starting a child is one RPC plus a D1 read; twice the grace is ample.
    return env.now + 2 * env.config.dispatchGraceMs;
  },
};
