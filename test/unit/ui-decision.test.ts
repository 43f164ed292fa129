// The web UI's diagram of a DECISION (Conductor's older SWITCH): the branch it took, from its `caseOutput`, and what it
// decides on, from its caseExpression or caseValueParam (ui/lib/diagram.js, run in Node on a stand-in document).
import { describe, expect, it } from "vitest";
import { diagramModule, type WorkflowTask, type Task } from "./ui-diagram";

const { diagram, stepsOf } = diagramModule;

const http = (ref: string): WorkflowTask => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { uri: "https://example.com" } });
const decision = (fields: Partial<WorkflowTask>): WorkflowTask => ({
  name: "route", taskReferenceName: "route", type: "DECISION", inputParameters: { kind: "${workflow.input.kind}" }, decisionCases: { a: [http("on_a")], b: [http("on_b")] }, defaultCase: [http("other")], ...fields,
});
const instance = (workflowTask: WorkflowTask, outputData: Record<string, unknown>): Task => ({
  taskId: "t1", referenceTaskName: workflowTask.taskReferenceName, taskType: workflowTask.type, status: "COMPLETED", seq: 1, startTime: 1, endTime: 2, scheduledTime: 1, workflowTask, outputData,
});

describe("the UI's diagram of a DECISION", () => {
  it("draws its branches and marks the one its caseOutput chose as taken, as a SWITCH's", () => {
    const definitionTask = decision({ caseValueParam: "kind" });
    const [step] = stepsOf([definitionTask], [instance(definitionTask, { caseOutput: ["b"] })]);
    expect(step!.branches?.map((branch) => [branch.caseValue, branch.taken])).toEqual([["a", false], ["b", true], [null, false]]);
    const [unmatched] = stepsOf([definitionTask], [instance(definitionTask, { caseOutput: ["zzz"] })]);
    expect(unmatched!.branches?.map((branch) => branch.taken)).toEqual([false, false, true]);
  });

  it("says what it decides on: its caseExpression (which wins, as in Conductor) or its caseValueParam", () => {
    const noteOf = (definitionTask: WorkflowTask) => diagram(stepsOf([definitionTask])).descendants().find((element) => element.hasClass("switch-expression"))?.textContent;
    expect(noteOf(decision({ caseValueParam: "kind" }))).toBe("caseValueParam: kind");
    expect(noteOf(decision({ caseValueParam: "kind", caseExpression: "$.kind.toUpperCase()" }))).toBe("caseExpression: $.kind.toUpperCase()");
  });
});
