import { describeValue, isExpression, isRecord } from "../../definition/checks";
import { TASK_TYPES, type TaskType } from "../../model";
import { hasExpression } from "../../expressions";
import { eventName, sinkProblem } from "../event";
import { DYNAMIC_TARGET_TYPES, EVENT_SINK_PARAM, SUB_WORKFLOW_DEFINITION_PARAM, SUB_WORKFLOW_NAME_PARAM } from "./concrete";

/** The task a DYNAMIC runs: its type (SIMPLE for a worker's task) and name. */
export interface DynamicTarget {
  type: TaskType;
  name: string;
}

/**
 * Conductor and Orkes system task types this version does not run. Named by a DYNAMIC, each would otherwise become a
 * worker's task of that name, waiting for a worker that never comes. CUSTOM_CODE is Conductor OSS's Python script task
 * (its TaskType enum's, run by its CustomCodeExecutor on GraalVM Python), which no Worker here can run.
 */
const UNSUPPORTED_SYSTEM_TYPES: ReadonlySet<string> = new Set(["KAFKA_PUBLISH", "JDBC", "BUSINESS_RULE", "CUSTOM_CODE"]);

/**
 * The task named `name` (the value of the DYNAMIC's input parameter `param`): a system task of that type, or else a
 * worker's task of that name, as in Conductor; a message when no task can be run by that name.
 */
export function dynamicTarget(name: unknown, param: string): DynamicTarget | { invalid: string } {
  if (typeof name !== "string" || name.trim() === "") return { invalid: `input ${param} (dynamicTaskNameParam) must give the name of the task to run, but is ${describeValue(name)}` };
  if (UNSUPPORTED_SYSTEM_TYPES.has(name)) return { invalid: `input ${param} names ${name}, a system task type this version does not support` };
  if (!(TASK_TYPES as readonly string[]).includes(name)) return { type: "SIMPLE", name };
  const type = name as TaskType;
  if (type === "UPDATE_SECRET") {
    return { invalid: `input ${param} names UPDATE_SECRET, which a DYNAMIC cannot run: writing a secret is a right checked when a definition holding one is registered, which a choice made at run time escapes; write the UPDATE_SECRET into the definition` };
  }
  if (!DYNAMIC_TARGET_TYPES.includes(type)) {
    return { invalid: `input ${param} names ${type}, which a DYNAMIC cannot run (it holds or pairs with other tasks); a DYNAMIC runs one of ${DYNAMIC_TARGET_TYPES.join(", ")} or a worker's task` };
  }
  return { type, name };
}

/** Why a DYNAMIC with input parameters `input` cannot run its `target`; undefined when it can. */
export function dynamicTargetIssue(target: DynamicTarget | { invalid: string }, input: Readonly<Record<string, unknown>>): string | undefined {
  if ("invalid" in target) return target.invalid;
  if (target.type === "EVENT") return dynamicSinkIssue(input[EVENT_SINK_PARAM]);
  if (target.type !== "SUB_WORKFLOW") return undefined;
  const definition = input[SUB_WORKFLOW_DEFINITION_PARAM];
  if (definition !== undefined && definition !== null && !isRecord(definition) && !isExpression(definition)) {
    return `input ${SUB_WORKFLOW_DEFINITION_PARAM} must be the child's workflow definition (an object) or an expression giving one, but is ${describeValue(definition)}`;
  }
  // A child written in place names itself (Orkes' DYNAMIC takes the definition or the name); one an expression gives
  // is named beside it, as a SUB_WORKFLOW's subWorkflowParam.name is.
  if (input[SUB_WORKFLOW_NAME_PARAM] !== undefined || isRecord(definition)) return undefined;
  if (definition !== undefined && definition !== null) {
    return `a DYNAMIC running a SUB_WORKFLOW whose child definition an expression gives (${SUB_WORKFLOW_DEFINITION_PARAM}) names the child in input parameter ${SUB_WORKFLOW_NAME_PARAM} too, as a SUB_WORKFLOW's subWorkflowParam.name (the definition's own name wins when the child starts)`;
  }
  return `a DYNAMIC running a SUB_WORKFLOW names the child workflow in input parameter ${SUB_WORKFLOW_NAME_PARAM} (and its version in subWorkflowVersion), or gives its definition in ${SUB_WORKFLOW_DEFINITION_PARAM}`;
}

/**
 * Why input parameter `sink` of a DYNAMIC running an EVENT names nothing it can publish to; undefined when it can, or
 * when it is an expression (checked once resolved) or not given (the DYNAMIC's own `sink` field may give it, checked
 * with the task it runs).
 */
function dynamicSinkIssue(sink: unknown): string | undefined {
  if (sink === undefined || sink === null || (typeof sink === "string" && hasExpression(sink))) return undefined;
  return "invalid" in eventName(sink, "", "") ? `input ${EVENT_SINK_PARAM}: ${sinkProblem(sink)}` : undefined;
}
