import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, eventually, hits, httpTask, register, startWorkflow, target, waitFor, type TaskJson, type WorkflowJson } from "./helpers";

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

  it("show the fork as Conductor's Task does: taskType and taskDefName FORK, the JOIN's and a SWITCH's taskDefName their type; task search finds it as FORK", async () => {
    await register({
      name: "fork_shown",
      tasks: [
        ...forkJoin("fan", [[{ name: "pick_one", taskReferenceName: "pick", type: "SWITCH", evaluatorType: "value-param", expression: "k", inputParameters: { k: "a" }, decisionCases: { a: [{ name: "inner", taskReferenceName: "inner", type: "NOOP" }] }, defaultCase: [] }], [{ name: "nothing", taskReferenceName: "noop", type: "NOOP" }]], ["pick", "noop"]),
      ],
    });
    const workflowId = await startWorkflow("fork_shown");
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    const shown = Object.fromEntries(done.tasks.map((task) => [task.referenceTaskName, [task["taskType"], task["taskDefName"]]]));
    expect(shown).toEqual({ fan: ["FORK", "FORK"], fan_join: ["JOIN", "JOIN"], pick: ["SWITCH", "SWITCH"], inner: ["NOOP", "inner"], noop: ["NOOP", "nothing"] });
    // The definition's own task keeps its type and name.
    expect(done.tasks[0]!["workflowTask"]).toMatchObject({ type: "FORK_JOIN", name: "fan" });
    const found = await eventually(
      () => apiOk<{ results: JsonObject[] }>("GET", `/api/tasks/search?query=${encodeURIComponent(`workflowId = '${workflowId}' AND taskType IN (FORK)`)}`),
      (page) => page.results.length === 1,
      "the fork by its type",
    );
    expect(found.results[0]).toMatchObject({ referenceTaskName: "fan", taskType: "FORK", taskDefName: "FORK" });
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
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks.filter((task) => task.referenceTaskName === "flaky").at(-1)?.status === "COMPLETED");
    expect(waiting.status).toBe("RUNNING");
    await apiOk<string>("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(await hits("fork-retry")).toBe(2);
  });

  it("end a workflow failed in a branch with its last scheduled task's output (the JOIN's), and show executed only where Conductor's decider acted on the end", async () => {
    await register({
      name: "fork_failed_output",
      tasks: forkJoin("fan", [[httpTask("broken", { uri: target("/flaky/fork-failed-output?fail=1"), method: "GET" })], [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }]], ["broken", "hold"]),
    });
    const failed = await waitFor(await startWorkflow("fork_failed_output"), ["FAILED", "COMPLETED"]);
    expect(failed.status).toBe("FAILED");
    // Scheduled as Conductor's ForkJoinTaskMapper lists them: the fork, its branches' first tasks, then the JOIN.
    const shown = failed.tasks.map((task) => [task.referenceTaskName, task.status, task["executed"]]);
    // Its decider set `executed` on the fork as it scheduled the branches; not on the task whose failure ended the
    // workflow (retry() throws before), nor on those canceled as it ended.
    expect(shown).toEqual([
      ["fan", "COMPLETED", true],
      ["broken", "FAILED", false],
      ["hold", "CANCELED", false],
      ["fan_join", "CANCELED", false],
    ]);
    expect(failed["failedTaskId"]).toBe(failed.tasks[1]!.taskId);
    // Conductor's terminateWorkflow calls updateWorkflowOutput(workflow, null): the last task's output, the JOIN's (none
    // yet), not the failed branch task's 503 response.
    expect(failed.output).toEqual({});
  });

  it("wait, for a joined SWITCH, for the last task of the case it took, and join that task's output under its name (Conductor's)", async () => {
    const noop = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "NOOP" });
    const route = {
      name: "route",
      taskReferenceName: "route",
      type: "SWITCH",
      evaluatorType: "value-param",
      expression: "k",
      inputParameters: { k: "${workflow.input.k}" },
      decisionCases: { slow: [noop("first"), { name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }], empty: [] },
      defaultCase: [noop("fallback")],
    };
    await register({ name: "fork_switch_joined", tasks: [...forkJoin("fan", [[route], [noop("quick")]], ["route", "quick"]), noop("after")] });
    const statusOf = (workflow: WorkflowJson, ref: string) => workflow.tasks.find((task) => task.referenceTaskName === ref)?.status;
    const joinOf = (workflow: WorkflowJson) => workflow.tasks.find((task) => task.referenceTaskName === "fan_join")!;

    const slow = await startWorkflow("fork_switch_joined", { k: "slow" });
    const holding = await waitFor(slow, (workflow) => statusOf(workflow, "hold") === "IN_PROGRESS" && statusOf(workflow, "quick") === "COMPLETED");
    expect([statusOf(holding, "route"), statusOf(holding, "fan_join"), statusOf(holding, "after")]).toEqual(["COMPLETED", "IN_PROGRESS", undefined]);
    await apiOk<string>("POST", `/api/tasks/${slow}/hold/COMPLETED`, { approved: true });
    const done = await waitFor(slow, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(joinOf(done).outputData).toEqual({ hold: { approved: true }, quick: {} });

    // The case's last task failing fails the workflow; the JOIN never completed, and what follows it never ran.
    const failing = await startWorkflow("fork_switch_joined", { k: "slow" });
    await waitFor(failing, (workflow) => statusOf(workflow, "hold") === "IN_PROGRESS" && statusOf(workflow, "quick") === "COMPLETED");
    await apiOk<string>("POST", `/api/tasks/${failing}/hold/FAILED`, {});
    const failed = await waitFor(failing, ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    expect([statusOf(failed, "fan_join"), statusOf(failed, "after")]).toEqual(["CANCELED", undefined]);

    // A case not listed, or listed with no tasks, takes the defaultCase, whose last task is joined.
    for (const k of ["other", "empty"]) {
      const byDefault = await waitFor(await startWorkflow("fork_switch_joined", { k }), ["COMPLETED", "FAILED"]);
      expect(Object.keys(joinOf(byDefault).outputData).sort()).toEqual(["fallback", "quick"]);
    }
  });

  it("end the JOIN COMPLETED_WITH_ERRORS naming each optional joined task that failed, and go on to complete the workflow (Conductor's)", async () => {
    const failing = (ref: string) => ({ name: `${ref}_check`, taskReferenceName: ref, type: "INLINE", optional: true, inputParameters: { evaluatorType: "javascript", expression: "(function () { throw new Error('no') })()" } });
    await register({
      name: "fork_optional_failures",
      tasks: [...forkJoin("fan", [[failing("one")], [{ name: "fine", taskReferenceName: "fine", type: "NOOP" }], [failing("two")]], ["one", "fine", "two"]), { name: "after", taskReferenceName: "after", type: "NOOP" }],
    });
    const done = await waitFor(await startWorkflow("fork_optional_failures"), ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    const byRef = Object.fromEntries(done.tasks.map((task) => [task.referenceTaskName, task]));
    expect([byRef["one"]!["taskDefName"], byRef["two"]!["taskDefName"], byRef["one"]!.status]).toEqual(["one_check", "two_check", "COMPLETED_WITH_ERRORS"]);
    expect(byRef["fan_join"]).toMatchObject({
      status: "COMPLETED_WITH_ERRORS",
      reasonForIncompletion: `one_check/${byRef["one"]!.taskId} two_check/${byRef["two"]!.taskId} completed with errors`,
    });
    expect(Object.keys(byRef["fan_join"]!.outputData).sort()).toEqual(["fine", "one", "two"]);
    expect(byRef["after"]!.status).toBe("COMPLETED");
  });

  it("let the other branches run on when a permissive branch task fails for good, and fail the JOIN once they have ended (Conductor's permissive)", async () => {
    const hold = { name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} };
    await register({
      name: "fork_permissive",
      tasks: [
        ...forkJoin("fan", [[httpTask("bad", { uri: target("/flaky/fork-permissive?fail=1"), method: "GET" }, { permissive: true })], [hold]], ["bad", "hold"]),
        httpTask("after", { uri: target("/count/fork-permissive-after"), method: "GET" }),
      ],
    });
    const statusOf = (workflow: WorkflowJson, ref: string) => workflow.tasks.findLast((task) => task.referenceTaskName === ref)?.status;
    const workflowId = await startWorkflow("fork_permissive");
    const holding = await waitFor(workflowId, (workflow) => statusOf(workflow, "bad") === "FAILED" && statusOf(workflow, "hold") === "IN_PROGRESS");
    expect([holding.status, statusOf(holding, "fan_join")]).toEqual(["RUNNING", "IN_PROGRESS"]);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, {});
    const failed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    expect(refsAndStatuses(failed)).toEqual(["bad:FAILED", "fan:COMPLETED", "fan_join:FAILED", "hold:COMPLETED"]);
    const bad = failed.tasks.find((task) => task.referenceTaskName === "bad")!;
    const join = failed.tasks.find((task) => task.referenceTaskName === "fan_join")!;
    expect(join["reasonForIncompletion"]).toBe(bad["reasonForIncompletion"]);
    expect(failed["reasonForIncompletion"]).toBe(`Task fan_join failed: ${bad["reasonForIncompletion"] as string}`);

    // Retried, the failed branch task runs again and the JOIN waits again where it stood, as Conductor's retry sets it
    // back IN_PROGRESS; the branch that ended well does not run again.
    expect((await api("POST", `/api/workflow/${workflowId}/retry`)).status).toBe(204);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done["reasonForIncompletion"])).toBe("COMPLETED");
    expect(refsAndStatuses(done)).toEqual(["after:COMPLETED", "bad:COMPLETED", "bad:FAILED", "fan:COMPLETED", "fan_join:COMPLETED", "hold:COMPLETED"]);
    expect(done.tasks.find((task) => task.referenceTaskName === "fan_join")!.taskId).toBe(join.taskId);
    expect(await hits("fork-permissive-after")).toBe(1);
  });

  it("on a retry, run a task after a permissive one once, when a canceled DO_WHILE in another branch goes on too", async () => {
    // The retry runs the permissive task again and its lane from it: the task after it waits for it. Once the canceled
    // loop was reopened, that task was run again at once as well, and then again after the permissive one: twice.
    const wait = (ref: string, extra: JsonObject = {}) => ({ name: ref, taskReferenceName: ref, type: "WAIT", ...extra });
    const loop = { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", inputParameters: { items: [1] }, loopOver: [wait("inner")] };
    await register({ name: "fork_permissive_loop_retry", tasks: forkJoin("fan", [[wait("maybe", { permissive: true }), wait("after")], [wait("other")], [loop]], ["after", "other", "loop"]) });
    const workflowId = await startWorkflow("fork_permissive_loop_retry");
    const running = (ref: string) => (workflow: WorkflowJson) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS");
    const pendingRuns = (workflow: WorkflowJson, ref: string) => workflow.tasks.filter((task) => task.referenceTaskName === ref && (task.status === "SCHEDULED" || task.status === "IN_PROGRESS")).length;
    await waitFor(workflowId, running("inner__1"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/maybe/FAILED`, {});
    await waitFor(workflowId, running("after"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/other/FAILED`, {});
    await waitFor(workflowId, ["FAILED"]);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    const retried = await waitFor(workflowId, (workflow) => running("maybe")(workflow) && running("inner__1")(workflow));
    expect(pendingRuns(retried, "after")).toBe(0);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/maybe/COMPLETED`, {});
    const after = await waitFor(workflowId, running("after"));
    expect(pendingRuns(after, "after")).toBe(1);
    for (const ref of ["after", "other", "inner__1"]) await apiOk<string>("POST", `/api/tasks/${workflowId}/${ref}/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done["reasonForIncompletion"])).toBe("COMPLETED");
  });

  it("retry a workflow that a rerun ran on beside a TERMINATE and that failed at its end for a permissive task the rerun left (a 409 said no task failed)", async () => {
    // The TERMINATE completed it over the permissive failure; the rerun from the branch it canceled ran to the end, where
    // the failure failed it. The TERMINATE, kept as it ended, did not end that run: the retry runs the failure again.
    const wait = (ref: string, extra: JsonObject = {}) => ({ name: ref, taskReferenceName: ref, type: "WAIT", ...extra });
    const stop = { name: "stop", taskReferenceName: "stop", type: "TERMINATE", inputParameters: { terminationStatus: "COMPLETED" } };
    await register({ name: "fork_permissive_terminate_retry", tasks: forkJoin("fan", [[wait("maybe", { permissive: true }), stop], [wait("other")]], []) });
    const workflowId = await startWorkflow("fork_permissive_terminate_retry");
    const runsOf = (workflow: WorkflowJson, ref: string) => workflow.tasks.filter((task) => task.referenceTaskName === ref).map((task) => task.status);
    await waitFor(workflowId, (workflow) => runsOf(workflow, "maybe").includes("IN_PROGRESS") && runsOf(workflow, "other").includes("IN_PROGRESS"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/maybe/FAILED`, {});
    const terminated = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect([terminated.status, runsOf(terminated, "maybe"), runsOf(terminated, "other")]).toEqual(["COMPLETED", ["FAILED"], ["CANCELED"]]);
    const other = terminated.tasks.find((task) => task.referenceTaskName === "other")!;
    await apiOk("POST", `/api/workflow/${workflowId}/rerun`, { reRunFromTaskId: other.taskId });
    await waitFor(workflowId, (workflow) => workflow.status === "RUNNING" && runsOf(workflow, "other").includes("IN_PROGRESS"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/other/COMPLETED`, {});
    const failed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect([failed.status, failed["reasonForIncompletion"]]).toEqual(["FAILED", expect.stringMatching(/^Task maybe failed/)]);
    const retry = await api("POST", `/api/workflow/${workflowId}/retry`);
    expect(retry.status, await retry.text()).toBe(204);
    await waitFor(workflowId, (workflow) => runsOf(workflow, "maybe").includes("IN_PROGRESS"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/maybe/COMPLETED`, {});
    // The lane runs on from it: its TERMINATE again.
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect([done.status, runsOf(done, "maybe")]).toEqual(["COMPLETED", ["FAILED", "COMPLETED"]]);
  });

  it("on a retry, have a JOIN that failed for a permissive task wait for its branch run again from a permissive task before it (it failed again at once)", async () => {
    // Both permissive tasks failed for good, the JOIN failing for the last. The retry runs the branch again from the
    // first; the last one's failure, to be run again after it, failed the JOIN set back IN_PROGRESS at once: the retry
    // answered 204 and the workflow was FAILED again, the first task CANCELED.
    const wait = (ref: string, extra: JsonObject = {}) => ({ name: ref, taskReferenceName: ref, type: "WAIT", ...extra });
    await register({ name: "fork_permissive_join_retry", tasks: forkJoin("fan", [[wait("maybe", { permissive: true }), wait("last", { permissive: true })]], ["last"]) });
    const workflowId = await startWorkflow("fork_permissive_join_retry");
    const running = (ref: string) => (workflow: WorkflowJson) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS");
    const runsOf = (workflow: WorkflowJson, ref: string) => workflow.tasks.filter((task) => task.referenceTaskName === ref).map((task) => task.status);
    await waitFor(workflowId, running("maybe"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/maybe/FAILED`, {});
    await waitFor(workflowId, running("last"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/last/FAILED`, {});
    const failed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect([failed.status, failed["reasonForIncompletion"]]).toEqual(["FAILED", expect.stringMatching(/^Task fan_join failed/)]);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    const retried = await waitFor(workflowId, (workflow) => workflow.status !== "RUNNING" || running("maybe")(workflow));
    expect([retried.status, runsOf(retried, "fan_join"), runsOf(retried, "last")]).toEqual(["RUNNING", ["IN_PROGRESS"], ["FAILED"]]);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/maybe/COMPLETED`, {});
    await waitFor(workflowId, running("last"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/last/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect([done.status, runsOf(done, "maybe"), runsOf(done, "last"), runsOf(done, "fan_join")]).toEqual(["COMPLETED", ["FAILED", "COMPLETED"], ["FAILED", "COMPLETED"], ["COMPLETED"]]);
  });

  it("on a retry, run a permissive task of a fork branch once, when a permissive task before the fork runs again too", async () => {
    // The retry runs the lane again from the task before the fork, which forks the branches again once it ends. The
    // permissive branch task was run again at once as well (SCHEDULED beside it), and again once forked: twice.
    const wait = (ref: string, extra: JsonObject = {}) => ({ name: ref, taskReferenceName: ref, type: "WAIT", ...extra });
    await register({ name: "fork_permissive_nested_retry", tasks: [wait("first", { permissive: true }), ...forkJoin("fan", [[wait("maybe", { permissive: true }), wait("after")], [wait("other")]], ["after", "other"])] });
    const workflowId = await startWorkflow("fork_permissive_nested_retry");
    const running = (ref: string) => (workflow: WorkflowJson) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS");
    const pendingRuns = (workflow: WorkflowJson, ref: string) => workflow.tasks.filter((task) => task.referenceTaskName === ref && (task.status === "SCHEDULED" || task.status === "IN_PROGRESS")).length;
    await waitFor(workflowId, running("first"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/first/FAILED`, {});
    await waitFor(workflowId, (workflow) => running("maybe")(workflow) && running("other")(workflow));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/maybe/FAILED`, {});
    await waitFor(workflowId, running("after"));
    await apiOk<string>("POST", `/api/tasks/${workflowId}/other/FAILED`, {});
    await waitFor(workflowId, ["FAILED"]);
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    const retried = await waitFor(workflowId, running("first"));
    expect(pendingRuns(retried, "maybe")).toBe(0);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/first/COMPLETED`, {});
    const forked = await waitFor(workflowId, (workflow) => running("maybe")(workflow) && running("other")(workflow));
    expect(pendingRuns(forked, "maybe")).toBe(1);
    await apiOk<string>("POST", `/api/tasks/${workflowId}/maybe/COMPLETED`, {});
    await waitFor(workflowId, running("after"));
    for (const ref of ["after", "other"]) await apiOk<string>("POST", `/api/tasks/${workflowId}/${ref}/COMPLETED`, {});
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done["reasonForIncompletion"])).toBe("COMPLETED");
  });

  it("run sub workflows in two branches at once", async () => {
    await register({ name: "fork_child", tasks: [meeting("meet", "fork-children")], outputParameters: { met: "${meet.output.response.body.met}" } });
    const child = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", subWorkflowParam: { name: "fork_child", version: 1 }, inputParameters: {} });
    await register({ name: "fork_parent", tasks: [...forkJoin("fan", [[child("one")], [child("two")]], ["one", "two"])], outputParameters: { one: "${one.output.met}", two: "${two.output.met}" } });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/fork_parent/1", { input: {} });
    expect(run.status).toBe("COMPLETED");
    expect(run.output).toEqual({ one: true, two: true });
  });

  it("without outputParameters, end with the JOIN's output: each joined task's output", async () => {
    await register({
      name: "fork_default_output",
      tasks: [...forkJoin("fan", [[httpTask("one", { uri: target("/count/fork-default-one"), method: "GET" })], [httpTask("two", { uri: target("/count/fork-default-two?delay=200"), method: "GET" })]], ["one", "two"])],
    });
    const done = await waitFor(await startWorkflow("fork_default_output"), ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(Object.keys(done.output).sort()).toEqual(["one", "two"]);
  });

  it("dispatch again both branches' calls lost in an eviction, and complete", async () => {
    await register({
      name: "fork_evicted",
      tasks: [...forkJoin("fan", [[httpTask("left", { uri: target("/count/fork-evict-left?delay=1500"), method: "GET" })], [httpTask("right", { uri: target("/count/fork-evict-right?delay=1500"), method: "GET" })]], ["left", "right"])],
      outputParameters: { left: "${left.output.response.body.n}", right: "${right.output.response.body.n}" },
    });
    const workflowId = await startWorkflow("fork_evicted");
    await eventually(async () => [await hits("fork-evict-left"), await hits("fork-evict-right")], ([left, right]) => left === 1 && right === 1, "both calls sent");
    await abortAllDurableObjects();
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"], 10_000);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(done.output).toEqual({ left: 2, right: 2 });
  });

  it("hand out neither branch's worker task while paused, both once resumed", async () => {
    const simple = (ref: string) => ({ name: "fork_pause_worker", taskReferenceName: ref, type: "SIMPLE", inputParameters: { side: ref } });
    await register({ name: "fork_paused", tasks: [...forkJoin("fan", [[simple("left")], [simple("right")]], ["left", "right"])] });
    const workflowId = await startWorkflow("fork_paused");
    const sizes = () => apiOk<Record<string, number>>("GET", "/api/tasks/queue/sizes?taskType=fork_pause_worker");
    await eventually(sizes, (size) => size["fork_pause_worker"] === 2, "both branch tasks queued");
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`, undefined, 200);
    const poll = () => apiOk<TaskJson[]>("GET", "/api/tasks/poll/batch/fork_pause_worker?workerid=w&count=5&timeout=0");
    expect(await poll()).toEqual([]);
    await apiOk("PUT", `/api/workflow/${workflowId}/resume`, undefined, 200);
    const polled = await eventually(poll, (tasks) => tasks.length === 2, "both handed out after the resume");
    expect(polled.map((task) => task.referenceTaskName).sort()).toEqual(["left", "right"]);
    for (const task of polled) await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, status: "COMPLETED", outputData: { side: task.inputData["side"] } });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(done.output).toEqual({ left: { side: "left" }, right: { side: "right" } });
  });

  it("paused while its JOIN waits: the branches' results taken meanwhile, the JOIN ends and the task after it runs once, at the resume", async () => {
    const simple = (ref: string) => ({ name: "fork_pause_join_worker", taskReferenceName: ref, type: "SIMPLE", inputParameters: { side: ref } });
    await register({ name: "fork_paused_join", tasks: [...forkJoin("fan", [[simple("left")], [simple("right")]], ["left", "right"]), httpTask("after", { uri: target("/count/fork-paused-join-after"), method: "GET" })] });
    const workflowId = await startWorkflow("fork_paused_join");
    const poll = () => apiOk<TaskJson[]>("GET", "/api/tasks/poll/batch/fork_pause_join_worker?workerid=w&count=5&timeout=0");
    const held = await eventually(poll, (tasks) => tasks.length === 2, "both branch tasks handed out");
    await apiOk("PUT", `/api/workflow/${workflowId}/pause`);
    for (const task of held) await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, status: "COMPLETED", outputData: { side: task.inputData["side"] } });
    const paused = await waitFor(workflowId, (workflow) => workflow.tasks.filter((task) => task.status === "COMPLETED").length === 3);
    expect(paused.status).toBe("PAUSED");
    expect(refsAndStatuses(paused)).toEqual(["fan:COMPLETED", "fan_join:IN_PROGRESS", "left:COMPLETED", "right:COMPLETED"]);
    expect(await hits("fork-paused-join-after")).toBe(0);
    await apiOk("PUT", `/api/workflow/${workflowId}/resume`);
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(refsAndStatuses(done)).toEqual(["after:COMPLETED", "fan:COMPLETED", "fan_join:COMPLETED", "left:COMPLETED", "right:COMPLETED"]);
    expect(done.tasks.find((task) => task.referenceTaskName === "fan_join")!.outputData).toEqual({ left: { side: "left" }, right: { side: "right" } });
    expect(await hits("fork-paused-join-after")).toBe(1);
  });

  it("follow a failed child retried on its own: the parent reopens, its other branch runs again, and it completes", async () => {
    await register({ name: "fork_flaky_child", tasks: [httpTask("flaky", { uri: target("/flaky/fork-flaky-child?fail=1"), method: "GET" })] });
    const hold = { name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} };
    const sub = { name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "fork_flaky_child", version: 1 }, inputParameters: {} };
    // hold is scheduled before sub: it is one of the tasks the parent keeps when it follows its child.
    await register({ name: "fork_child_retried", tasks: [...forkJoin("fan", [[hold], [sub]], ["hold", "sub"])] });
    const parentId = await startWorkflow("fork_child_retried");
    const failed = await waitFor(parentId, ["FAILED", "COMPLETED"]);
    expect(refsAndStatuses(failed)).toEqual(["fan:COMPLETED", "fan_join:CANCELED", "hold:CANCELED", "sub:FAILED"]);
    const childId = String(failed.tasks.find((task) => task.referenceTaskName === "sub")!["subWorkflowId"]);
    await apiOk("POST", `/api/workflow/${childId}/retry`, undefined, 204);
    expect((await waitFor(childId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    const waiting = await waitFor(parentId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "sub" && task.status === "COMPLETED") || workflow.status === "FAILED", 10_000);
    expect(waiting.status, String(waiting.reasonForIncompletion)).toBe("RUNNING");
    await apiOk<string>("POST", `/api/tasks/${parentId}/hold/COMPLETED`, {});
    expect((await waitFor(parentId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("refuse a FORK_JOIN without its JOIN, storing nothing", async () => {
    const response = await api("POST", "/api/metadata/workflow", { name: "fork_unjoined", tasks: [{ name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[httpTask("a", { uri: target("/echo"), method: "GET" })]] }] });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; validationErrors: Array<{ path: string; message: string }> };
    expect(body.validationErrors).toEqual([{ path: "tasks[0]", message: expect.stringContaining("must be followed directly by a JOIN") }]);
    expect((await api("GET", "/api/metadata/workflow/fork_unjoined")).status).toBe(404);
  });
});

/**
 * The join script of Orkes' docs and the Python SDK's fork_join_script example (JoinTask(join_on_script=...)): the JOIN
 * waits while a task it joins on is neither COMPLETED nor COMPLETED_WITH_ERRORS, showing which, then completes.
 */
const EXAMPLE_JOIN_SCRIPT = `
(function(){
  let results = {};
  let pendingJoinsFound = false;
  if($.joinOn){
    $.joinOn.forEach((element)=>{
      if($[element] && $[element].status !== 'COMPLETED' && $[element] && $[element].status !== 'COMPLETED_WITH_ERRORS'){
        results[element] = $[element].status;
        pendingJoinsFound = true;
      }
    });
    if(pendingJoinsFound){
      return {
        "status":"IN_PROGRESS",
        "reasonForIncompletion":"Pending",
        "outputData":{
          "scriptResults": results
        }
      };
    }
    // To complete the Join - return true OR an object with status = 'COMPLETED' like above.
    return true;
  }
})();
`;

/** Polls worker tasks of `type` until `count` of them are handed out (bounded). */
async function pollTasks(type: string, count: number): Promise<TaskJson[]> {
  const polled: TaskJson[] = [];
  await eventually(
    async () => polled.push(...(await apiOk<TaskJson[]>("GET", `/api/tasks/poll/batch/${type}?workerid=w&count=${count - polled.length}&timeout=0`))),
    () => polled.length >= count,
    `${count} ${type} tasks handed out`,
  );
  return polled;
}

/** A worker's result for `task`. */
async function finish(workflowId: string, task: TaskJson, status: string, outputData: JsonObject = {}): Promise<void> {
  await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: task.taskId, status, outputData, reasonForIncompletion: status === "COMPLETED" ? undefined : "worker said no" });
}

