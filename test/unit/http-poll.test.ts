import { describe, expect, it } from "vitest";
import { createExecution, nextDeadline } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { definitionScripts } from "../../src/engine/definition/scripts";
import { deliveryKey, type JsonObject, type WorkflowExecution, type WorkflowTaskDef } from "../../src/engine/model";
import { pollWaitMs, pollSettings } from "../../src/engine/tasks/http-poll";
import { toTaskView } from "../../src/engine/view";
import { env, latestNamed, registrationErrors } from "./engine-env";

function poll(settings: JsonObject, extra: Partial<WorkflowTaskDef> = {}): WorkflowTaskDef {
  return { name: "status", taskReferenceName: "status", type: "HTTP_POLL", inputParameters: { http_request: { uri: "https://example.com/jobs/7", method: "GET", ...settings } }, ...extra };
}

function started(task: WorkflowTaskDef, now = 1_000): WorkflowExecution {
  const definition = { name: "polling", version: 1, schemaVersion: 2, tasks: [task, { name: "after", taskReferenceName: "after", type: "NOOP" as const, inputParameters: {} }] };
  return decide(createExecution({ workflowId: "wf-1", definition, input: {} }, now), { type: "start" }, env(now)).state;
}

/** The call of `status` in flight answers `body` (200) at `now`. */
function answers(state: WorkflowExecution, body: JsonObject, now: number) {
  const task = latestNamed(state, "status");
  return decide(state, { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "COMPLETED", output: { response: { statusCode: 200, body } } }, env(now));
}

describe("HTTP_POLL at registration", () => {
  it("takes the HTTP task's request and its poll settings, flat or in http_request, and finds its condition for the syntax check", () => {
    expect(registrationErrors([poll({ terminationCondition: "$.output.response.body.done", pollingInterval: "5", pollingStrategy: "LINEAR_BACKOFF", maxPollCount: 10 })])).toEqual([]);
    expect(registrationErrors([{ ...poll({}), inputParameters: { uri: "https://example.com/x", method: "GET", terminationCondition: "true", pollingInterval: 1 } }])).toEqual([]);
    expect(definitionScripts({ tasks: [poll({ terminationCondition: "$.output.x ==" })] })).toEqual([{ source: "$.output.x ==", path: "tasks[0].inputParameters.http_request.terminationCondition" }]);
  });

  it("refuses bad settings and a bad request, each at its path", () => {
    expect(registrationErrors([poll({ terminationCondition: 3, pollingInterval: 0, pollingStrategy: "RANDOM", maxPollCount: -1 })])).toEqual([
      "tasks[0].inputParameters.http_request.terminationCondition: terminationCondition must be JavaScript (a string) that holds once polling may stop, such as $.output.response.body.status === 'DONE', but received the number 3",
      "tasks[0].inputParameters.http_request.pollingInterval: pollingInterval must be a whole number of seconds of at least 1 (a number, or its digits as text), but received the number 0",
      "tasks[0].inputParameters.http_request.pollingStrategy: pollingStrategy must be one of FIXED, LINEAR_BACKOFF, EXPONENTIAL_BACKOFF, but received the string \"RANDOM\"",
      "tasks[0].inputParameters.http_request.maxPollCount: maxPollCount must be a whole number of polls (0: no limit), but received the number -1",
    ]);
    expect(registrationErrors([{ ...poll({}), inputParameters: { http_request: { method: "GET" } } }])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.http_request\.uri: /)]);
  });
});

