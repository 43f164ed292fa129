import { humanTask, setVariableTask, terminateTask, waitTaskDuration, waitTaskUntil } from "@io-orkes/conductor-javascript";
import { describe, expect, it } from "vitest";
import { createExecution, isBlocked, nextDeadline, type Decision } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import type { JsonObject, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { signalledWait } from "../../src/engine/signals";
import { parseWaitDuration, parseWaitUntil } from "../../src/engine/tasks/wait/schedule";
import { batchSizeOf, isBlocking, messagePulls } from "../../src/engine/tasks/pull-workflow-messages";
import { toTaskView, toWorkflowView } from "../../src/engine/view";
import { env, refusal, registrationErrors } from "./engine-env";

const task = (ref: string, type: WorkflowTaskDef["type"], inputParameters: JsonObject = {}): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type, inputParameters });
const http = (ref: string): WorkflowTaskDef => task(ref, "HTTP", { uri: "https://example.com/x", method: "GET" });

function definitionOf(tasks: WorkflowTaskDef[], extra: Partial<WorkflowDef> = {}): WorkflowDef {
  return { name: "system", version: 1, schemaVersion: 2, tasks, ...extra };
}

function started(tasks: WorkflowTaskDef[], input: JsonObject = {}, now = 1_000, extra: Partial<WorkflowDef> = {}): Decision {
  const execution = createExecution({ workflowId: "wf-1", definition: definitionOf(tasks, extra), input }, now);
  return decide(execution, { type: "start" }, env(now));
}

function complete(state: WorkflowExecution, index: number, now: number, output: JsonObject = {}): WorkflowExecution {
  return decide(state, { type: "externalUpdate", taskId: state.tasks[index]!.taskId, status: "COMPLETED", output }, env(now)).state;
}

describe("WAIT: Conductor's duration and until formats", () => {
  it("reads durations as Conductor's DateTimeUtils.parseDuration does (days, hours, minutes, seconds; any case)", () => {
    expect(parseWaitDuration("10s")).toBe(10_000);
    expect(parseWaitDuration("30 seconds")).toBe(30_000);
    expect(parseWaitDuration("5m")).toBe(300_000);
    expect(parseWaitDuration("1h 30m")).toBe(5_400_000);
    expect(parseWaitDuration("2 days 3 hours")).toBe((2 * 24 + 3) * 3_600_000);
    expect(parseWaitDuration(" 1D 2HRS 3 Mins 4 secs ")).toBe(((24 + 2) * 3600 + 3 * 60 + 4) * 1000);
    expect(parseWaitDuration("1 day 1 hour 1 minute 1 second")).toBe((86_400 + 3_600 + 60 + 1) * 1000);
  });

  it("refuses an empty duration, a bare number, unknown units, units out of order and trailing text", () => {
    for (const text of ["", "   ", "10", "abc", "5 weeks", "30m 1h", "1h30x", "-5s", "1.5h"]) expect(parseWaitDuration(text), text).toBeUndefined();
  });

  it("reads until in yyyy-MM-dd HH:mm z, yyyy-MM-dd HH:mm and yyyy-MM-dd (the last two in UTC)", () => {
    expect(parseWaitUntil("2030-01-02 03:04 UTC")).toBe(Date.UTC(2030, 0, 2, 3, 4));
    expect(parseWaitUntil("2030-01-02 03:04")).toBe(Date.UTC(2030, 0, 2, 3, 4));
    expect(parseWaitUntil("2030-01-02")).toBe(Date.UTC(2030, 0, 2));
    expect(parseWaitUntil("2030-01-02 03:04 GMT")).toBe(Date.UTC(2030, 0, 2, 3, 4));
    expect(parseWaitUntil("2030-01-02 03:04 Z")).toBe(Date.UTC(2030, 0, 2, 3, 4));
    expect(parseWaitUntil("2030-01-02 03:04 +05:30")).toBe(Date.UTC(2030, 0, 1, 21, 34));
    expect(parseWaitUntil("2030-01-02 03:04 -0800")).toBe(Date.UTC(2030, 0, 2, 11, 4));
    expect(parseWaitUntil("2030-01-02 03:04 GMT-08:00")).toBe(Date.UTC(2030, 0, 2, 11, 4));
    expect(parseWaitUntil("2030-01-02 03:04 utc+1")).toBe(Date.UTC(2030, 0, 2, 2, 4));
    expect(parseWaitUntil("2030-01-02 03:04 PST")).toBe(Date.UTC(2030, 0, 2, 11, 4));
    expect(parseWaitUntil("2030-07-02 03:04 EDT")).toBe(Date.UTC(2030, 6, 2, 7, 4));
  });

  it("refuses dates that do not exist, times out of range, unknown zones and other formats", () => {
    for (const text of ["", "tomorrow", "2030-13-01", "2030-02-30", "2030-01-02 24:00", "2030-01-02 03:60", "2030-01-02 03:04 Mars/Olympus", "2030-01-02 03:04 +25:00", "2030-01-02T03:04:00Z", "2030-1-2"]) {
      expect(parseWaitUntil(text), text).toBeUndefined();
    }
  });
});