const taskOf = (workflow: WorkflowJson, ref: string) => workflow.tasks.findLast((task) => task.referenceTaskName === ref)!;

describe("JOIN with a join script (Orkes' expression)", () => {
  it("runs the Python SDK example's script: waits, showing what is pending, while an optional branch runs, completes once each is COMPLETED or COMPLETED_WITH_ERRORS", async () => {
    const worker = (ref: string) => ({ name: "join_script_worker", taskReferenceName: ref, type: "SIMPLE", optional: true, inputParameters: { me: ref } });
    const join = { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["w0", "w1", "w2"], evaluatorType: "js", expression: EXAMPLE_JOIN_SCRIPT };
    await register({ name: "join_script_example", tasks: [{ name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[worker("w0")], [worker("w1")], [worker("w2")]] }, join], outputParameters: { results: "${join.output}" } });
    // Kept as written, as Orkes' UI reads it back.
    const stored = await apiOk<{ tasks: JsonObject[] }>("GET", "/api/metadata/workflow/join_script_example");
    expect(stored.tasks[1]).toMatchObject({ evaluatorType: "js", expression: EXAMPLE_JOIN_SCRIPT });
    const workflowId = await startWorkflow("join_script_example");
    const polled = await pollTasks("join_script_worker", 3);
    const byRef = Object.fromEntries(polled.map((task) => [task.referenceTaskName, task]));
    await finish(workflowId, byRef["w0"]!, "COMPLETED", { n: 0 });
    // An optional task that failed ends COMPLETED_WITH_ERRORS, which the script counts as done.
    await finish(workflowId, byRef["w1"]!, "FAILED");
    const waiting = await waitFor(workflowId, (workflow) => taskOf(workflow, "w1").status === "COMPLETED_WITH_ERRORS" && taskOf(workflow, "join").reasonForIncompletion === "Pending");
    expect(waiting.status).toBe("RUNNING");
    expect(taskOf(waiting, "join")).toMatchObject({ status: "IN_PROGRESS", outputData: { scriptResults: { w2: "IN_PROGRESS" } } });
    await finish(workflowId, byRef["w2"]!, "COMPLETED", { n: 2 });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(taskOf(done, "join").status).toBe("COMPLETED");
    expect(taskOf(done, "join").reasonForIncompletion).toBeUndefined();
    expect(done.output["results"]).toEqual({ w0: { n: 0 }, w1: {}, w2: { n: 2 } });
  });

  it("after a dynamic fork, sees every forked task in $.joinOn: waits until the last completes (Orkes' dyn_fork_test)", async () => {
    const forked = ["s1", "s2", "s3"].map((ref) => ({ name: "join_script_dynamic", taskReferenceName: ref, type: "SIMPLE", optional: true }));
    await register({
      name: "join_script_dynamic",
      tasks: [
        { name: "dyn_fork", taskReferenceName: "dyn_fork", type: "FORK_JOIN_DYNAMIC", dynamicForkTasksParam: "dynamicTasks", dynamicForkTasksInputParamName: "dynamicTasksInput", inputParameters: { dynamicTasks: forked, dynamicTasksInput: { s1: {}, s2: {}, s3: {} } } },
        { name: "join_1", taskReferenceName: "join_1", type: "JOIN", joinOn: [], evaluatorType: "js", expression: EXAMPLE_JOIN_SCRIPT },
      ],
    });
    const workflowId = await startWorkflow("join_script_dynamic");
    const polled = await pollTasks("join_script_dynamic", 3);
    const last = polled.find((task) => task.referenceTaskName === "s3")!;
    for (const task of polled) if (task !== last) await finish(workflowId, task, "COMPLETED");
    const waiting = await waitFor(workflowId, (workflow) => taskOf(workflow, "join_1").reasonForIncompletion === "Pending");
    expect(taskOf(waiting, "join_1")).toMatchObject({ status: "IN_PROGRESS", outputData: { scriptResults: { s3: "IN_PROGRESS" } } });
    await finish(workflowId, last, "COMPLETED");
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(taskOf(done, "join_1").status).toBe("COMPLETED");
  });

  it("completes when its script says so, before every branch has ended: the workflow goes on, and ends once the branch left running does", async () => {
    const join = {
      name: "join",
      taskReferenceName: "join",
      type: "JOIN",
      joinOn: ["quick", "hold"],
      // Its script parameters are its inputParameters.
      inputParameters: { enough: "${workflow.input.enough}" },
      expression: "(function(){ return $[$.enough] !== undefined && $[$.enough].status === 'COMPLETED' ? { status: 'COMPLETED', outputData: { by: $.enough } } : false; })()",
    };
    await register({
      name: "join_script_early",
      tasks: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[{ name: "quick", taskReferenceName: "quick", type: "NOOP" }], [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }]] },
        join,
        { name: "after", taskReferenceName: "after", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "$.by", by: "${join.output.by}" } },
      ],
    });
    const workflowId = await startWorkflow("join_script_early", { enough: "quick" });
    const early = await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "after"));
    expect(early.status).toBe("RUNNING");
    expect(refsAndStatuses(early)).toEqual(["after:COMPLETED", "fork:COMPLETED", "hold:IN_PROGRESS", "join:COMPLETED", "quick:COMPLETED"]);
    expect(taskOf(early, "join").outputData).toEqual({ quick: {}, hold: {}, by: "quick" });
    expect(taskOf(early, "after").outputData).toEqual({ result: "quick" });
    await apiOk<string>("POST", `/api/tasks/${workflowId}/hold/COMPLETED`, {});
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
  });

  it("fails when its script returns FAILED, failing the workflow with its reason; a rerun from the joined task runs it again", async () => {
    const join = {
      name: "join",
      taskReferenceName: "join",
      type: "JOIN",
      joinOn: ["checked"],
      evaluatorType: "javascript",
      expression: "(function(){ const t = $.checked; if (!t || t.status !== 'COMPLETED') return false; return t.outputData.ok ? true : { status: 'FAILED', reasonForIncompletion: 'checked was not ok' }; })()",
    };
    await register({ name: "join_script_fails", tasks: [{ name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[{ name: "join_script_check", taskReferenceName: "checked", type: "SIMPLE" }]] }, join] });
    const workflowId = await startWorkflow("join_script_fails");
    const [first] = await pollTasks("join_script_check", 1);
    await finish(workflowId, first!, "COMPLETED", { ok: false });
    const failed = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    expect(failed.reasonForIncompletion).toBe("Task join failed: checked was not ok");
    expect(taskOf(failed, "join")).toMatchObject({ status: "FAILED", reasonForIncompletion: "checked was not ok", outputData: { checked: { ok: false } } });
    // A retry runs the failed JOIN again: its script sees the same task, and fails it again.
    await apiOk("POST", `/api/workflow/${workflowId}/retry`, undefined, 204);
    const again = await waitFor(workflowId, (workflow) => workflow.status === "FAILED" && workflow.tasks.filter((task) => task.referenceTaskName === "join").length === 2);
    expect(again.tasks.filter((task) => task.referenceTaskName === "join").map((task) => task.status)).toEqual(["FAILED", "FAILED"]);
    await apiOk("POST", `/api/workflow/${workflowId}/rerun`, { reRunFromTaskId: first!.taskId });
    const [rerun] = await pollTasks("join_script_check", 1);
    await finish(workflowId, rerun!, "COMPLETED", { ok: true });
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status, String(done.reasonForIncompletion)).toBe("COMPLETED");
    expect(taskOf(done, "join")).toMatchObject({ status: "COMPLETED", outputData: { checked: { ok: true } } });
  });

  it("fails with the error when its script throws, or returns what no JOIN result is", async () => {
    const run = async (name: string, expression: string) => {
      await register({ name, tasks: [...forkJoin("fan", [[{ name: "n", taskReferenceName: "n", type: "NOOP" }]], ["n"]).map((task) => (task["type"] === "JOIN" ? { ...task, expression } : task))] });
      return waitFor(await startWorkflow(name), ["COMPLETED", "FAILED"]);
    };
    const thrown = await run("join_script_throws", "$.n.outputData.missing.deeper");
    expect(thrown.status).toBe("FAILED");
    expect(taskOf(thrown, "fan_join")).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringMatching(/^The JOIN script failed: TypeError/) });
    expect(thrown.reasonForIncompletion).toMatch(/^Task fan_join failed: The JOIN script failed: TypeError/);
    const odd = await run("join_script_odd", "({ status: 'SCHEDULED' })");
    expect(taskOf(odd, "fan_join")).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringContaining('The JOIN script returned an object whose status is the string "SCHEDULED"') });
  });

  it("refuses a join script that is no string, in another language, with a syntax error, or beside secrets, storing nothing", async () => {
    const join = (extra: JsonObject) => ({ name: "j", taskReferenceName: "j", type: "JOIN", joinOn: ["n"], ...extra });
    const refused = async (extra: JsonObject, path: string, message: string) => {
      const response = await api("POST", "/api/metadata/workflow", { name: "join_script_refused", tasks: [{ name: "f", taskReferenceName: "f", type: "FORK_JOIN", forkTasks: [[{ name: "n", taskReferenceName: "n", type: "NOOP" }]] }, join(extra)] });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { validationErrors: Array<{ path: string; message: string }> };
      expect(body.validationErrors).toEqual([{ path, message: expect.stringContaining(message) }]);
    };
    await refused({ expression: { script: "true" } }, "tasks[1].expression", "expression must be a join script");
    await refused({ expression: "true", evaluatorType: "value-param" }, "tasks[1].evaluatorType", "evaluatorType must be one of js, javascript, graaljs");
    await refused({ expression: "(function(){ return true; }" }, "tasks[1].expression", "");
    await refused({ expression: "true", inputParameters: { key: "${workflow.secrets.api_key}" } }, "tasks[1].inputParameters", "must not use secrets");
    expect((await api("GET", "/api/metadata/workflow/join_script_refused")).status).toBe(404);
  });
});
