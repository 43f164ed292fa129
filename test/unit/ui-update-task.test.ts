// The web UI's diagram of an UPDATE_TASK: once it has updated a task of another execution, its step links there
// (ui/lib/diagram.js, run in Node on a stand-in document).
import { describe, expect, it } from "vitest";
import { diagramModule, type Task, type WorkflowTask } from "./ui-diagram";

const { diagram, stepsOf } = diagramModule;

const update: WorkflowTask = { name: "approve", taskReferenceName: "approve", type: "UPDATE_TASK", inputParameters: { taskStatus: "COMPLETED", taskRefName: "approval" } };
const instance = (status: string, outputData: Record<string, unknown>): Task & { workflowInstanceId: string } => ({
  taskId: "t1", referenceTaskName: "approve", taskType: "UPDATE_TASK", status, seq: 1, startTime: 1, endTime: 2, scheduledTime: 1, workflowTask: update, outputData, workflowInstanceId: "own-id",
});
const linksOf = (task: Task) => diagram(stepsOf([update], [task])).descendants().filter((element) => element.tagName === "a").map((link) => [link.getAttribute("href"), link.textContent]);

describe("the UI's diagram of an UPDATE_TASK", () => {
  it("links the execution whose task it updated, once it has; not its own, nor before it completed", () => {
    expect(linksOf(instance("COMPLETED", { workflowId: "other-id", taskId: "x", taskStatus: "COMPLETED" }))).toEqual([["#/executions/other-id", "open updated execution"]]);
    expect(linksOf(instance("COMPLETED", { workflowId: "own-id", taskId: "x", taskStatus: "COMPLETED" }))).toEqual([]);
    expect(linksOf(instance("IN_PROGRESS", {}))).toEqual([]);
  });
});
