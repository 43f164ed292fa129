import { describe, expect, it } from "vitest";
import { decide } from "./frozen-decide";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import type { JsonObject, WorkflowTaskDef } from "../../src/engine/model";
import { terminateWorkflowRequest, MAX_TERMINATED_WORKFLOWS } from "../../src/engine/tasks/terminate-workflow";
import { updateTaskRequest } from "../../src/engine/tasks/update-task";
import { env, latestNamed, refusal, registrationErrors, startedWith } from "./engine-env";

const updateTask = (ref: string, input: JsonObject): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "UPDATE_TASK", inputParameters: input });
const terminateWorkflow = (ref: string, input: JsonObject, extra: Partial<WorkflowTaskDef> = {}): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "TERMINATE_WORKFLOW", inputParameters: input, ...extra });
const wait = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });

describe("UPDATE_TASK", () => {
  it("registers naming a task by id or by reference name, with a status; refuses neither, a status it cannot set, a non-object output and secrets passed on", () => {
    expect(registrationErrors([updateTask("u", { taskStatus: "COMPLETED", workflowId: "${workflow.input.other}", taskRefName: "approval", taskOutput: { ok: true }, mergeOutput: true })])).toEqual([]);
    expect(registrationErrors([updateTask("u", { taskStatus: "${workflow.input.status}", taskId: "${workflow.input.taskId}" })])).toEqual([]);
    expect(registrationErrors([updateTask("u", { taskStatus: "COMPLETED" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters: an UPDATE_TASK names the task it updates: taskId, or taskRefName/)]);
    expect(registrationErrors([updateTask("u", { taskStatus: "SKIPPED", taskRefName: "a" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.taskStatus: .*COMPLETED, FAILED, FAILED_WITH_TERMINAL_ERROR, IN_PROGRESS/)]);
    expect(registrationErrors([updateTask("u", { taskRefName: "a" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.taskStatus: /)]);
    expect(registrationErrors([updateTask("u", { taskStatus: "COMPLETED", taskRefName: "a", taskOutput: [1] })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.taskOutput: /)]);
    expect(registrationErrors([updateTask("u", { taskStatus: "COMPLETED", taskRefName: "a", mergeOutput: "yes" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.mergeOutput: /)]);
    expect(registrationErrors([updateTask("u", { taskStatus: "COMPLETED", taskRefName: "a", taskOutput: { key: "${workflow.secrets.api}" } })])).toEqual([expect.stringMatching(/taskOutput: must not pass secrets to the task it updates/)]);
  });

  it("reads its resolved input: a task of this workflow by default, an id before a reference name, the output replaced unless merged", () => {
    expect(updateTaskRequest({ taskStatus: "COMPLETED", taskRefName: " approval " }, "wf-own")).toEqual({ target: { workflowId: "wf-own", taskRefName: "approval" }, status: "COMPLETED", output: {}, merge: false });
    expect(updateTaskRequest({ taskStatus: "FAILED", workflowId: "wf-other", taskRefName: "a", taskId: "ABC", taskOutput: { n: 1 }, mergeOutput: true }, "wf-own")).toEqual({ target: { taskId: "abc" }, status: "FAILED", output: { n: 1 }, merge: true });
    expect(updateTaskRequest({ taskStatus: "DONE", taskRefName: "a" }, "wf-own")).toEqual({ invalid: expect.stringMatching(/^taskStatus resolved to "DONE", not one of /) });
    expect(updateTaskRequest({ taskStatus: "COMPLETED", taskRefName: "", taskId: null }, "wf-own")).toEqual({ invalid: expect.stringMatching(/^Neither taskId nor taskRefName resolved to a value/) });
    expect(updateTaskRequest({ taskStatus: "COMPLETED", taskRefName: "a", taskOutput: "text" }, "wf-own")).toEqual({ invalid: expect.stringMatching(/^taskOutput resolved to "text", not an object/) });
    expect(updateTaskRequest({ taskStatus: "COMPLETED", taskRefName: "a", mergeOutput: "true" }, "wf-own")).toEqual({ invalid: expect.stringMatching(/^mergeOutput resolved to "true"/) });
  });

  it("is dispatched once started, and a DYNAMIC may run one", () => {
    const state = startedWith("updater", [updateTask("u", { taskStatus: "COMPLETED", taskRefName: "${workflow.input.ref}" })], { ref: "approval" }).state;
    expect(latestNamed(state, "u")).toMatchObject({ status: "IN_PROGRESS", attempt: 1, inputData: { taskStatus: "COMPLETED", taskRefName: "approval" } });
    const dynamic: WorkflowTaskDef = { name: "d", taskReferenceName: "d", type: "DYNAMIC", dynamicTaskNameParam: "run", inputParameters: { run: "UPDATE_TASK", taskStatus: "COMPLETED", taskRefName: "x" } };
    expect(latestNamed(startedWith("dyn", [dynamic]).state, "d")).toMatchObject({ taskType: "UPDATE_TASK", status: "IN_PROGRESS" });
  });

  it("an update sent by an UPDATE_TASK replaces the output unless merged, and the same update again changes nothing, where another's is refused", () => {
    let state = startedWith("waiting", [wait("hold"), wait("next")]).state;
    const hold = latestNamed(state, "hold");
    state = decide(state, { type: "externalUpdate", taskId: hold.taskId, status: "IN_PROGRESS", output: { a: 1 } }, env(2_000)).state;
    state = decide(state, { type: "externalUpdate", taskId: hold.taskId, status: "IN_PROGRESS", output: { b: 2 } }, env(2_500)).state;
    expect(latestNamed(state, "hold").outputData).toEqual({ a: 1, b: 2 });
    const update = { type: "externalUpdate", taskId: hold.taskId, status: "COMPLETED", output: { c: 3 }, replaceOutput: true, byTask: "wf-9/task-1" } as const;
    state = decide(state, update, env(3_000)).state;
    expect(latestNamed(state, "hold")).toMatchObject({ status: "COMPLETED", outputData: { c: 3 } });
    expect(latestNamed(state, "next").status).toBe("IN_PROGRESS");
    // Its dispatch repeated after an eviction: nothing changes, nothing is refused.
    const again = decide(state, { ...update, output: { d: 4 } }, env(4_000));
    expect(again.state).toEqual(state);
    expect(again.effects).toEqual([]);
    expect(refusal(state, { ...update, byTask: "wf-9/task-2" }, 4_000)).toMatchObject({ kind: "CONFLICT", message: expect.stringMatching(/is not pending/) });
    expect(refusal(state, { ...update, byTask: undefined }, 4_000)).toMatchObject({ kind: "CONFLICT" });
    // The workflow ends, and is rerun from it: the task is updated anew; that update is not this run's, and once this
    // run has ended it is refused.
    state = decide(state, { type: "externalUpdate", taskId: latestNamed(state, "next").taskId, status: "COMPLETED", output: {} }, env(4_500)).state;
    expect(state.status).toBe("COMPLETED");
    state = decide(state, { type: "rerun", fromTaskId: hold.taskId }, env(5_000)).state;
    state = decide(state, { type: "externalUpdate", taskId: hold.taskId, status: "COMPLETED", output: {} }, env(6_000)).state;
    expect(latestNamed(state, "hold").status).toBe("COMPLETED");
    expect(refusal(state, update, 7_000)).toMatchObject({ kind: "CONFLICT" });
  });
});

describe("TERMINATE_WORKFLOW", () => {
  it("registers with a list of ids (or one, or an expression); refuses none, an empty list, too many, a non-text reason and a non-boolean trigger", () => {
    expect(registrationErrors([terminateWorkflow("t", { workflowId: ["${workflow.input.a}", "${workflow.input.b}"], terminationReason: "superseded", triggerFailureWorkflow: true })])).toEqual([]);
    expect(registrationErrors([terminateWorkflow("t", { workflowId: "${workflow.input.ids}", triggerFailureWorkflow: "${workflow.input.trigger}" })])).toEqual([]);
    expect(registrationErrors([terminateWorkflow("t", {})])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.workflowId: /)]);
    expect(registrationErrors([terminateWorkflow("t", { workflowId: [] })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.workflowId: workflowId must be a list of 1 to 100 workflow ids/)]);
    expect(registrationErrors([terminateWorkflow("t", { workflowId: Array.from({ length: MAX_TERMINATED_WORKFLOWS + 1 }, (_, n) => `id-${n}`) })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.workflowId: /)]);
    expect(registrationErrors([terminateWorkflow("t", { workflowId: ["a"], terminationReason: 5 })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.terminationReason: /)]);
    expect(registrationErrors([terminateWorkflow("t", { workflowId: ["a"], triggerFailureWorkflow: "yes" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.triggerFailureWorkflow: /)]);
    expect(registrationErrors([terminateWorkflow("t", { workflowId: ["a"] }, { triggerFailureWorkflow: "yes" as unknown as boolean })])).toEqual([expect.stringMatching(/^tasks\[0\]\.triggerFailureWorkflow: triggerFailureWorkflow must be a boolean/)]);
  });

  it("reads its resolved input: each id once, a list an expression made a list inside the list, and the trigger beside its input (Orkes' first placement) unless the input gives one", () => {
    expect(terminateWorkflowRequest({ workflowId: ["B", ["a", "b"]], terminationReason: "done" })).toEqual({ workflowIds: ["b", "a"], reason: "done", triggerFailureWorkflow: false });
    expect(terminateWorkflowRequest({ workflowId: "one" })).toEqual({ workflowIds: ["one"], reason: "", triggerFailureWorkflow: false });
    // At most 500 characters of the reason, as a TERMINATE keeps of its own: an input's value may be 768 KiB.
    expect(terminateWorkflowRequest({ workflowId: "one", terminationReason: "r".repeat(501) })).toEqual({ workflowIds: ["one"], reason: "r".repeat(500), triggerFailureWorkflow: false });
    expect(terminateWorkflowRequest({ workflowId: [] })).toEqual({ invalid: expect.stringMatching(/^workflowId resolved to \[\], not a list of workflow ids/) });
    expect(terminateWorkflowRequest({ workflowId: ["a", 3] })).toEqual({ invalid: expect.stringMatching(/^workflowId resolved to /) });
    expect(terminateWorkflowRequest({ workflowId: Array.from({ length: MAX_TERMINATED_WORKFLOWS + 1 }, (_, n) => `id-${n}`) })).toEqual({ invalid: expect.stringMatching(/one task terminates at most 100/) });
    const placed = startedWith("ender", [terminateWorkflow("t", { workflowId: ["x"] }, { triggerFailureWorkflow: true }), terminateWorkflow("u", { workflowId: ["y"], triggerFailureWorkflow: false }, { triggerFailureWorkflow: true })]).state;
    expect(latestNamed(placed, "t")).toMatchObject({ status: "IN_PROGRESS", inputData: { workflowId: ["x"], triggerFailureWorkflow: true } });
    const registered = validateWorkflowDef({ name: "kept", version: 1, schemaVersion: 2, tasks: [terminateWorkflow("t", { workflowId: ["x"] }, { triggerFailureWorkflow: true })] });
    expect(registered.ok && registered.value.tasks[0]).toMatchObject({ triggerFailureWorkflow: true });
  });
});