describe("an HTTP_POLL task", () => {
  it("calls again at its interval until the condition holds for a response, then completes with that response, counting its polls", () => {
    const state = started(poll({ terminationCondition: "$.output.response.body.state === 'DONE'", pollingInterval: 10 }));
    const first = latestNamed(state, "status");
    expect(first).toMatchObject({ status: "IN_PROGRESS", attempt: 1 });

    const waiting = answers(state, { state: "RUNNING" }, 2_000);
    expect(waiting.effects).toEqual([]);
    expect(latestNamed(waiting.state, "status")).toMatchObject({ status: "SCHEDULED", pollCount: 1, scheduledTime: 12_000, outputData: { response: { body: { state: "RUNNING" } } } });
    expect(nextDeadline(waiting.state)).toBe(12_000);
    // The wait shows as its callbackAfterSeconds, as Orkes' task shows it between polls.
    expect(toTaskView(latestNamed(waiting.state, "status"), waiting.state)).toMatchObject({ pollCount: 1, status: "SCHEDULED", callbackAfterSeconds: 10 });
    // Nothing happens before its time.
    expect(decide(waiting.state, { type: "tick", liveTaskIds: new Set() }, env(11_000)).effects).toEqual([]);

    const again = decide(waiting.state, { type: "tick", liveTaskIds: new Set() }, env(12_000));
    expect(again.effects).toEqual([{ kind: "dispatch", taskId: first.taskId, attempt: 2 }]);
    expect(latestNamed(again.state, "status")).toMatchObject({ status: "IN_PROGRESS", startTime: 1_000 });

    // Each call asks for a fresh answer: its Idempotency-Key is its own (a repeat of one call after an eviction keeps it).
    expect(deliveryKey(first)).toBe(first.taskId);
    expect(deliveryKey(latestNamed(again.state, "status"))).toBe(`${first.taskId}.poll-1`);

    const done = answers(again.state, { state: "DONE" }, 13_000);
    expect(latestNamed(done.state, "status")).toMatchObject({ status: "COMPLETED", pollCount: 2, outputData: { response: { body: { state: "DONE" } } } });
    expect(done.state.status).toBe("COMPLETED");
  });

  it("without a condition completes with its first answer; with maxPollCount fails once the polls are used up; a condition that throws fails it (retried by its retry settings), as Orkes' server does", () => {
    expect(latestNamed(answers(started(poll({})), { any: 1 }, 2_000).state, "status")).toMatchObject({ status: "COMPLETED", pollCount: 1 });

    let state = started(poll({ terminationCondition: "false", pollingInterval: 1, maxPollCount: 2 }));
    state = answers(state, {}, 2_000).state;
    state = decide(state, { type: "tick", liveTaskIds: new Set() }, env(3_000)).state;
    const spent = answers(state, {}, 3_500).state;
    expect(latestNamed(spent, "status")).toMatchObject({ status: "FAILED", reasonForIncompletion: "terminationCondition did not hold within maxPollCount (2) polls" });
    expect(spent.status).toBe("FAILED");

    const broken = answers(started(poll({ terminationCondition: "$.output.response.body.missing.deeper" })), {}, 2_000).state;
    expect(latestNamed(broken, "status")).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringMatching(/^Failed to invoke the terminationCondition: /) });
    expect(broken.status).toBe("FAILED");
    // With retries left, the task polls afresh: the condition may hold for the next answer's shape.
    const retried = answers(started(poll({ terminationCondition: "$.output.response.body.missing.deeper" }, { retryCount: 1 })), {}, 2_000).state;
    expect(retried.status).toBe("RUNNING");
    expect(retried.tasks.filter((task) => task.referenceTaskName === "status").map((task) => [task.status, task.retryCount])).toEqual([["FAILED", 0], ["IN_PROGRESS", 1]]);
  });

  it("answers Conductor's three ways: 1 completes, 0 polls again, -1 fails the task; $.input is its input, $.output.status the status code", () => {
    const condition = "$.output.response.body.state === 'DONE' ? 1 : ($.output.response.body.state === 'ERROR' ? -1 : 0)";
    const waiting = answers(started(poll({ terminationCondition: condition, pollingInterval: 1 })), { state: "RUNNING" }, 2_000).state;
    expect(latestNamed(waiting, "status")).toMatchObject({ status: "SCHEDULED", pollCount: 1 });
    const again = decide(waiting, { type: "tick", liveTaskIds: new Set() }, env(3_000)).state;
    const failed = answers(again, { state: "ERROR" }, 3_500).state;
    expect(latestNamed(failed, "status")).toMatchObject({ status: "FAILED", pollCount: 2, reasonForIncompletion: "terminationCondition answered -1: the task fails" });
    expect(latestNamed(answers(started(poll({ terminationCondition: "'-1'" })), {}, 2_000).state, "status").status).toBe("FAILED");
    // $.input: the task's input, as Conductor's docs write the condition (its keys stay at the top of $ too).
    const byInput = started(poll({ terminationCondition: "$.output.response.body.id === $.input.http_request.uri.split('/').pop() && $.http_request.method === 'GET'" }));
    expect(latestNamed(answers(byInput, { id: "7" }, 2_000).state, "status").status).toBe("COMPLETED");
    // $.output.status: the answer's status code, as Orkes' docs write the condition and its server reads it.
    expect(latestNamed(answers(started(poll({ terminationCondition: "$.output.status === 200" })), {}, 2_000).state, "status").status).toBe("COMPLETED");
    expect(latestNamed(answers(started(poll({ terminationCondition: "$.output.status !== 200" })), {}, 2_000).state, "status")).toMatchObject({ status: "SCHEDULED", outputData: { response: { statusCode: 200, body: {} } } });
  });

  it("waits longer as its strategy says, never more than a day", () => {
    const wait = (strategy: string, polls: number) => pollWaitMs(pollSettings({ http_request: { pollingInterval: 10, pollingStrategy: strategy } }), polls);
    expect([1, 2, 3].map((polls) => wait("FIXED", polls))).toEqual([10_000, 10_000, 10_000]);
    expect([1, 2, 3].map((polls) => wait("LINEAR_BACKOFF", polls))).toEqual([10_000, 20_000, 30_000]);
    // 2^n times the interval after poll n, as Orkes' server (its Java client's HttpPollWorkerTests: 120 s, then 240 s, at 60).
    expect([1, 2, 3].map((polls) => wait("EXPONENTIAL_BACKOFF", polls))).toEqual([20_000, 40_000, 80_000]);
    expect(wait("EXPONENTIAL_BACKOFF", 40)).toBe(86_400_000);
    expect(pollSettings({}).intervalSeconds).toBe(60);
  });
});
