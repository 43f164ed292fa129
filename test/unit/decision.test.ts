import { describe, expect, it } from "vitest";
import { createExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { definitionScripts } from "../../src/engine/definition/scripts";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import type { JsonObject, WorkflowDef } from "../../src/engine/model";
import { planOf } from "../../src/engine/plan";
import { env, registrationErrors } from "./engine-env";

const http = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { uri: `https://example.com/${ref}`, method: "GET" } });
/** A DECISION as Conductor definitions written before SWITCH have it. */
const decisionTask = (fields: JsonObject): JsonObject => ({
  name: "route",
  taskReferenceName: "route",
  type: "DECISION",
  inputParameters: { kind: "${workflow.input.kind}" },
  decisionCases: { card: [http("charge")], invoice: [http("bill")], null: [http("no_kind")] },
  defaultCase: [http("manual")],
  ...fields,
});

function registered(tasks: JsonObject[]): WorkflowDef {
  const result = validateWorkflowDef({ name: "decisions", version: 1, schemaVersion: 2, tasks });
  if (!result.ok) throw new Error(result.errors.map((issue) => `${issue.path}: ${issue.message}`).join("; "));
  return result.value;
}

/** The reference names and statuses of an execution of `definition` with `input`, right after its start. */
function run(definition: WorkflowDef, input: JsonObject) {
  return decide(createExecution({ workflowId: "wf-1", definition, input }, 1_000), { type: "start" }, env(1_000)).state;
}
const refs = (state: ReturnType<typeof run>) => state.tasks.map((task) => `${task.referenceTaskName}:${task.status}`);

describe("DECISION (Conductor's older SWITCH)", () => {
  it("with caseValueParam runs the case named by that input parameter, recording it as caseOutput; no match runs the defaultCase", () => {
    const definition = registered([decisionTask({ caseValueParam: "kind" }), http("after")]);
    const card = run(definition, { kind: "card" });
    expect(refs(card)).toEqual(["route:COMPLETED", "charge:IN_PROGRESS"]);
    expect(card.tasks[0]).toMatchObject({ taskType: "DECISION", outputData: { caseOutput: ["card"] } });
    expect(refs(run(definition, { kind: "cash" }))).toEqual(["route:COMPLETED", "manual:IN_PROGRESS"]);
    // Conductor's "" + null: a missing parameter is the case "null".
    expect(refs(run(definition, {}))).toEqual(["route:COMPLETED", "no_kind:IN_PROGRESS"]);
  });

  it("with caseExpression runs it as JavaScript over $ (the task's input); it wins over caseValueParam, as in Conductor", () => {
    const definition = registered([decisionTask({ caseValueParam: "kind", caseExpression: "$.kind == 'CARD' ? 'card' : 'invoice'" })]);
    expect(planOf(definition).usesScripts).toBe(true);
    const state = run(definition, { kind: "CARD" });
    expect(refs(state)).toEqual(["route:COMPLETED", "charge:IN_PROGRESS"]);
    expect(state.tasks[0]!.outputData).toEqual({ caseOutput: ["card"] });
    expect(refs(run(definition, { kind: "card" }))).toEqual(["route:COMPLETED", "bill:IN_PROGRESS"]);
  });

  it("fails for good when its caseExpression throws: no case and no default runs", () => {
    const state = run(registered([decisionTask({ caseExpression: "$.kind.missing.field" }), http("after")]), { kind: "card" });
    expect(state.status).toBe("FAILED");
    expect(state.tasks).toHaveLength(1);
    expect(state.tasks[0]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(state.tasks[0]!.reasonForIncompletion).toMatch(/^The DECISION expression could not be evaluated: TypeError/);
  });

  it("is stored with its own fields (caseValueParam, caseExpression), not a SWITCH's, and its caseExpression goes to the syntax check", () => {
    const definition = registered([decisionTask({ caseValueParam: "kind", caseExpression: "$.kind" })]);
    const stored = definition.tasks[0]!;
    expect(stored).toMatchObject({ type: "DECISION", caseValueParam: "kind", caseExpression: "$.kind" });
    expect(stored.evaluatorType).toBeUndefined();
    expect(stored.expression).toBeUndefined();
    expect(Object.keys(stored.decisionCases ?? {})).toEqual(["card", "invoice", "null"]);
    expect(definitionScripts(definition)).toEqual([{ source: "$.kind", path: "tasks[0].caseExpression" }]);
    expect(definitionScripts(registered([decisionTask({ caseValueParam: "kind" })]))).toEqual([]);
  });

  it("refuses, with paths, neither caseValueParam nor caseExpression, one that is not a string, no cases, and secrets in its input; its branch tasks are checked too", () => {
    expect(registrationErrors([decisionTask({})])).toEqual([expect.stringMatching(/^tasks\[0\]\.caseValueParam: a DECISION needs caseValueParam .* or caseExpression/)]);
    expect(registrationErrors([decisionTask({ caseValueParam: "  ", caseExpression: "" })])).toHaveLength(1);
    expect(registrationErrors([decisionTask({ caseExpression: 5 })])).toEqual([expect.stringMatching(/^tasks\[0\]\.caseExpression: caseExpression must be a string/), expect.stringMatching(/^tasks\[0\]\.caseValueParam: a DECISION needs/)]);
    expect(registrationErrors([decisionTask({ caseValueParam: "kind", decisionCases: {} })])).toEqual([expect.stringMatching(/^tasks\[0\]\.decisionCases: decisionCases must be an object of at least one case/)]);
    expect(registrationErrors([decisionTask({ caseValueParam: "kind", inputParameters: { kind: "${workflow.secrets.token}" } })])).toEqual([
      expect.stringMatching(/^tasks\[0\]\.inputParameters: a DECISION must not use secrets \(workflow\.secrets\.token\)/),
    ]);
    expect(registrationErrors([decisionTask({ caseValueParam: "kind", decisionCases: { card: [{ name: "x", taskReferenceName: "x", type: "HTTP", inputParameters: {} }] } })])).toEqual([
      expect.stringMatching(/^tasks\[0\]\.decisionCases\.card\[0\]\.inputParameters\.uri/),
      expect.stringMatching(/^tasks\[0\]\.decisionCases\.card\[0\]\.inputParameters\.method/),
    ]);
  });
});
