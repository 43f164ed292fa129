import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, hits, httpTask, register, startWorkflow, target, waitFor, type WorkflowJson } from "./helpers";

/** A FORK_JOIN running `branches` side by side, followed by its JOIN waiting for `joinOn`. */
function forkJoin(ref: string, branches: JsonObject[][], joinOn: string[]): JsonObject[] {
  return [
    { name: ref, taskReferenceName: ref, type: "FORK_JOIN", forkTasks: branches },
    { name: `${ref}_join`, taskReferenceName: `${ref}_join`, type: "JOIN", joinOn },
  ];
}

/** A GET that the target answers only once `parties` calls with this key have arrived (or after 5 s, with met: false). */
const meeting = (ref: string, key: string, parties = 2) => httpTask(ref, { uri: target(`/meet/${key}?parties=${parties}`), method: "GET" });

const refsAndStatuses = (workflow: WorkflowJson) => workflow.tasks.map((task) => `${task.referenceTaskName}:${task.status}`).sort();

describe("FORK_JOIN and JOIN", () => {
  it("run the branches' HTTP calls side by side, join their outputs, and go on", async () => {
    await register({
      name: "fork_meeting",
      tasks: [
        ...forkJoin("fan", [[meeting("left", "fork-meeting")], [meeting("right", "fork-meeting")]], ["left", "right"]),
        httpTask("after", { uri: target("/count/fork-meeting-after?left=${fan_join.output.left.response.body.met}"), method: "GET" }),
      ],
      outputParameters: { left: "${left.output.response.body.met}", right: "${right.output.response.body.met}", joined: "${fan_join.output}" },
    });
    const done = await waitFor(await startWorkflow("fork_meeting"), ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    // Each call was held by the target until the other arrived: run one after the other, they would not have met.
    expect(done.output["left"]).toBe(true);
    expect(done.output["right"]).toBe(true);
    expect(Object.keys(done.output["joined"] as JsonObject).sort()).toEqual(["left", "right"]);
    expect(refsAndStatuses(done)).toEqual(["after:COMPLETED", "fan:COMPLETED", "fan_join:COMPLETED", "left:COMPLETED", "right:COMPLETED"]);
    const after = done.tasks.find((task) => task.referenceTaskName === "after")!;
    expect(String(after.inputData["uri"])).toMatch(/left=true$/);
    expect([await hits("fork-meeting"), await hits("fork-meeting-after")]).toEqual([2, 1]);
  });

  it("answer a synchronous execute once every branch is done", async () => {
    await register({
      name: "fork_execute",
      tasks: [...forkJoin("fan", [[meeting("a", "fork-execute", 3)], [meeting("b", "fork-execute", 3)], [meeting("c", "fork-execute", 3)]], ["a", "b", "c"])],
      outputParameters: { met: ["${a.output.response.body.met}", "${b.output.response.body.met}", "${c.output.response.body.met}"] },
    });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/fork_execute/1", { input: {} });
    expect(run.status).toBe("COMPLETED");
    expect(run.output).toEqual({ met: [true, true, true] });
  });

  it("wait in one branch for an outside completion while the other branch finishes", async () => {
    await register({
      name: "fork_waiting",
      tasks: [
        ...forkJoin("fan", [[{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }], [httpTask("quick", { uri: target("/count/fork-waiting-quick"), method: "GET" })]], ["hold", "quick"]),
      ],
      outputParameters: { approved: "${hold.output.approved}" },
    });
    const workflowId = await startWorkflow("fork_waiting");
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "quick" && task.status === "COMPLETED"));
    expect(waiting.status).toBe("RUNNING");
    expect(refsAndStatuses(waiting)).toEqual(["fan:COMPLETED", "fan_join:IN_PROGRESS", "hold:IN_PROGRESS", "quick:COMPLETED"]);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, { approved: true });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.output).toEqual({ approved: true });
  });

  it("fail the workflow when a branch fails, cancel the other branch, and run both again on retry", async () => {
    await register({
      name: "fork_retry",
      tasks: [
        ...forkJoin(
          "fan",
          [[httpTask("flaky", { uri: target("/flaky/fork-retry?fail=1"), method: "GET" })], [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }]],
          ["flaky", "hold"],
        ),
      ],
    });
    const workflowId = await startWorkflow("fork_retry");
    const failed = await waitFor(workflowId, ["FAILED", "COMPLETED"]);
    expect(failed.status).toBe("FAILED");
    expect(refsAndStatuses(failed)).toEqual(["fan:COMPLETED", "fan_join:CANCELED", "flaky:FAILED", "hold:CANCELED"]);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`);
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks.filter((task) => task.referenceTaskName === "flaky").at(-1)?.status === "COMPLETED");
    expect(waiting.status).toBe("RUNNING");
    await apiOk<string>("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(await hits("fork-retry")).toBe(2);
  });

  it("run sub workflows in two branches at once", async () => {
    await register({ name: "fork_child", tasks: [meeting("meet", "fork-children")], outputParameters: { met: "${meet.output.response.body.met}" } });
    const child = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", subWorkflowParam: { name: "fork_child", version: 1 }, inputParameters: {} });
    await register({ name: "fork_parent", tasks: [...forkJoin("fan", [[child("one")], [child("two")]], ["one", "two"])], outputParameters: { one: "${one.output.met}", two: "${two.output.met}" } });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/fork_parent/1", { input: {} });
    expect(run.status).toBe("COMPLETED");
    expect(run.output).toEqual({ one: true, two: true });
  });

  it("refuse a FORK_JOIN without its JOIN, storing nothing", async () => {
    const response = await api("POST", "/api/metadata/workflow", { name: "fork_unjoined", tasks: [{ name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[httpTask("a", { uri: target("/echo"), method: "GET" })]] }] });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; validationErrors: Array<{ path: string; message: string }> };
    expect(body.validationErrors).toEqual([{ path: "tasks[0]", message: expect.stringContaining("must be followed directly by a JOIN") }]);
    expect((await api("GET", "/api/metadata/workflow/fork_unjoined")).status).toBe(404);
  });
});
