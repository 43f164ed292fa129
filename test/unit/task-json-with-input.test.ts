import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { taskJsonWithInput, toTaskView, type TaskView } from "../../src/engine/view";
import { env, startedWith } from "./engine-env";
import { decide } from "./frozen-decide";

/** The Task JSON a poll answered before its input was written out once: the view with the input put in its place. */
const written = (view: TaskView, input: JsonObject): string => JSON.stringify({ ...view, inputData: input });

describe("taskJsonWithInput: a Task JSON built around an input already written out", () => {
  const input: JsonObject = { blob: "x".repeat(64), nested: { inputData: 0, list: [1, "two", null] }, quote: '"inputData":{}' };

  it("is the Task JSON of the view with that input, byte for byte, for a worker's task scheduled, polled and reported in progress", () => {
    const tasks = [{ name: "encode", taskReferenceName: "encode_ref", type: "SIMPLE" as const, inputParameters: { file: "${workflow.input.file}", password: "${workflow.input.file}" } }];
    const scheduled = startedWith("media", tasks, { file: "a.mp4" }).state;
    const taskId = scheduled.tasks[0]!.taskId;
    const polled = decide(scheduled, { type: "taskPolled", taskId, workerId: "w-1" }, env(2_000)).state;
    const reported = decide(polled, { type: "externalUpdate", taskId, status: "IN_PROGRESS", output: { inputData: 0, done: false }, callbackAfterSeconds: 5 }, env(3_000)).state;
    for (const state of [scheduled, polled, reported]) {
      const view = toTaskView(state.tasks[0]!, state);
      expect(taskJsonWithInput(view, JSON.stringify(input))).toBe(written(view, input));
    }
  });

  it("keeps the view's own order and leaves out undefined fields, whatever fields come before the input, after it, or none", () => {
    const text = JSON.stringify(input);
    const views: TaskView[] = [
      { taskId: "t", taskType: "SIMPLE", referenceTaskName: "r", taskDefName: "d", seq: 1, status: "SCHEDULED", inputData: {}, outputData: {}, retryCount: 0 },
      // A field before the input that is not among those the view has there today, an undefined one among them.
      { taskId: "t", priority: 3, correlationId: undefined as unknown as string, taskType: "SIMPLE", inputData: {}, outputData: { inputData: 0 } },
      { inputData: {}, outputData: {} },
      { taskId: "t", inputData: {} },
      { taskId: undefined as unknown as string, inputData: {}, endTime: undefined as unknown as number },
      { inputData: {} },
      // No input in the view: it comes last, as the spread puts it.
      { taskId: "t", status: "SCHEDULED" },
      {},
    ];
    for (const view of views) {
      const json = taskJsonWithInput(view, text);
      expect(json).toBe(written(view, input));
      expect(JSON.parse(json)).toEqual(JSON.parse(written(view, input)));
    }
  });
});
