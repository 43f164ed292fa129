// The web UI's diagram of a DECISION (Conductor's older SWITCH): the branch it took, from its `caseOutput`, and what it
// decides on, from its caseExpression or caseValueParam (ui/lib/diagram.js, run in Node on a stand-in document).
import { describe, expect, it } from "vitest";
import { FakeElement, installFakeDocument } from "./ui-document";

interface WorkflowTask {
  name?: string;
  taskReferenceName: string;
  type: string;
  inputParameters?: Record<string, unknown>;
  caseValueParam?: string;
  caseExpression?: string;
  decisionCases?: Record<string, WorkflowTask[]>;
  defaultCase?: WorkflowTask[];
}
interface Task {
  taskId: string;
  referenceTaskName: string;
  taskType: string;
  status: string;
  seq: number;
  startTime: number;
  endTime: number;
  scheduledTime: number;
  workflowTask: WorkflowTask;
  outputData: Record<string, unknown>;
}
interface Step {
  definitionTask: WorkflowTask;
  instances: Task[];
  branches?: Array<{ caseValue: string | null; taken: boolean | null; steps: Step[] }>;
}
interface DiagramModule {
  stepsOf(definitionTasks: WorkflowTask[], tasks?: Task[]): Step[];
  diagram(steps: Step[]): FakeElement;
}

installFakeDocument();
const { diagram, stepsOf } = (await import(/* @vite-ignore */ new URL("../../ui/lib/diagram.js", import.meta.url).href)) as DiagramModule;

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
