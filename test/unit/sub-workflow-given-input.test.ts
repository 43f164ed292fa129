import { describe, expect, it } from "vitest";
import { DEFAULT_ENGINE_CONFIG, type DecideEnv } from "../../src/engine/config";
import { createExecution, type ExecutionEvent } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import type { JsonObject, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { env, latestNamed, startedWith } from "./engine-env";

// The input a rerun's `taskInput` or a jump's body gives a SUB_WORKFLOW task: its child's input, under the description
// of the child its step resolves to (subWorkflowParam and the keys showing it).

const subTask = (ref: string, inputParameters: JsonObject): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", inputParameters });
const smallPayloads = (now: number): DecideEnv => ({ ...env(now), config: { ...DEFAULT_ENGINE_CONFIG, maxPayloadBytes: 1_000 } });
const rerunFrom = (state: WorkflowExecution, ref: string, fields: Omit<Extract<ExecutionEvent, { type: "rerun" }>, "type" | "fromTaskId">): ExecutionEvent => ({ type: "rerun", fromTaskId: latestNamed(state, ref).taskId, ...fields });
/** `ref`'s child failed: the execution ends FAILED, ready for a rerun. */
function childFailed(state: WorkflowExecution, ref: string, now: number): WorkflowExecution {
  const task = latestNamed(state, ref);
  const started = decide(state, { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "IN_PROGRESS", output: { subWorkflowId: "kid-1" }, awaitingExternal: true, subWorkflowId: "kid-1" }, env(now)).state;
  return decide(started, { type: "childFinished", taskId: task.taskId, subWorkflowId: "kid-1", status: "FAILED", output: {} }, env(now + 1)).state;
}

describe("a SUB_WORKFLOW task's input given from outside", () => {
  it("that would be over MAX_PAYLOAD_BYTES with its child's description fails the task on its input, as a resolved input over it does", () => {
    // The whole taskToDomain an expression gives, from the rerun's new workflow input: 40 tasks' domains.
    const domains = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`task_${i}`, "gpu"]));
    const step = subTask("sub", { subWorkflowParam: { name: "kid", taskToDomain: "${workflow.input.domains}" } });
    const failed = childFailed(startedWith("given_big", [step], {}, 1_000).state, "sub", 1_100);
    const rerun = decide(failed, rerunFrom(failed, "sub", { taskInput: { blob: "x".repeat(600) }, workflowInput: { domains } }), smallPayloads(2_000)).state;
    expect(rerun.status).toBe("FAILED");
    expect(latestNamed(rerun, "sub")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringMatching(/^Invalid task input: The input given with its child's description is \d+ bytes, over the limit of 1000 bytes \(MAX_PAYLOAD_BYTES\)$/) });
    // Each alone fits: the input alone, and the description alone.
    const alone = decide(failed, rerunFrom(failed, "sub", { taskInput: { blob: "x".repeat(600) } }), smallPayloads(2_000)).state;
    expect(latestNamed(alone, "sub")).toMatchObject({ status: "IN_PROGRESS", inputData: { blob: "x".repeat(600), subWorkflowParam: { name: "kid", taskToDomain: null } } });

    // A jump's body likewise.
    const gate: WorkflowTaskDef = { name: "gate", taskReferenceName: "gate", type: "WAIT", inputParameters: {} };
    const definition = { name: "given_big_jump", version: 1, schemaVersion: 2, tasks: [gate, step] };
    const waiting = decide(createExecution({ workflowId: "wf-2", definition, input: { domains } }, 1_000), { type: "start" }, smallPayloads(1_000)).state;
    const jumped = decide(waiting, { type: "jump", taskReferenceName: "sub", taskInput: { blob: "x".repeat(600) } }, smallPayloads(2_000)).state;
    expect(jumped.status).toBe("FAILED");
    expect(latestNamed(jumped, "sub")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", inputData: {}, reasonForIncompletion: expect.stringMatching(/^Invalid task input: The input given with its child's description is \d+ bytes/) });
  });

  it("is not failed by a key of its step's input that the given input replaces: only the child's description is resolved", () => {
    // `big` resolves over MAX_PAYLOAD_BYTES (an expression's limit): the task failed on its input as it ran.
    const step = subTask("sub", { subWorkflowParam: { name: "kid", version: 2 }, big: "${workflow.input.text}${workflow.input.text}" });
    const definition = { name: "given_other_key", version: 1, schemaVersion: 2, tasks: [step] };
    const failed = decide(createExecution({ workflowId: "wf-1", definition, input: { text: "y".repeat(600) } }, 1_000), { type: "start" }, smallPayloads(1_000)).state;
    const first = latestNamed(failed, "sub");
    expect(first).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringMatching(/^Invalid task input: expression too costly/) });
    const rerun = decide(failed, rerunFrom(failed, "sub", { taskInput: { big: "given" } }), smallPayloads(2_000)).state;
    expect(latestNamed(rerun, "sub")).toMatchObject({ status: "IN_PROGRESS", inputData: { big: "given", subWorkflowParam: { name: "kid", version: 2 }, subWorkflowName: "kid", subWorkflowVersion: 2 } });
  });
});
