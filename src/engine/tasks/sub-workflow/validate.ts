/**
 * Registration-time checks of a SUB_WORKFLOW task (spec 2.3).
 */
import * as v from "valibot";
import {
  booleanRule,
  isBoolean,
  isExpression,
  jacksonBooleanOf,
  isNonEmptyString,
  isOneOf,
  isRecord,
  mapOf,
  objectOf,
  orExpression,
  rule,
  validateWith,
  type UnknownRecord,
  secretUseIssues,
} from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { START_IDEMPOTENCY_STRATEGIES } from "../start-workflow/request";
import { isTextScalar, TEXT_SCALAR_RULE } from "../../scalar-text";
import { DOMAIN_RULE, isDomainValue, isStartedPriority, isStartedVersion, MAX_STARTED_PRIORITY } from "../workflow-start-fields";

/** Highest child priority, as in Conductor. */
export const MAX_SUB_WORKFLOW_PRIORITY = MAX_STARTED_PRIORITY;

/**
 * The rules of a `subWorkflowParam`. Inside `inputParameters` (a map of any values) its version and idempotency strategy
 * may be expressions; beside it, in the task itself, they may not: Conductor's SubWorkflowParams types them (an Integer,
 * an enum), so Conductor refuses an expression there and a Java client reading the definition back would fail on one.
 */
function subWorkflowParamRules(inInput: boolean) {
  const orTyped = (test: (value: unknown) => boolean) => (inInput ? orExpression(test) : test);
  const anExpression = inInput ? ", or an expression" : " (an expression only inside inputParameters.subWorkflowParam)";
  return objectOf("subWorkflowParam", "an object describing the child workflow (at least its name)", {
    name: rule<string>("name", "a non-empty string naming the child workflow (an expression is allowed)", isNonEmptyString),
    // Null means none, as clients send it (the Python SDK's None).
    version: v.optional(
      rule<unknown>("version", `an integer of at least 0 or its digits as text${anExpression}; leave it out for the latest version (0: version 0 when one is registered, else the latest)`, orTyped(isStartedVersion)),
    ),
    // Conductor's SubWorkflowParams.taskToDomain, a Map<String, String>: Jackson takes a number or boolean domain as its
    // text, and a null one (none for that task). Inside inputParameters an expression may give the whole map, as it may
    // the version; one that resolves to no object (null and "" aside, which give none) fails the task with
    // INVALID_PARAMETERS at the child's start (childStartRequest), where Conductor's SubWorkflow ignores it and the child
    // would take its parent's domains without a word.
    taskToDomain: v.nullish(mapOf("taskToDomain", DOMAIN_RULE, isDomainValue, { wholeExpression: inInput })),
    priority: v.nullish(rule<unknown>("priority", `an integer from 0 to ${MAX_SUB_WORKFLOW_PRIORITY} (or an expression)`, orExpression(isStartedPriority))),
    // A number or boolean is its text as the child starts (idempotencyKeyOf), as Jackson reads SubWorkflowParams'
    // String idempotencyKey: an order number written as one keys the child as the API's start would.
    idempotencyKey: v.nullish(rule<unknown>("idempotencyKey", TEXT_SCALAR_RULE, isTextScalar)),
    idempotencyStrategy: v.nullish(rule<string>("idempotencyStrategy", `one of ${START_IDEMPOTENCY_STRATEGIES.join(", ")}${anExpression}`, orTyped(isOneOf(START_IDEMPOTENCY_STRATEGIES)))),
    // An inline child (what the SDK's ConductorWorkflow.toSubWorkflowTask() writes): checked as a definition of its
    // own by validateWorkflowDef, which holds the definition rules. Or an expression giving one as the workflow runs
    // (a planner task's output, as in Conductor), checked when the child starts. Beside inputParameters the text must
    // be the expression alone: SubWorkflowParams.setWorkflowDefinition throws on text that does not start with "${"
    // and end with "}", so Conductor refuses it and a Java client reading the definition, or any execution of it, fails.
    workflowDefinition: v.optional(
      inInput
        ? rule<unknown>("workflowDefinition", "an object (the child's workflow definition), or an expression giving one", (value) => value === null || isRecord(value) || isExpression(value))
        : rule<unknown>(
            "workflowDefinition",
            "an object (the child's workflow definition), or an expression giving one: text that starts with ${ and ends with }, nothing around it",
            (value) => value === null || isRecord(value) || (isExpression(value) && value.startsWith("${") && value.endsWith("}")),
          ),
    ),
  });
}