describe("WAIT: registration", () => {
  it("accepts duration, until, an expression for either, or neither (as the SDK's waitTaskDuration / waitTaskUntil write them)", () => {
    expect(registrationErrors([task("w", "WAIT", { duration: "10 s" })])).toEqual([]);
    expect(registrationErrors([task("w", "WAIT", { until: "2030-01-02 03:04 UTC" })])).toEqual([]);
    expect(registrationErrors([task("w", "WAIT", { duration: "${workflow.input.delay}" })])).toEqual([]);
    expect(registrationErrors([task("w", "WAIT", { until: "${workflow.input.at}" })])).toEqual([]);
    expect(registrationErrors([task("w", "WAIT")])).toEqual([]);
    expect(registrationErrors([{ name: "anything at all", taskReferenceName: "w", type: "WAIT", inputParameters: { duration: "1m" }, optional: true }])).toEqual([]);
  });

  it("reads a blank duration or until as not given, as Conductor's WorkflowTaskTypeConstraint does (StringUtils.isNotBlank)", () => {
    expect(registrationErrors([task("w", "WAIT", { duration: "" })])).toEqual([]);
    expect(registrationErrors([task("w", "WAIT", { duration: "  ", until: "" })])).toEqual([]);
    expect(registrationErrors([task("w", "WAIT", { duration: "", until: "2030-01-02 03:04 UTC" })])).toEqual([]);
    expect(registrationErrors([task("w", "WAIT", { duration: "10s", until: " " })])).toEqual([]);
    expect(registrationErrors([task("w", "WAIT", { duration: "", until: "next tuesday" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.until: /)]);
  });

  it("refuses an invalid literal duration or until, naming the accepted formats, and both at once", () => {
    expect(registrationErrors([task("w", "WAIT", { duration: "10 weeks" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.duration: .*1h 30m.*"10 weeks"/)]);
    expect(registrationErrors([task("w", "WAIT", { duration: 10 })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.duration: /)]);
    expect(registrationErrors([task("w", "WAIT", { until: "next tuesday" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.until: .*yyyy-MM-dd HH:mm z.*"next tuesday"/)]);
    expect(registrationErrors([task("w", "WAIT", { duration: "1m", until: "2030-01-02" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters: .*only one of duration and until/)]);
  });
});

describe("WAIT: running", () => {
  it("a duration makes it IN_PROGRESS, waiting (its callbackAfterSeconds the wait's seconds, as in Conductor), until the execution's alarm completes it with an empty output", () => {
    const { state } = started([task("w", "WAIT", { duration: "10s" }), http("after")]);
    const waiting = state.tasks[0]!;
    expect(waiting).toMatchObject({ status: "IN_PROGRESS", awaitingExternal: true, startTime: 1_000, timeoutAt: 11_000 });
    expect(nextDeadline(state)).toBe(11_000);
    // A synchronous execute waits through it, as for a worker's task: its time moves it on (Conductor's
    // WorkflowSignalResponder counts a WAIT as blocking only with no time set); one with none blocks.
    expect(isBlocked(state)).toBe(false);
    expect(isBlocked(started([task("w", "WAIT", {}), http("after")]).state)).toBe(true);
    // Its callbackAfterSeconds shows the wait, as Conductor's WaitTaskMapper sets it.
    expect(toTaskView(waiting, state)).toMatchObject({ taskType: "WAIT", status: "IN_PROGRESS", inputData: { duration: "10s" }, callbackAfterSeconds: 10 });
    // Before its time, the alarm leaves it waiting.
    expect(decide(state, { type: "tick", liveTaskIds: new Set() }, env(10_999)).state.tasks[0]!.status).toBe("IN_PROGRESS");
    const woken = decide(state, { type: "tick", liveTaskIds: new Set() }, env(11_000)).state;
    expect(woken.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: {}, endTime: 11_000, awaitingExternal: false });
    expect(woken.tasks[0]!.timeoutAt).toBeUndefined();
    // Back to 0 once it has run, as Conductor's system task executor sets it.
    expect(toTaskView(woken.tasks[0]!, woken)["callbackAfterSeconds"]).toBe(0);
    expect(woken.tasks.map((t) => `${t.referenceTaskName}:${t.status}`)).toEqual(["w:COMPLETED", "after:IN_PROGRESS"]);
  });

  it("until waits for that moment; one already past completes at once, in the same decision", () => {
    const at = Date.UTC(2030, 0, 2, 3, 4);
    const { state } = started([task("w", "WAIT", { until: "2030-01-02 03:04 UTC" })], {}, at - 60_000);
    expect(state.tasks[0]).toMatchObject({ status: "IN_PROGRESS", timeoutAt: at });
    expect(toTaskView(state.tasks[0]!, state)["callbackAfterSeconds"]).toBe(60);
    // Whole seconds to that moment, the fraction dropped (Conductor's long division).
    const soon = started([task("w", "WAIT", { until: "2030-01-02 03:04 UTC" })], {}, at - 59_500).state;
    expect(toTaskView(soon.tasks[0]!, soon)["callbackAfterSeconds"]).toBe(59);
    const past = started([task("w", "WAIT", { until: "${workflow.input.at}" })], { at: "2020-01-01" }, at).state;
    expect(past.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: {} });
    expect(toTaskView(past.tasks[0]!, past)["callbackAfterSeconds"]).toBe(0);
    expect(past.status).toBe("COMPLETED");
  });

  it("with neither duration nor until it waits, untimed, until completed or failed through the API", () => {
    const { state } = started([task("w", "WAIT"), http("after")]);
    expect(state.tasks[0]).toMatchObject({ status: "IN_PROGRESS", awaitingExternal: true });
    expect(state.tasks[0]!.timeoutAt).toBeUndefined();
    expect(nextDeadline(state)).toBeUndefined();
    expect(isBlocked(state)).toBe(true);
    // Conductor's WaitTaskMapper: Integer.MAX_VALUE, "waiting forever".
    expect(toTaskView(state.tasks[0]!, state)["callbackAfterSeconds"]).toBe(2_147_483_647);
    const done = complete(state, 0, 5_000, { approved: true });
    expect(done.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { approved: true } });
    // Conductor's updateTask sets it to the result's: 0.
    expect(toTaskView(done.tasks[0]!, done)["callbackAfterSeconds"]).toBe(0);
    expect(done.tasks[1]!.status).toBe("IN_PROGRESS");
    const failed = decide(state, { type: "externalUpdate", taskId: state.tasks[0]!.taskId, status: "FAILED", output: {}, reason: "rejected" }, env(5_000)).state;
    expect(failed.status).toBe("FAILED");
  });

  it("a timed WAIT completed early through the API moves on and its timer no longer counts", () => {
    const { state } = started([task("w", "WAIT", { duration: "1h" }), http("after")]);
    const done = complete(state, 0, 2_000, { early: true });
    expect(done.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { early: true }, endTime: 2_000 });
    expect(done.tasks[0]!.timeoutAt).toBeUndefined();
    expect(toTaskView(state.tasks[0]!, state)["callbackAfterSeconds"]).toBe(3_600);
    expect(toTaskView(done.tasks[0]!, done)["callbackAfterSeconds"]).toBe(0);
    const later = decide(done, { type: "tick", liveTaskIds: new Set() }, env(1_000 + 3_600_000)).state;
    expect(later.tasks[0]).toEqual(done.tasks[0]);
  });

  it("its time runs on while the workflow is paused, as a webhook's timeout does; the workflow moves on when resumed", () => {
    const { state } = started([task("w", "WAIT", { duration: "10s" }), task("gate", "WAIT")]);
    const paused = decide(state, { type: "pause" }, env(2_000)).state;
    const woken = decide(paused, { type: "tick", liveTaskIds: new Set() }, env(11_000)).state;
    expect(woken.status).toBe("PAUSED");
    expect(woken.tasks.map((t) => `${t.referenceTaskName}:${t.status}`)).toEqual(["w:COMPLETED"]);
    const resumed = decide(woken, { type: "resume" }, env(12_000)).state;
    expect(resumed.tasks.map((t) => `${t.referenceTaskName}:${t.status}`)).toEqual(["w:COMPLETED", "gate:IN_PROGRESS"]);
  });

  it("a completion arriving after its time (the alarm late) finds it completed by its time, and is refused", () => {
    const { state } = started([task("w", "WAIT", { duration: "10s" }), task("gate", "WAIT")]);
    const late = refusal(state, { type: "externalUpdate", taskId: state.tasks[0]!.taskId, status: "COMPLETED", output: { late: true } }, 12_000);
    expect(late).toMatchObject({ kind: "CONFLICT", message: expect.stringContaining("its status is COMPLETED") });
  });

  it("a duration or until from an expression that resolves to garbage fails the task for good, naming the value and the formats", () => {
    const badDuration = started([task("w", "WAIT", { duration: "${workflow.input.delay}" })], { delay: "soon" }).state;
    expect(badDuration.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    expect(badDuration.tasks[0]!.reasonForIncompletion).toMatch(/duration.*"soon".*10s.*1h 30m/);
    expect(badDuration.status).toBe("FAILED");
    const badUntil = started([task("w", "WAIT", { until: "${workflow.input.at}" })], { at: 42 }).state;
    expect(badUntil.tasks[0]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(badUntil.tasks[0]!.reasonForIncompletion).toMatch(/until.*42.*yyyy-MM-dd HH:mm z/);
    const both = started([task("w", "WAIT", { duration: "${workflow.input.d}", until: "${workflow.input.u}" })], { d: "1m", u: "2030-01-01" }).state;
    expect(both.tasks[0]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(both.tasks[0]!.reasonForIncompletion).toMatch(/both duration and until/);
    // An expression that resolves to nothing is not given: the task waits to be completed through the API.
    const absent = started([task("w", "WAIT", { duration: "${workflow.input.delay}" })]).state;
    expect(absent.tasks[0]).toMatchObject({ status: "IN_PROGRESS", awaitingExternal: true });
    expect(absent.tasks[0]!.timeoutAt).toBeUndefined();
  });

  it("a blank duration or until, written or resolved, is not given (Conductor's Wait and WaitTaskMapper read it so): the other one is used, or none", () => {
    const untimed = started([task("w", "WAIT", { duration: "", until: "  " })]).state;
    expect(untimed.tasks[0]).toMatchObject({ status: "IN_PROGRESS", awaitingExternal: true });
    expect(untimed.tasks[0]!.timeoutAt).toBeUndefined();
    const resolved = started([task("w", "WAIT", { duration: "${workflow.input.d}", until: "${workflow.input.u}" })], { d: "", u: "2030-01-01" }).state;
    expect(resolved.tasks[0]).toMatchObject({ status: "IN_PROGRESS", timeoutAt: Date.UTC(2030, 0, 1) });
    const timed = started([task("w", "WAIT", { duration: "10s", until: "" })], {}, 1_000).state;
    expect(timed.tasks[0]).toMatchObject({ status: "IN_PROGRESS", timeoutAt: 11_000 });
  });

  it("an optional WAIT whose input is garbage ends COMPLETED_WITH_ERRORS and the workflow goes on", () => {
    const optional = { ...task("w", "WAIT", { duration: "${workflow.input.delay}" }), optional: true };
    const { state } = started([optional, http("after")], { delay: "soon" });
    expect(state.tasks.map((t) => `${t.referenceTaskName}:${t.status}`)).toEqual(["w:COMPLETED_WITH_ERRORS", "after:IN_PROGRESS"]);
  });
});

describe("SET_VARIABLE", () => {
  it("is registered as the SDK's setVariableTask writes it; an input naming a secret is refused, there or in an inline task definition", () => {
    expect(registrationErrors([task("set", "SET_VARIABLE", { stage: "shipped", count: "${workflow.input.n}" })])).toEqual([]);
    expect(registrationErrors([task("set", "SET_VARIABLE", { token: "${workflow.secrets.api_token}", ok: 1 })])).toEqual([
      expect.stringMatching(/^tasks\[0\]\.inputParameters\.token: .*secrets.*api_token/),
    ]);
    expect(registrationErrors([task("set", "SET_VARIABLE", { note: "key ${workflow.input.x ? workflow.secrets.k : 'none'}" })])).toEqual([
      expect.stringMatching(/^tasks\[0\]\.inputParameters\.note: /),
    ]);
    const inline = { ...task("set", "SET_VARIABLE", { a: 1 }), taskDefinition: { name: "set", inputTemplate: { leak: "${workflow.secrets.k}" } } };
    expect(registrationErrors([inline])).toEqual([expect.stringMatching(/^tasks\[0\]\.taskDefinition\.inputTemplate\.leak: /)]);
  });

  it("merges its resolved input into the workflow variables, key by key, and completes at once with an empty output", () => {
    const tasks = [task("set", "SET_VARIABLE", { stage: "${workflow.input.stage}", limits: { max: 3 } }), task("after", "WAIT", { seen: "${workflow.variables.stage}", kept: "${workflow.variables.owner}" })];
    const { state } = started(tasks, { stage: "shipped" }, 1_000, { variables: { owner: "ops", stage: "new", limits: { min: 1, max: 9 } } });
    expect(state.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: {}, inputData: { stage: "shipped", limits: { max: 3 } }, startTime: 1_000, endTime: 1_000 });
    // Shallow: a given key replaces the whole value of that name; the others stay.
    expect(state.variables).toEqual({ owner: "ops", stage: "shipped", limits: { max: 3 } });
    // The next task, scheduled in the same decision, sees them.
    expect(state.tasks[1]!.inputData).toMatchObject({ seen: "shipped", kept: "ops" });
    expect(toTaskView(state.tasks[0]!, state)).toMatchObject({ taskType: "SET_VARIABLE" });
    // The definition's variables are the start's copy: they do not change.
    expect(state.definition.variables).toEqual({ owner: "ops", stage: "new", limits: { min: 1, max: 9 } });
  });

  it("leaves the workflow's stored updateTime (a search row write) alone: the task's own updateTime shows the change", () => {
    const { state } = started([task("gate", "WAIT"), task("set", "SET_VARIABLE", { stage: "done" }), task("then", "WAIT")]);
    const done = complete(state, 0, 5_000);
    expect(done.variables).toEqual({ stage: "done" });
    expect(done.updateTime).toBe(1_000);
    expect(toWorkflowView(done, false)["updateTime"]).toBe(5_000);
  });

  it("keeps a key such as __proto__ as data", () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as JsonObject;
    const { state } = started([task("set", "SET_VARIABLE", input)]);
    expect(Object.keys(state.variables)).toEqual(["__proto__", "x"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("over MAX_PAYLOAD_BYTES the task fails for good with a clear reason and the variables are unchanged", () => {
    const execution = createExecution({ workflowId: "wf-1", definition: definitionOf([task("set", "SET_VARIABLE", { blob: "${workflow.input.blob}" })], { variables: { kept: "x".repeat(60) } }), input: { blob: "y".repeat(60) } }, 1_000);
    const small = { ...env(1_000), config: { ...env(1_000).config, maxPayloadBytes: 100 } };
    const { state } = decide(execution, { type: "start" }, small);
    expect(state.tasks[0]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(state.tasks[0]!.reasonForIncompletion).toMatch(/variables.*over the limit of 100 bytes \(MAX_PAYLOAD_BYTES\)/);
    expect(state.variables).toEqual({ kept: "x".repeat(60) });
    expect(state.status).toBe("FAILED");
  });

  it("a secret named by a task definition copied in at the start (its inputTemplate) fails the task instead of landing masked in the variables", () => {
    const withTemplate: WorkflowTaskDef = {
      ...task("set", "SET_VARIABLE", { a: 1 }),
      taskDefinition: { name: "set", retryCount: 0, retryLogic: "FIXED", retryDelaySeconds: 0, backoffScaleFactor: 1, timeoutSeconds: 0, timeoutPolicy: "TIME_OUT_WF", responseTimeoutSeconds: 3600, inputTemplate: { token: "${workflow.secrets.k}" } },
    };
    const { state } = started([withTemplate]);
    expect(state.tasks[0]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(state.tasks[0]!.reasonForIncompletion).toMatch(/secret/);
    expect(state.variables).toEqual({});
  });
});

describe("SET_CORRELATION_ID", () => {
  it("sets the workflow's correlation id and completes at once with it as its output; tasks after it read the new id (Conductor's SetCorrelationIdTaskSpec)", () => {
    const tasks = [task("mark", "SET_CORRELATION_ID", { correlationId: "${workflow.input.orderId}" }), http("after")];
    const { state } = started(tasks, { orderId: "order-42" });
    expect(state.tasks[0]).toMatchObject({ taskType: "SET_CORRELATION_ID", status: "COMPLETED", outputData: { correlationId: "order-42" } });
    expect(state.correlationId).toBe("order-42");
    expect(state.tasks[1]!.status).toBe("IN_PROGRESS");
    expect(toWorkflowView(state, false)).toMatchObject({ correlationId: "order-42" });
    expect(registrationErrors([task("mark", "SET_CORRELATION_ID", { correlationId: "${workflow.input.x}" })])).toEqual([]);
  });

  it("fails for good, with Conductor's reason, on a missing, empty or non-string id, and on one a start refuses (longer than it takes, or holding a lone surrogate, which the search index would store as U+FFFD); the id stays", () => {
    for (const given of [undefined, "", 42, { id: 1 }]) {
      const input: JsonObject = given === undefined ? {} : { given };
      const { state } = started([task("mark", "SET_CORRELATION_ID", { correlationId: "${workflow.input.given}" })], input);
      expect(state.tasks[0], JSON.stringify(given)).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "A non-empty String value must be provided for 'correlationId'" });
      expect(state.status).toBe("FAILED");
      expect(state.correlationId).toBeUndefined();
    }
    const long = started([task("mark", "SET_CORRELATION_ID", { correlationId: "x".repeat(513) })]).state;
    expect(long.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("at most 512 characters") });
    const half = started([task("mark", "SET_CORRELATION_ID", { correlationId: "${workflow.input.given}" })], { given: "order-\ud83d" }).state;
    expect(half.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringMatching(/^'correlationId' must not hold a lone surrogate/) });
    expect(half.correlationId).toBeUndefined();
  });
});

describe("TERMINATE", () => {
  const terminate = (inputParameters: JsonObject) => task("stop", "TERMINATE", inputParameters);

  it("is registered as the SDK's terminateTask writes it, with workflowOutput as an object or an expression", () => {
    expect(registrationErrors([terminate({ terminationStatus: "COMPLETED" })])).toEqual([]);
    expect(registrationErrors([terminate({ terminationStatus: "FAILED", terminationReason: "out of stock", workflowOutput: { code: 42 } })])).toEqual([]);
    expect(registrationErrors([task("check", "NOOP", {}), terminate({ terminationStatus: "${workflow.input.status}", workflowOutput: "${check.output}" })])).toEqual([]);
  });

  it("refuses a missing or unknown literal terminationStatus (case matters, as in Conductor), a reason that is not a string, and an optional TERMINATE; takes any workflowOutput, as Conductor", () => {
    expect(registrationErrors([terminate({})])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.terminationStatus: .*required.*COMPLETED, FAILED, TERMINATED/)]);
    expect(registrationErrors([terminate({ terminationStatus: "DONE" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.terminationStatus: .*"DONE"/)]);
    expect(registrationErrors([terminate({ terminationStatus: "failed" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.terminationStatus: /)]);
    expect(registrationErrors([terminate({ terminationStatus: "FAILED", terminationReason: 42 })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.terminationReason: /)]);
    expect(registrationErrors([{ ...terminate({ terminationStatus: "FAILED" }), optional: true }])).toEqual(["tasks[0].optional: a TERMINATE task cannot be optional"]);
    // Its text too, as the common rule now reads `optional` (Jackson's coercion): "true" was stored as true past this check.
    expect(registrationErrors([{ ...terminate({ terminationStatus: "FAILED" }), optional: " True " }])).toEqual(["tasks[0].optional: a TERMINATE task cannot be optional"]);
    // Conductor's own terminate_task_parent_workflow.json writes "some output": the workflow's output is {output: "some output"}.
    expect(registrationErrors([terminate({ terminationStatus: "FAILED", workflowOutput: [1, 2] })])).toEqual([]);
    const literal = started([terminate({ terminationStatus: "COMPLETED", workflowOutput: "some output" })], {}).state;
    expect(literal).toMatchObject({ status: "COMPLETED", output: { output: "some output" } });
  });

  it("COMPLETED: the task completes with workflowOutput as its output, and the workflow completes with it in the same decision; later tasks never run", () => {
    const { state } = started([http("first"), terminate({ terminationStatus: "COMPLETED", terminationReason: "nothing to do", workflowOutput: { result: "${workflow.input.x}" } }), http("never")], { x: 7 }, 1_000, {
      outputParameters: { ignored: true },
    });
    const done = complete(state, 0, 2_000, { a: 1 });
    expect(done.tasks.map((t) => `${t.referenceTaskName}:${t.taskType}:${t.status}`)).toEqual(["first:HTTP:COMPLETED", "stop:TERMINATE:COMPLETED"]);
    expect(done.tasks[1]!.outputData).toEqual({ result: 7 });
    expect(done).toMatchObject({ status: "COMPLETED", output: { result: 7 }, endTime: 2_000 });
    // Conductor keeps the reason on a workflow its TERMINATE completed, too.
    expect(done.reasonForIncompletion).toBe("nothing to do");
    expect(toTaskView(done.tasks[1]!, done)).toMatchObject({ taskType: "TERMINATE" });
    const unexplained = started([terminate({ terminationStatus: "COMPLETED" })], {}).state;
    expect(unexplained.reasonForIncompletion).toBe(`Workflow is COMPLETED by TERMINATE task: ${unexplained.tasks[0]!.taskId}`);
  });

  it("without workflowOutput the task's output, and so the workflow's, is empty (Conductor's default); a non-object one is wrapped as {output}", () => {
    expect(started([terminate({ terminationStatus: "COMPLETED" })], {}, 1_000, { outputParameters: { x: 1 } }).state.output).toEqual({});
    const wrapped = started([terminate({ terminationStatus: "COMPLETED", workflowOutput: "${workflow.input.list}" })], { list: [1, 2] }).state;
    expect(wrapped.tasks[0]!.outputData).toEqual({ output: [1, 2] });
    expect(wrapped.output).toEqual({ output: [1, 2] });
  });

  it("FAILED: the workflow fails with terminationReason and workflowOutput, and its failure workflow starts, naming the TERMINATE task", () => {
    const { state, effects } = started([terminate({ terminationStatus: "FAILED", terminationReason: "out of stock", workflowOutput: { code: 42 } }), http("never")], { order: 1 }, 1_000, {
      failureWorkflow: "compensate",
    });
    expect(state.tasks.map((t) => `${t.referenceTaskName}:${t.status}`)).toEqual(["stop:COMPLETED"]);
    expect(state.tasks[0]!.outputData).toEqual({ code: 42 });
    expect(state).toMatchObject({ status: "FAILED", reasonForIncompletion: "out of stock", endTime: 1_000 });
    expect(state.output).toMatchObject({ code: 42 });
    const start = effects.find((effect) => effect.kind === "startFailureWorkflow");
    expect(start).toBeDefined();
    expect(start!.kind === "startFailureWorkflow" && start!.start.input).toMatchObject({ order: 1, reason: "out of stock", failureStatus: "FAILED", failureTaskId: state.tasks[0]!.taskId });
    expect(state.output["conductor.failure_workflow"]).toBe(start!.kind === "startFailureWorkflow" ? start!.start.workflowId : undefined);
  });

  it("TERMINATED: the workflow ends TERMINATED with the reason and output, and no failure workflow starts (as for a termination through the API)", () => {
    const { state, effects } = started([terminate({ terminationStatus: "TERMINATED", terminationReason: "cancelled by rule", workflowOutput: { why: "rule" } })], {}, 1_000, { failureWorkflow: "compensate" });
    expect(state).toMatchObject({ status: "TERMINATED", reasonForIncompletion: "cancelled by rule", output: { why: "rule" } });
    expect(effects.some((effect) => effect.kind === "startFailureWorkflow")).toBe(false);
  });

  it("without terminationReason the reason is Conductor's default naming the status and the task", () => {
    const { state } = started([terminate({ terminationStatus: "FAILED" })]);
    expect(state.reasonForIncompletion).toBe(`Workflow is FAILED by TERMINATE task: ${state.tasks[0]!.taskId}`);
  });

  it("a workflow a TERMINATE ended is not retried past it (Conductor: no failed task to retry): refused, unchanged; restart runs it again", () => {
    for (const terminationStatus of ["FAILED", "TERMINATED"]) {
      const { state } = started([terminate({ terminationStatus }), http("never")]);
      const refused = refusal(state, { type: "retry" }, 2_000);
      expect(refused).toMatchObject({ kind: "CONFLICT", message: expect.stringContaining("ended by its TERMINATE task stop") });
      const restarted = decide(state, { type: "restart" }, env(2_000)).state;
      expect(restarted.status).toBe(terminationStatus);
      expect(restarted.tasks.map((t) => `${t.referenceTaskName}:${t.status}`)).toEqual(["stop:COMPLETED"]);
    }
  });

  it("a terminationStatus from an expression that resolves to something else fails the task for good, naming the value", () => {
    const { state } = started([terminate({ terminationStatus: "${workflow.input.status}" }), http("after")], { status: "DONE" });
    expect(state.tasks[0]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(state.tasks[0]!.reasonForIncompletion).toMatch(/terminationStatus "DONE".*COMPLETED, FAILED or TERMINATED/);
    expect(state.status).toBe("FAILED");
    const optional = started([{ ...terminate({ terminationStatus: "${workflow.input.status}" }), optional: true }, http("after")], { status: "DONE" }).state;
    expect(optional.tasks.map((t) => `${t.referenceTaskName}:${t.status}`)).toEqual(["stop:COMPLETED_WITH_ERRORS", "after:IN_PROGRESS"]);
  });
});

describe("YIELD", () => {
  it("waits, untimed, IN_PROGRESS until resumed from outside; a signal takes the first WAIT or YIELD in task order, never a HUMAN", () => {
    const task = (type: string, ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type, inputParameters: { stage: ref } }) as WorkflowTaskDef;
    const result = validateWorkflowDef({ name: "yields", version: 1, schemaVersion: 2, tasks: [task("YIELD", "first"), task("YIELD", "second")] });
    if (!result.ok) throw new Error(result.errors.map((issue) => `${issue.path}: ${issue.message}`).join("; "));
    const { state, effects } = decide(createExecution({ workflowId: "wf-1", definition: result.value, input: {} }, 1_000), { type: "start" }, env(1_000));
    expect(state.tasks[0]).toMatchObject({ taskType: "YIELD", status: "IN_PROGRESS", awaitingExternal: true, startTime: 1_000, inputData: { stage: "first" } });
    expect(effects.filter((effect) => effect.kind === "dispatch")).toEqual([]);
    expect(nextDeadline(state)).toBeUndefined();
    expect(isBlocked(state)).toBe(true);
    expect(decide(state, { type: "tick", liveTaskIds: new Set() }, env(86_400_000)).state.tasks[0]!.status).toBe("IN_PROGRESS");
    expect(signalledWait(state)?.referenceTaskName).toBe("first");
    const resumed = complete(state, 0, 5_000, { go: true });
    expect(resumed.tasks.map((t) => `${t.referenceTaskName}:${t.status}`)).toEqual(["first:COMPLETED", "second:IN_PROGRESS"]);
    expect(resumed.tasks[0]!.outputData).toEqual({ go: true });
    expect(signalledWait(resumed)?.referenceTaskName).toBe("second");
    const human = { ...resumed, tasks: resumed.tasks.map((t) => (t.referenceTaskName === "second" ? { ...t, taskType: "HUMAN" as const } : t)) };
    expect(signalledWait(human)).toBeUndefined();
  });
});

describe("HUMAN", () => {
  /** The official client's humanTask, as sent over the wire, registered. */
  function registeredHuman(extra: Partial<WorkflowTaskDef> = {}): WorkflowDef {
    const human = { ...humanTask("review", { displayName: "Review the order", assignee: { userType: "EXTERNAL_USER", user: "ada@example.com" } }), ...extra };
    const result = validateWorkflowDef(JSON.parse(JSON.stringify({ name: "approvals", version: 1, schemaVersion: 2, tasks: [human, http("ship")] })));
    if (!result.ok) throw new Error(result.errors.map((issue) => `${issue.path}: ${issue.message}`).join("; "));
    return result.value;
  }

  it("registers as the official client's humanTask writes it and waits, untimed, IN_PROGRESS for a result from outside, its settings kept in its input", () => {
    const execution = createExecution({ workflowId: "wf-1", definition: registeredHuman(), input: {} }, 1_000);
    const { state, effects } = decide(execution, { type: "start" }, env(1_000));
    expect(state.tasks).toHaveLength(1);
    expect(state.tasks[0]).toMatchObject({ taskType: "HUMAN", status: "IN_PROGRESS", awaitingExternal: true, startTime: 1_000 });
    expect(state.tasks[0]!.inputData).toEqual({ __humanTaskDefinition: { displayName: "Review the order", assignee: { userType: "EXTERNAL_USER", user: "ada@example.com" } } });
    expect(effects.filter((effect) => effect.kind === "dispatch")).toEqual([]);
    expect(nextDeadline(state)).toBeUndefined();
    expect(isBlocked(state)).toBe(true);
    // Time alone does not end it.
    expect(decide(state, { type: "tick", liveTaskIds: new Set() }, env(86_400_000)).state.tasks[0]!.status).toBe("IN_PROGRESS");
  });

  it("a person's result ends it: completed, its output goes on to the next task; failed, the workflow fails with the reason given", () => {
    const execution = createExecution({ workflowId: "wf-1", definition: registeredHuman(), input: {} }, 1_000);
    const { state } = decide(execution, { type: "start" }, env(1_000));
    const done = complete(state, 0, 5_000, { approved: true });
    expect(done.tasks.map((t) => `${t.referenceTaskName}:${t.status}`)).toEqual(["review:COMPLETED", "ship:IN_PROGRESS"]);
    expect(done.tasks[0]!.outputData).toEqual({ approved: true });
    const rejected = decide(state, { type: "externalUpdate", taskId: state.tasks[0]!.taskId, status: "FAILED", output: {}, reason: "not in stock" }, env(5_000)).state;
    expect(rejected).toMatchObject({ status: "FAILED", reasonForIncompletion: "Task review failed: not in stock" });
  });

  it("its task definition's timeoutSeconds still applies: unanswered by then, it times out", () => {
    const definition = registeredHuman({ taskDefinition: { name: "review", timeoutSeconds: 60, responseTimeoutSeconds: 60 } as WorkflowTaskDef["taskDefinition"] });
    const { state } = decide(createExecution({ workflowId: "wf-1", definition, input: {} }, 1_000), { type: "start" }, env(1_000));
    expect(nextDeadline(state)).toBe(61_000);
    const late = decide(state, { type: "tick", liveTaskIds: new Set() }, env(61_000)).state;
    expect(late.tasks[0]!.status).toBe("TIMED_OUT");
    expect(late.status).toBe("TIMED_OUT");
  });
});

describe("the official client's builders", () => {
  it("waitTaskDuration, waitTaskUntil, setVariableTask and terminateTask register and run as written", () => {
    const tasks = [
      waitTaskDuration("pause", "10s"),
      // The test clock is in 1970: this moment has passed.
      waitTaskUntil("later", "1970-01-01 00:00 UTC"),
      setVariableTask("mark", { stage: "done" }),
      terminateTask("stop", "COMPLETED", "all done"),
    ];
    // As sent over the wire: JSON drops the builders' undefined fields (optional, terminationReason when absent).
    const result = validateWorkflowDef(JSON.parse(JSON.stringify({ name: "built", version: 1, schemaVersion: 2, tasks })));
    expect(result.ok ? [] : result.errors).toEqual([]);
    if (!result.ok) return;
    const execution = createExecution({ workflowId: "wf-1", definition: result.value, input: {} }, 1_000);
    const waiting = decide(execution, { type: "start" }, env(1_000)).state;
    expect(waiting.tasks[0]).toMatchObject({ taskType: "WAIT", status: "IN_PROGRESS", timeoutAt: 11_000 });
    const done = decide(waiting, { type: "tick", liveTaskIds: new Set() }, env(11_000)).state;
    expect(done.tasks.map((t) => `${t.referenceTaskName}:${t.taskType}:${t.status}`)).toEqual(["pause:WAIT:COMPLETED", "later:WAIT:COMPLETED", "mark:SET_VARIABLE:COMPLETED", "stop:TERMINATE:COMPLETED"]);
    expect(done).toMatchObject({ status: "COMPLETED", variables: { stage: "done" }, output: {} });
  });
});

describe("PULL_WORKFLOW_MESSAGES", () => {
  const message = (n: number) => ({ id: `m${n}`, workflowId: "wf-1", payload: { n }, receivedAt: "2026-12-05T00:00:00.000Z" });

  it("waits, untimed, IN_PROGRESS for its batch; messagesPulled completes it with messages and count, and the workflow goes on", () => {
    const { state } = started([task("pull", "PULL_WORKFLOW_MESSAGES", { batchSize: "${workflow.input.size}" }), task("after", "YIELD")], { size: 250 });
    expect(state.tasks[0]).toMatchObject({ taskType: "PULL_WORKFLOW_MESSAGES", status: "IN_PROGRESS", awaitingExternal: true, inputData: { batchSize: 250 } });
    expect(nextDeadline(state)).toBeUndefined();
    expect(isBlocked(state)).toBe(true);
    // A batchSize over 100 is capped, as Conductor's maxBatchSize caps it.
    expect(messagePulls(state)).toEqual([{ taskId: state.tasks[0]!.taskId, batchSize: 100, blocking: true }]);
    const pulled = decide(state, { type: "messagesPulled", taskId: state.tasks[0]!.taskId, messages: [message(1), message(2)] }, env(2_000)).state;
    expect(pulled.tasks[0]).toMatchObject({ status: "COMPLETED", endTime: 2_000, awaitingExternal: false, outputData: { messages: [message(1), message(2)], count: 2 } });
    expect(pulled.tasks[1]).toMatchObject({ referenceTaskName: "after", status: "IN_PROGRESS" });
    expect(messagePulls(pulled)).toEqual([]);
    // Taken once: a second batch for the same task is refused, changing nothing (the actor then keeps the messages queued).
    expect(refusal(pulled, { type: "messagesPulled", taskId: state.tasks[0]!.taskId, messages: [message(3)] }, 3_000).kind).toBe("CONFLICT");
  });

  it("takes nothing while its workflow is paused", () => {
    const { state } = started([task("pull", "PULL_WORKFLOW_MESSAGES")]);
    const paused = decide(state, { type: "pause" }, env(1_500)).state;
    expect(messagePulls(paused)).toEqual([]);
    expect(refusal(paused, { type: "messagesPulled", taskId: state.tasks[0]!.taskId, messages: [message(1)] }, 2_000).kind).toBe("CONFLICT");
  });

  it("reads batchSize and blocking as Conductor's PullWorkflowMessages does: 1 unless a number of at least 1, at most 100; blocking unless false", () => {
    const inputs: JsonObject[] = [{}, { batchSize: 0 }, { batchSize: -3 }, { batchSize: "many" }, { batchSize: null }, { batchSize: 7.9 }, { batchSize: "12" }, { batchSize: 101 }];
    expect(inputs.map((input) => batchSizeOf(input))).toEqual([1, 1, 1, 1, 1, 7, 12, 100]);
    const flags: JsonObject[] = [{}, { blocking: true }, { blocking: false }, { blocking: "false" }, { blocking: "no" }];
    expect(flags.map((input) => isBlocking(input))).toEqual([true, true, false, false, true]);
  });

  it("registration checks a written batchSize (a whole number of at least 1) and blocking (a boolean); expressions pass", () => {
    const errors = registrationErrors([task("a", "PULL_WORKFLOW_MESSAGES", { batchSize: 1.5 }), task("b", "PULL_WORKFLOW_MESSAGES", { blocking: 1 })]);
    expect(errors.map((error) => error.split(":")[0])).toEqual(["tasks[0].inputParameters.batchSize", "tasks[1].inputParameters.blocking"]);
    expect(registrationErrors([task("a", "PULL_WORKFLOW_MESSAGES", { batchSize: "${workflow.input.n}", blocking: "${workflow.input.wait}" })])).toEqual([]);
  });
});