const SUB_WORKFLOW_PARAM = subWorkflowParamRules(false);
const SUB_WORKFLOW_PARAM_IN_INPUT = subWorkflowParamRules(true);

/** At task level the flag is a plain boolean (or its text, as Jackson reads it): only inputs are resolved at run time. */
const TASK_LEVEL = v.object({
  waitForCompletion: v.optional(booleanRule("waitForCompletion")),
});

/** Null means "not given", as at run time (see childStartRequest). */
const isChildInput = (value: unknown): boolean => value === null || isRecord(value);

const INPUT_LEVEL = v.object({
  // Kept as given (an input is a template), read as the task level's is stored when the task starts (childStartRequest).
  waitForCompletion: v.optional(rule<unknown>("waitForCompletion", "a boolean (or an expression)", orExpression((value) => isBoolean(jacksonBooleanOf(value))))),
  // Anything else used to be dropped silently, starting the child with the wrong input.
  input: v.optional(rule<unknown>("input", "an object (the child workflow's input) or an expression", orExpression(isChildInput))),
  workflowInput: v.optional(
    rule<unknown>("workflowInput", "an object (the child workflow's input) or an expression", orExpression(isChildInput)),
  ),
});

/**
 * Problems in a SUB_WORKFLOW task. `subWorkflowParam` may sit beside `inputParameters` or inside
 * it; when both are given the task-level one is used and the other is not checked.
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[2]`
 */
export function validateSubWorkflowTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const inputPath = childPath(path, "inputParameters");
  const rawInput = task["inputParameters"] ?? {};
  // A non-object inputParameters is reported by the common task checks.
  const input: UnknownRecord = isRecord(rawInput) ? rawInput : {};

  const issues: ValidationIssue[] = [];
  if (task["subWorkflowParam"] !== undefined) {
    issues.push(...validateWith(SUB_WORKFLOW_PARAM, task["subWorkflowParam"], childPath(path, "subWorkflowParam")));
  } else if (input["subWorkflowParam"] !== undefined) {
    const param = input["subWorkflowParam"];
    issues.push(...validateWith(SUB_WORKFLOW_PARAM_IN_INPUT, param, childPath(inputPath, "subWorkflowParam")));
    // Inside inputParameters it would be resolved as the parent's input, its expressions with the parent's values.
    if (isRecord(param) && isRecord(param["workflowDefinition"])) {
      issues.push({ path: childPath(childPath(inputPath, "subWorkflowParam"), "workflowDefinition"), message: "an inline child goes in the task's own subWorkflowParam (beside inputParameters), where its expressions stay its own" });
    }
  } else {
    issues.push({
      path: childPath(path, "subWorkflowParam"),
      message: "subWorkflowParam is required: an object with at least the child workflow's name, beside inputParameters or inside it",
    });
  }
  issues.push(...validateWith(TASK_LEVEL, task, path));
  issues.push(...validateWith(INPUT_LEVEL, input, inputPath));
  // An inline child may name secrets itself: they stay inside it, resolved as its own tasks run.
  const param = task["subWorkflowParam"];
  const passed = isRecord(param) && isRecord(param["workflowDefinition"]) ? Object.fromEntries(Object.entries(param).filter(([key]) => key !== "workflowDefinition")) : param;
  issues.push(...secretReferences(input, inputPath), ...secretReferences(passed, childPath(path, "subWorkflowParam")));
  return issues;
}

/**
 * A child's input is stored and shown as the child's own, so a secret passed into it would be
 * revealed there: the child must reference `${workflow.secrets.<name>}` itself.
 */
function secretReferences(value: unknown, path: string): ValidationIssue[] {
  return secretUseIssues(value, path, (names) => `must not pass secrets to a child workflow (${names.map((name) => `workflow.secrets.${name}`).join(", ")}): the child's input is stored and shown; reference the secret inside the child instead`);
}
