import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FIRES_PER_ALARM, ScheduleTrigger, type ArmedFire, type FireRecord } from "../../src/actors/schedule-trigger";
import { WorkflowExecution } from "../../src/actors/workflow-execution";
import type { JsonObject } from "../../src/engine/model";
import { ScheduleRepository, type StoredSchedule } from "../../src/worker/schedules/store";
import { call, createUser, orkes } from "./auth-helpers";
import { ADMIN_KEY, api, apiOk, eventually, expectCountStopsAt10000, gate, getWorkflow, neverTakenSwitch, register, rowCount, waitFor, waitForIndexRow, type Gate } from "./helpers";

const YEARLY = "0 0 0 1 1 ?";
const MINUTE = 60_000;

function trigger(name: string) {
  return env.SCHEDULE_TRIGGER.get(env.SCHEDULE_TRIGGER.idFromName(name));
}

/**
 * Holds the answer of the first read of schedule `name` that the schedule object's `method` makes, after checking it
 * finds the schedule paused, until `held` is released; `reads` counts that method's reads of it. The method reads the
 * schedule before its first await, so the flag set around its call marks its read and lets the routes' own reads pass.
 * `restore` puts both prototypes back and opens the gate.
 */
function holdFirstPausedRead(method: "arm" | "alarm", name: string): { held: Gate; reads: () => number; restore: () => void } {
  return holdFirstRead(method, name, (found) => expect(found?.paused).toBe(true));
}

/** As {@link holdFirstPausedRead}, checking what the held read found with `check`. */
function holdFirstRead(method: "arm" | "alarm", name: string, check: (found: StoredSchedule | undefined) => void): { held: Gate; reads: () => number; restore: () => void } {
  const { get } = ScheduleRepository.prototype;
  const triggerMethods = ScheduleTrigger.prototype as unknown as Record<"arm" | "alarm", (...args: unknown[]) => unknown>;
  const original = triggerMethods[method];
  let inMethod = false;
  let reads = 0;
  const held = gate();
  triggerMethods[method] = function (this: ScheduleTrigger, ...args: unknown[]) {
    inMethod = true;
    try {
      return original.apply(this, args);
    } finally {
      inMethod = false;
    }
  };
  ScheduleRepository.prototype.get = async function (this: ScheduleRepository, read: string) {
    const byMethod = inMethod;
    const found = await get.call(this, read);
    if (byMethod && read === name && ++reads === 1) {
      check(found);
      held.hit();
      await held.released;
    }
    return found;
  };
  return {
    held,
    reads: () => reads,
    restore: () => {
      ScheduleRepository.prototype.get = get;
      triggerMethods[method] = original;
      held.release();
    },
  };
}

/** The fire the schedule's object is armed for and its alarm's time. */
async function armedOf(name: string): Promise<{ armed: ArmedFire | undefined; alarm: number | null }> {
  return runInDurableObject(trigger(name), async (_instance, state) => ({ armed: state.storage.kv.get<ArmedFire>("armed"), alarm: await state.storage.getAlarm() }));
}

/** Runs the object's alarm now (it must be set) and answers what it started. */
async function runAlarm(name: string): Promise<FireRecord[]> {
  expect(await runDurableObjectAlarm(trigger(name)), `an alarm of schedule ${name} is set`).toBe(true);
  return runInDurableObject(trigger(name), (_instance, state) => state.storage.kv.get<FireRecord[]>("lastFires") ?? []);
}

/**
 * Puts the object back as it was armed (a run cut off before it armed the next fire, or a stale alarm). The alarm
 * is set for `alarmAt` when the armed fire has passed, so that workerd does not run it at once by itself.
 */
async function rearm(name: string, armed: ArmedFire, alarmAt = armed.fire): Promise<void> {
  await runInDurableObject(trigger(name), async (_instance, state) => {
    state.storage.kv.put("armed", armed);
    state.storage.kv.delete("lastFires");
    await state.storage.setAlarm(alarmAt);
  });
}

/**
 * Runs the object's alarm now (it must be set), then waits for the alarms a catch-up's further fires are armed for
 * (due at once, which workerd runs by itself: see FIRES_PER_ALARM), and answers every fire those alarms recorded, by
 * time, and what the first alarm started.
 */
async function runCatchUp(name: string): Promise<{ fired: FireRecord[]; first: FireRecord[] }> {
  const first = await runAlarm(name);
  await eventually(async () => (await armedOf(name)).armed?.fire ?? Infinity, (fire) => fire > Date.now(), `the end of schedule ${name}'s catch-up`, 10_000);
  const { results } = await env.DB.prepare("SELECT scheduled_time, execution_time, execution_id, workflow_id FROM schedule_executions WHERE schedule_name = ? ORDER BY scheduled_time")
    .bind(name)
    .all<{ scheduled_time: number; execution_time: number; execution_id: string; workflow_id: string }>();
  const fired = results.map((row) => ({ scheduledTime: row.scheduled_time, executedTime: row.execution_time, executionId: row.execution_id, workflowId: row.workflow_id }));
  return { fired, first };
}

const startedIds = (records: FireRecord[]) => records.map((record) => ("workflowId" in record ? record.workflowId : `refused: ${record.refused}`));

/** A workflow that completes at once with its input as output. */
async function registerQuick(name: string): Promise<void> {
  await register({ name, tasks: [{ name: "sv", taskReferenceName: "sv", type: "SET_VARIABLE", inputParameters: { seen: "${workflow.input.a}" } }] });
}

function schedule(name: string, workflow: string, extra: JsonObject = {}): JsonObject {
  return { name, cronExpression: YEARLY, startWorkflowRequest: { name: workflow, input: { a: 1 }, correlationId: `corr-${name}` }, ...extra };
}

/** The next 1 January 00:00 UTC after now. */
function nextNewYear(): number {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear() + 1, 0, 1);
}

/** Saves schedule `name` of a new workflow `workflow`, then pauses every schedule: `name` is paused, its alarm cleared. */
async function pausedWithEverySchedule(name: string, workflow: string): Promise<void> {
  await registerQuick(workflow);
  await apiOk("POST", "/api/scheduler/schedules", schedule(name, workflow));
  await apiOk("GET", "/api/scheduler/admin/pause");
  expect((await armedOf(name)).alarm).toBeNull();
}

/**
 * Makes the first call arming schedule `name` for a resume throw `error()`: `armResuming`, or `arm` (which armed a
 * resume after its write, before `armResuming`). Answers what puts both back.
 */
function failingResumeArming(name: string, error: () => Error): () => void {
  const methods = ScheduleTrigger.prototype as unknown as Record<string, ((...args: unknown[]) => Promise<unknown>) | undefined>;
  const originals = { arm: methods["arm"], armResuming: methods["armResuming"] };
  let failed = false;
  for (const [method, original] of Object.entries(originals)) {
    methods[method] = async function (this: ScheduleTrigger, ...args: unknown[]) {
      if (args[0] === name && !failed) {
        failed = true;
        throw error();
      }
      return original!.apply(this, args);
    };
  }
  return () => Object.assign(methods, originals);
}

/** Resumes every schedule, after a resume that failed on schedule `name`: it is resumed and armed for its next fire. */
async function expectResumedByTheSameRequestAgain(name: string): Promise<void> {
  await apiOk("GET", "/api/scheduler/admin/resume");
  expect((await apiOk<{ paused: boolean }>("GET", `/api/scheduler/schedules/${name}`)).paused).toBe(false);
  expect((await armedOf(name)).alarm).toBe(nextNewYear());
  await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
}

async function expectRefused(response: Response, status: number, path?: string): Promise<JsonObject> {
  const body = (await response.json()) as JsonObject & { validationErrors?: Array<{ path: string }> };
  expect(response.status, JSON.stringify(body)).toBe(status);
  if (path !== undefined) expect(body.validationErrors?.map((issue) => issue.path)).toContain(path);
  return body;
}

/** Executions of a workflow in the search index. */
async function indexedCount(workflowName: string): Promise<number> {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM executions WHERE workflow_name = ?").bind(workflowName).first<{ n: number }>();
  return row?.n ?? 0;
}

describe("saving and firing a schedule", () => {
  it("saves a schedule, shows it as Orkes does, and its alarm starts the workflow once with the scheduled input", async () => {
    await registerQuick("sched_quick");
    const before = Date.now();
    const saved = await apiOk("POST", "/api/scheduler/schedules", schedule("sched-one", "sched_quick", { description: "yearly", zoneId: "UTC" }));
    const read = await apiOk("GET", "/api/scheduler/schedules/sched-one");
    // A read shows its tags too, as Orkes' reads and listings do.
    expect(read).toEqual({ ...saved, tags: [] });
    await apiOk("PUT", "/api/scheduler/schedules/sched-one/tags", [{ key: "team", value: "ops" }]);
    expect((await apiOk("GET", "/api/scheduler/schedules/sched-one"))["tags"]).toEqual([{ key: "team", value: "ops" }]);
    const listed = await apiOk<JsonObject[]>("GET", "/api/scheduler/schedules?workflowName=sched_quick");
    expect(listed.map((listedSchedule) => [listedSchedule["name"], listedSchedule["tags"]])).toEqual([["sched-one", [{ key: "team", value: "ops" }]]]);
    await apiOk("DELETE", "/api/scheduler/schedules/sched-one/tags", [{ key: "team", value: "ops" }]);
    expect(read).toMatchObject({
      name: "sched-one",
      cronExpression: YEARLY,
      zoneId: "UTC",
      startWorkflowRequest: { name: "sched_quick", input: { a: 1 }, correlationId: "corr-sched-one" },
      paused: false,
      runCatchupScheduleInstances: false,
      description: "yearly",
      createdBy: "admin",
      updatedBy: "admin",
      nextRunTime: nextNewYear(),
    });
    expect(read["createTime"]).toBeGreaterThanOrEqual(before);
    expect(read).not.toHaveProperty("scheduleStartTime");

    const { armed, alarm } = await armedOf("sched-one");
    expect(armed).toEqual({ name: "sched-one", revision: 1, fire: nextNewYear() });
    expect(alarm).toBe(nextNewYear());

    const fired = await runAlarm("sched-one");
    expect(fired).toHaveLength(1);
    const [workflowId] = startedIds(fired);
    const workflow = await waitFor(workflowId!, ["COMPLETED"]);
    // Orkes' and Conductor's fields of a scheduled start: the schedule, the fire, its start, and the fire's record id.
    expect(workflow.input).toEqual({
      a: 1,
      _startedByScheduler: "sched-one",
      _scheduledTime: nextNewYear(),
      _executedTime: expect.any(Number),
      _executionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      _schedulerCron: `${YEARLY} UTC`,
    });
    expect(workflow.input["_executedTime"]).toBeGreaterThanOrEqual(before);
    const [record] = await apiOk<JsonObject[]>("GET", "/api/scheduler/schedules/sched-one/executions");
    expect(record).toMatchObject({ executionId: workflow.input["_executionId"], workflowId });
    expect(workflow["correlationId"]).toBe("corr-sched-one");
    expect(workflow["workflowName"]).toBe("sched_quick");
    // The next fire is a year later.
    const next = new Date(nextNewYear());
    const following = Date.UTC(next.getUTCFullYear() + 1, 0, 1);
    expect((await armedOf("sched-one")).armed?.fire).toBe(following);
    expect((await armedOf("sched-one")).alarm).toBe(following);
  });

  it("runs Conductor OSS's input-param example as written: its INLINE task reads _scheduledTime and _executedTime; a ${…} correlationId or input value is kept as written", async () => {
    // scheduler/examples/input-param-workflow.json and input-param-schedule.json of conductor-oss/conductor, as written.
    await apiOk("POST", "/api/metadata/workflow", {
      name: "input_param_demo_workflow",
      description: "Demonstrates scheduler-injected workflow input. Uses _scheduledTime and _executedTime to compute a 24-hour reporting window ending at the scheduled time.",
      version: 1,
      tasks: [
        {
          name: "compute_report_window",
          taskReferenceName: "compute_report_window",
          type: "INLINE",
          inputParameters: {
            scheduledTime: "${workflow.input._scheduledTime}",
            executionTime: "${workflow.input._executedTime}",
            evaluatorType: "javascript",
            expression:
              "function toISO(ms) { return new Date(ms).toISOString(); } ({ reportWindowStart: toISO($.scheduledTime - 86400000), reportWindowEnd: toISO($.scheduledTime), scheduledAt: toISO($.scheduledTime), triggeredAt: toISO($.executionTime) })",
          },
        },
      ],
      outputParameters: {
        reportWindowStart: "${compute_report_window.output.result.reportWindowStart}",
        reportWindowEnd: "${compute_report_window.output.result.reportWindowEnd}",
        scheduledAt: "${compute_report_window.output.result.scheduledAt}",
        triggeredAt: "${compute_report_window.output.result.triggeredAt}",
      },
      schemaVersion: 2,
      restartable: true,
      ownerEmail: "demo@example.com",
      timeoutPolicy: "ALERT_ONLY",
      timeoutSeconds: 30,
    });
    const example = {
      name: "input-param-demo-schedule",
      cronExpression: "0 * * * * *",
      zoneId: "UTC",
      runCatchupScheduleInstances: false,
      startWorkflowRequest: { name: "input_param_demo_workflow", version: 1, input: { reportOwner: "platform-team", alertThreshold: 100 } },
    };
    await apiOk("POST", "/api/scheduler/schedules", example);
    const [workflowId] = startedIds(await runAlarm("input-param-demo-schedule"));
    const workflow = await waitFor(workflowId!, ["COMPLETED"]);
    const scheduledTime = workflow.input["_scheduledTime"] as number;
    const executedTime = workflow.input["_executedTime"] as number;
    expect(workflow.input).toMatchObject({ reportOwner: "platform-team", alertThreshold: 100, _startedByScheduler: "input-param-demo-schedule", _schedulerCron: "0 * * * * * UTC" });
    expect(scheduledTime % MINUTE).toBe(0);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(workflow.output).toEqual({ reportWindowStart: iso(scheduledTime - 86_400_000), reportWindowEnd: iso(scheduledTime), scheduledAt: iso(scheduledTime), triggeredAt: iso(executedTime) });
    await apiOk("DELETE", "/api/scheduler/schedules/input-param-demo-schedule");

    // The Scheduler API page's correlationId ("daily-report-${scheduledTime}") and an SDK's "${scheduler.scheduledTime}"
    // input: Conductor OSS's scheduler (SchedulerService.swrFrom) copies both as they are, and a start evaluates
    // neither, as its cookbook says ("The correlation ID, if supplied, is literal"); the time is in _scheduledTime.
    const templated = { ...example, name: "templated-demo-schedule", startWorkflowRequest: { ...example.startWorkflowRequest, correlationId: "daily-report-${scheduledTime}", input: { date: "${scheduler.scheduledTime}" } } };
    await apiOk("POST", "/api/scheduler/schedules", templated);
    const [templatedId] = startedIds(await runAlarm("templated-demo-schedule"));
    const started = await getWorkflow(templatedId!);
    expect(started["correlationId"]).toBe("daily-report-${scheduledTime}");
    expect(started.input["date"]).toBe("${scheduler.scheduledTime}");
    await apiOk("DELETE", "/api/scheduler/schedules/templated-demo-schedule");
  });

  it("starts one execution for a fire whose alarm runs twice (cut off before it armed the next fire)", async () => {
    await registerQuick("sched_twice");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-twice", "sched_twice"));
    const { armed } = await armedOf("sched-twice");
    const first = startedIds(await runAlarm("sched-twice"));
    await rearm("sched-twice", armed!);
    const second = startedIds(await runAlarm("sched-twice"));
    expect(first).toHaveLength(1);
    expect(second).toEqual(first);
    await waitForIndexRow(first[0]!, "COMPLETED");
    expect(await indexedCount("sched_twice")).toBe(1);
  });

  it("with catch-up starts each missed fire (at most 10); without, only the oldest (the armed one)", async () => {
    await registerQuick("sched_catchup");
    const thisMinute = () => Math.floor(Date.now() / MINUTE) * MINUTE;
    for (const [name, catchUp, expected] of [["sched-catchup", true, 6], ["sched-nocatchup", false, 1], ["sched-catchup-cap", true, 10]] as const) {
      await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_catchup", { cronExpression: "0 * * * * ?", runCatchupScheduleInstances: catchUp }));
      const { armed } = await armedOf(name);
      // As if nothing had run since the fire armed 5 (or 30) minutes ago.
      const before = thisMinute();
      const missedFrom = before - (name === "sched-catchup-cap" ? 30 : 5) * MINUTE;
      await rearm(name, { ...armed!, fire: missedFrom }, Date.now() + 3_600_000);
      // Five fires per alarm, the rest from the alarms after it.
      const { fired, first } = await runCatchUp(name);
      if (!catchUp) {
        // The fire armed 5 minutes ago starts (its _scheduledTime), as Conductor's scheduler starts the run time it
        // stored however late; the four missed after it do not, and the schedule goes on with the first fire after now.
        expect(fired.filter((record) => record.scheduledTime <= before).map((record) => record.scheduledTime), name).toEqual([missedFrom]);
        expect(first.map((record) => record.scheduledTime), name).toEqual([missedFrom]);
        expect((await getWorkflow(startedIds(first)[0]!)).input["_scheduledTime"]).toBe(missedFrom);
        expect((await armedOf(name)).armed!.fire, name).toBeGreaterThan(before);
        await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
        continue;
      }
      // The latest fire is this minute's: the next one's when the minute turned while the alarms ran, which then adds
      // that fire (to the catch-up, or as the next fire, due at once).
      const last = fired.at(-1)!.scheduledTime;
      expect([before, thisMinute()], name).toContain(last);
      const count = expected + (last - before) / MINUTE;
      expect(fired.map((record) => record.scheduledTime), name).toHaveLength(count);
      expect(new Set(startedIds(fired)).size).toBe(count);
      expect(first.map((record) => record.scheduledTime), name).toEqual(fired.slice(0, Math.min(catchUp ? count : 1, FIRES_PER_ALARM)).map((record) => record.scheduledTime));
      if (name === "sched-catchup") expect(fired[0]!.scheduledTime).toBe(missedFrom);
      const workflow = await getWorkflow(startedIds(fired)[0]!);
      expect(workflow.input["_scheduledTime"]).toBe(fired[0]!.scheduledTime);
      // Started as the schedule's saver (the bootstrap key's "admin").
      expect(workflow["createdBy"]).toBe("admin");
      // Armed again for the next minute; deleted so that no real alarm fires later in this file.
      expect((await armedOf(name)).armed?.fire).toBe(last + MINUTE);
      await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
    }
  });

  it("an alarm that fails (its schedule unreadable) keeps its armed fire and runs again 30 s later", async () => {
    await registerQuick("sched_failing");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-failing", "sched_failing"));
    const { armed } = await armedOf("sched-failing");
    const stored = await env.DB.prepare("SELECT schedule FROM schedules WHERE name = ?").bind("sched-failing").first<{ schedule: string }>();
    await env.DB.prepare("UPDATE schedules SET schedule = '{' WHERE name = ?").bind("sched-failing").run();
    const before = Date.now();
    expect(await runAlarm("sched-failing")).toEqual([]);
    const after = await armedOf("sched-failing");
    expect(after.armed).toEqual(armed);
    expect(after.alarm).toBeGreaterThanOrEqual(before + 30_000);
    expect(after.alarm).toBeLessThan(Date.now() + 31_000);
    // Readable again: the retry starts the armed fire.
    await env.DB.prepare("UPDATE schedules SET schedule = ? WHERE name = ?").bind(stored!.schedule, "sched-failing").run();
    const fired = await runAlarm("sched-failing");
    expect(fired.map((record) => record.scheduledTime)).toEqual([armed!.fire]);
    expect(startedIds(fired)[0]).not.toMatch(/^refused/);
  });

  it("starts nothing outside the schedule's window, and arms nothing after its end", async () => {
    await registerQuick("sched_window");
    const end = nextNewYear() - 1;
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-ended", "sched_window", { scheduleEndTime: end }));
    expect(await armedOf("sched-ended")).toEqual({ armed: undefined, alarm: null });
    expect(await apiOk("GET", "/api/scheduler/schedules/sched-ended")).not.toHaveProperty("nextRunTime");

    const start = nextNewYear() + 1;
    // Given as a string of digits, as Conductor's scheduler examples fill their template (Jackson reads it as a Long).
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-later", "sched_window", { scheduleStartTime: String(start) }));
    expect(await apiOk("GET", "/api/scheduler/schedules/sched-later")).toMatchObject({ scheduleStartTime: start });
    const next = new Date(nextNewYear());
    expect((await armedOf("sched-later")).armed?.fire).toBe(Date.UTC(next.getUTCFullYear() + 1, 0, 1));

    // The last year an alarm can be set in: its fire is armed.
    const last = Date.UTC(2189, 0, 1);
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-last", "sched_window", { scheduleStartTime: last }));
    expect(await armedOf("sched-last")).toEqual({ armed: expect.objectContaining({ fire: last }), alarm: last });
  });

  it("arms nothing for a stored schedule whose next fire is past the latest alarm (saved before such saves were refused)", async () => {
    await registerQuick("sched_far");
    const config = { cronExpression: YEARLY, zoneId: "UTC", startWorkflowRequest: { name: "sched_far", input: {} }, runCatchupScheduleInstances: false, scheduleStartTime: Date.UTC(2500, 0, 1) };
    const write = { name: "sched-far", config, paused: true, startScopes: [], baseUrl: "https://conductor.test", by: "admin", now: Date.now() };
    expect(await new ScheduleRepository(env.DB).save(write, undefined)).toBe(true);
    // setAlarm refused its fire (2500-01-01): the resume answered 500.
    expect((await api("PUT", "/api/scheduler/schedules/sched-far/resume")).status).toBe(200);
    expect(await armedOf("sched-far")).toEqual({ armed: undefined, alarm: null });
    await apiOk("DELETE", "/api/scheduler/schedules/sched-far");
  });
});

describe("pausing, resuming, updating and deleting", () => {
  it("a paused schedule starts nothing, even from an alarm set before the pause; resume arms the next fire from now", async () => {
    await registerQuick("sched_pause");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-pause", "sched_pause"));
    const { armed } = await armedOf("sched-pause");
    expect((await api("PUT", "/api/scheduler/schedules/sched-pause/pause?reason=maintenance")).status).toBe(200);
    expect(await armedOf("sched-pause")).toEqual({ armed: undefined, alarm: null });
    const paused = await apiOk("GET", "/api/scheduler/schedules/sched-pause");
    expect(paused).toMatchObject({ paused: true, pausedReason: "maintenance" });
    expect(paused).not.toHaveProperty("nextRunTime");

    // An alarm the pause did not clear (its call lost) starts nothing and is not set again.
    await rearm("sched-pause", armed!);
    expect(await runAlarm("sched-pause")).toEqual([]);
    expect(await armedOf("sched-pause")).toEqual({ armed: undefined, alarm: null });

    // Orkes' verb is GET: served too.
    expect((await api("GET", "/api/scheduler/schedules/sched-pause/resume")).status).toBe(200);
    const resumed = await apiOk("GET", "/api/scheduler/schedules/sched-pause");
    expect(resumed).toMatchObject({ paused: false, nextRunTime: nextNewYear() });
    expect(resumed).not.toHaveProperty("pausedReason");
    expect((await armedOf("sched-pause")).armed).toEqual({ name: "sched-pause", revision: 3, fire: nextNewYear() });
    expect(startedIds(await runAlarm("sched-pause"))).toHaveLength(1);
    // GET pause is served as well as PUT.
    expect((await api("GET", "/api/scheduler/schedules/sched-pause/pause")).status).toBe(200);
    expect(await armedOf("sched-pause")).toEqual({ armed: undefined, alarm: null });
  });

  it("a saved schedule that was created paused arms nothing until resumed", async () => {
    await registerQuick("sched_created_paused");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-created-paused", "sched_created_paused", { paused: true }));
    expect(await armedOf("sched-created-paused")).toEqual({ armed: undefined, alarm: null });
    expect((await api("PUT", "/api/scheduler/schedules/sched-created-paused/resume")).status).toBe(200);
    expect((await armedOf("sched-created-paused")).alarm).toBe(nextNewYear());
  });

  it("a pause's read of the schedule answered after the resume's arm leaves the resumed schedule armed (a stale read re-arms nothing)", async () => {
    await registerQuick("sched_stale_read");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-stale-read", "sched_stale_read"));
    // D1 answers each read on its own: the pause's arm call read the paused schedule, and its answer is held until the
    // resume (saved after it, its own arm's read started later) has been answered.
    const stale = holdFirstPausedRead("arm", "sched-stale-read");
    try {
      const pause = api("PUT", "/api/scheduler/schedules/sched-stale-read/pause");
      await stale.held.reached;
      expect((await api("PUT", "/api/scheduler/schedules/sched-stale-read/resume")).status).toBe(200);
      stale.held.release();
      expect((await pause).status).toBe(200);
    } finally {
      stale.restore();
    }
    expect(stale.reads()).toBe(2);
    expect((await apiOk("GET", "/api/scheduler/schedules/sched-stale-read"))["paused"]).toBe(false);
    // Armed from the resume (revision 3: created, paused, resumed), not cleared by the pause's older read.
    expect(await armedOf("sched-stale-read")).toEqual({ armed: { name: "sched-stale-read", revision: 3, fire: nextNewYear() }, alarm: nextNewYear() });
  });

  it("an alarm's read of the schedule answered after a resume's arm leaves the resumed schedule armed", async () => {
    await registerQuick("sched_stale_alarm");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-stale-alarm", "sched_stale_alarm"));
    const { armed } = await armedOf("sched-stale-alarm");
    expect((await api("PUT", "/api/scheduler/schedules/sched-stale-alarm/pause")).status).toBe(200);
    // The pause's arm call lost: the object is still armed for revision 1, so its alarm reads the schedule (paused), and
    // that read's answer is held until the resume has been answered.
    await rearm("sched-stale-alarm", armed!, Date.now() + 3_600_000);
    const stale = holdFirstPausedRead("alarm", "sched-stale-alarm");
    try {
      const ran = runDurableObjectAlarm(trigger("sched-stale-alarm"));
      await stale.held.reached;
      expect((await api("PUT", "/api/scheduler/schedules/sched-stale-alarm/resume")).status).toBe(200);
      stale.held.release();
      expect(await ran).toBe(true);
    } finally {
      stale.restore();
    }
    expect(stale.reads()).toBe(1);
    expect(await armedOf("sched-stale-alarm")).toEqual({ armed: { name: "sched-stale-alarm", revision: 3, fire: nextNewYear() }, alarm: nextNewYear() });
  });

  it("an alarm's read of a schedule that no longer parses, answered after a save's arm, leaves the saved schedule armed", async () => {
    await registerQuick("sched_stale_unparsed");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-stale-unparsed", "sched_stale_unparsed"));
    // Revision 1 as D1 holds it no longer parses (a cron or zone this code refuses, saved by another): its alarm disarms.
    const stored = await env.DB.prepare("SELECT schedule FROM schedules WHERE name = ?").bind("sched-stale-unparsed").first<{ schedule: string }>();
    const unparsed = stored!.schedule.replace(YEARLY, "not a cron");
    expect(unparsed).not.toBe(stored!.schedule);
    await env.DB.prepare("UPDATE schedules SET schedule = ? WHERE name = ?").bind(unparsed, "sched-stale-unparsed").run();
    // The alarm's read of revision 1 is held until a save of a cron that parses (revision 2) has armed its fire.
    const stale = holdFirstRead("alarm", "sched-stale-unparsed", (found) => expect(found?.revision).toBe(1));
    try {
      const ran = runDurableObjectAlarm(trigger("sched-stale-unparsed"));
      await stale.held.reached;
      await apiOk("POST", "/api/scheduler/schedules", schedule("sched-stale-unparsed", "sched_stale_unparsed"));
      stale.held.release();
      expect(await ran).toBe(true);
    } finally {
      stale.restore();
    }
    expect(stale.reads()).toBe(1);
    // Armed from the save, not disarmed by the alarm's older read.
    expect(await armedOf("sched-stale-unparsed")).toEqual({ armed: { name: "sched-stale-unparsed", revision: 2, fire: nextNewYear() }, alarm: nextNewYear() });
  });

  it("an update replaces the cron and re-arms; an alarm armed before it starts nothing and re-arms from the update", async () => {
    await registerQuick("sched_update");
    await registerQuick("sched_update_other");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-update", "sched_update"));
    const { armed: old } = await armedOf("sched-update");
    const created = await apiOk("GET", "/api/scheduler/schedules/sched-update");
    const firstOfMonth = (() => {
      const now = new Date();
      return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 6);
    })();
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-update", "sched_update_other", { cronExpression: "0 0 6 1 * ?", startWorkflowRequest: { name: "sched_update_other", input: { a: 2 } } }));
    const updated = await apiOk("GET", "/api/scheduler/schedules/sched-update");
    expect(updated).toMatchObject({ cronExpression: "0 0 6 1 * ?", startWorkflowRequest: { name: "sched_update_other", input: { a: 2 } }, nextRunTime: firstOfMonth, createTime: created["createTime"] });
    expect(updated).not.toHaveProperty("description");
    expect((await armedOf("sched-update")).armed).toEqual({ name: "sched-update", revision: 2, fire: firstOfMonth });

    // The alarm of the first revision (its re-arm lost): nothing starts, the update's fire is armed.
    await rearm("sched-update", old!);
    expect(await runAlarm("sched-update")).toEqual([]);
    expect((await armedOf("sched-update")).armed).toEqual({ name: "sched-update", revision: 2, fire: firstOfMonth });
    const [workflowId] = startedIds(await runAlarm("sched-update"));
    expect((await getWorkflow(workflowId!)).input).toMatchObject({ a: 2, _scheduledTime: firstOfMonth });
    expect((await getWorkflow(workflowId!))["workflowName"]).toBe("sched_update_other");
  });

  it("a save while a fire is due and its alarm has not run keeps that fire (as does an alarm finding the schedule changed)", async () => {
    await registerQuick("sched_late");
    const minute = Math.floor(Date.now() / MINUTE) * MINUTE;
    for (const [name, how] of [["sched-late-save", "save"], ["sched-late-alarm", "alarm"]] as const) {
      await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_late", { cronExpression: "0 * * * * ?" }));
      const { armed } = await armedOf(name);
      // Created an hour ago, so that the fire of a minute ago is one it had (a fire from before its creation was a
      // deleted schedule's: see below).
      await env.DB.prepare("UPDATE schedules SET create_time = create_time - 3600000 WHERE name = ?").bind(name).run();
      // The fire of a minute ago is due, its alarm late (set an hour ahead, so that workerd does not run it by itself).
      const due = minute - MINUTE;
      await rearm(name, { ...armed!, fire: due }, Date.now() + 3_600_000);
      if (how === "save") {
        await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_late", { cronExpression: "0 * * * * ?", description: "edited" }));
      } else {
        // A save whose re-arm was lost: the alarm finds revision 2 in D1.
        await env.DB.prepare("UPDATE schedules SET revision = revision + 1 WHERE name = ?").bind(name).run();
        expect(await runDurableObjectAlarm(trigger(name))).toBe(true);
      }
      // Re-armed for the due fire (in the past), the alarm runs at once by itself: the fire is not dropped. Without
      // catch-up, the oldest of the fires due since then starts: the due one itself.
      const fired = await eventually(() => runInDurableObject(trigger(name), (_instance, state) => state.storage.kv.get<FireRecord[]>("lastFires") ?? []), (records) => records.length > 0, `the due fire of ${name}`);
      expect(fired.map((record) => record.scheduledTime), how).toEqual([due]);
      expect(fired.map((record) => "workflowId" in record)).toEqual([true]);
      // Armed again for the first fire after now (the next minute's; the one after, should the clock have crossed into it).
      const next = (await armedOf(name)).armed;
      expect(next, how).toMatchObject({ name, revision: 2 });
      expect([minute + MINUTE, minute + 2 * MINUTE], how).toContain(next!.fire);
      await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
    }
  });

  it("a delete while a catch-up's fires are starting stops the fires left, and leaves no records behind", async () => {
    await registerQuick("sched_race");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-race", "sched_race", { cronExpression: "0 * * * * ?", runCatchupScheduleInstances: true }));
    const { armed } = await armedOf("sched-race");
    await rearm("sched-race", { ...armed!, fire: Math.floor(Date.now() / MINUTE) * MINUTE - 5 * MINUTE }, Date.now() + 3_600_000);
    const { start } = WorkflowExecution.prototype;
    let starts = 0;
    WorkflowExecution.prototype.start = async function (this: WorkflowExecution, params) {
      const started = await start.call(this, params);
      // The schedule is deleted as its second fire starts, the first four fires still to come after it.
      if (params.definition.name === "sched_race" && ++starts === 2) expect((await api("DELETE", "/api/scheduler/schedules/sched-race")).status).toBe(200);
      return started;
    };
    try {
      expect(await runDurableObjectAlarm(trigger("sched-race"))).toBe(true);
    } finally {
      WorkflowExecution.prototype.start = start;
    }
    expect(starts).toBe(2);
    expect(await armedOf("sched-race")).toEqual({ armed: undefined, alarm: null });
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM schedule_executions WHERE schedule_name = ?").bind("sched-race").first("n")).toBe(0);
  });

  it("an alarm that fails after a save re-armed its object leaves the new alarm as it is (no retry starting the new fire early)", async () => {
    await registerQuick("sched_fail_rearmed");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-fail-rearmed", "sched_fail_rearmed", { cronExpression: "0 * * * * ?" }));
    const { armed } = await armedOf("sched-fail-rearmed");
    await rearm("sched-fail-rearmed", { ...armed!, fire: Math.floor(Date.now() / MINUTE) * MINUTE }, Date.now() + 3_600_000);
    const { start } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.start = async function (this: WorkflowExecution, params) {
      if (params.definition.name !== "sched_fail_rearmed") return start.call(this, params);
      // A save lands while the fire starts (the cron now yearly), and then the start fails.
      await apiOk("POST", "/api/scheduler/schedules", schedule("sched-fail-rearmed", "sched_fail_rearmed"));
      throw new Error("start failed (test)");
    };
    try {
      expect(await runDurableObjectAlarm(trigger("sched-fail-rearmed"))).toBe(true);
    } finally {
      WorkflowExecution.prototype.start = start;
    }
    const after = await armedOf("sched-fail-rearmed");
    expect(after.armed?.fire).toBe(nextNewYear());
    expect(after.alarm).toBe(nextNewYear());
    await apiOk("DELETE", "/api/scheduler/schedules/sched-fail-rearmed");
  });

  it("delete removes the schedule and stops its alarm for good, even one whose disarm was lost", async () => {
    await registerQuick("sched_delete");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-delete", "sched_delete"));
    const { armed } = await armedOf("sched-delete");
    expect((await api("DELETE", "/api/scheduler/schedules/sched-delete")).status).toBe(200);
    expect(await armedOf("sched-delete")).toEqual({ armed: undefined, alarm: null });
    await expectRefused(await api("GET", "/api/scheduler/schedules/sched-delete"), 404);
    // Deleting it again is done already, as Orkes answers (its Java client's tests delete before each test).
    expect((await api("DELETE", "/api/scheduler/schedules/sched-delete")).status).toBe(200);
    await expectRefused(await api("PUT", "/api/scheduler/schedules/sched-delete/pause"), 404);

    await rearm("sched-delete", armed!);
    expect(await runAlarm("sched-delete")).toEqual([]);
    expect(await armedOf("sched-delete")).toEqual({ armed: undefined, alarm: null });
  });

  it("a delete whose call to the object comes in after the schedule was created again leaves the new schedule armed", async () => {
    await registerQuick("sched_recreated");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-recreated", "sched_recreated"));
    // The delete is held between its write and its call to the object until another client has created the schedule
    // again (revision 2, after the deleted one's), and that save's call has armed it.
    const { delete: remove } = ScheduleRepository.prototype;
    const held = gate();
    ScheduleRepository.prototype.delete = async function (this: ScheduleRepository, name: string, revision: number) {
      const done = await remove.call(this, name, revision);
      if (name === "sched-recreated") {
        held.hit();
        await held.released;
      }
      return done;
    };
    try {
      const deleting = api("DELETE", "/api/scheduler/schedules/sched-recreated");
      await held.reached;
      ScheduleRepository.prototype.delete = remove;
      await apiOk("POST", "/api/scheduler/schedules", schedule("sched-recreated", "sched_recreated", { description: "again" }));
      held.release();
      expect((await deleting).status).toBe(200);
    } finally {
      ScheduleRepository.prototype.delete = remove;
      held.release();
    }
    expect((await apiOk("GET", "/api/scheduler/schedules/sched-recreated"))["description"]).toBe("again");
    expect(await armedOf("sched-recreated")).toEqual({ armed: { name: "sched-recreated", revision: 2, fire: nextNewYear() }, alarm: nextNewYear() });
    await apiOk("DELETE", "/api/scheduler/schedules/sched-recreated");
  });

  it("a schedule created again after its deletion goes on from the deleted one's revision: the deleted one's alarm starts nothing and re-arms from the new one", async () => {
    await registerQuick("sched_reborn");
    await registerQuick("sched_reborn_other");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-reborn", "sched_reborn"));
    const { armed: old } = await armedOf("sched-reborn");
    expect(old).toEqual({ name: "sched-reborn", revision: 1, fire: nextNewYear() });
    expect((await api("DELETE", "/api/scheduler/schedules/sched-reborn")).status).toBe(200);
    const firstOfMonth = (() => {
      const now = new Date();
      return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 6);
    })();
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-reborn", "sched_reborn_other", { cronExpression: "0 0 6 1 * ?", startWorkflowRequest: { name: "sched_reborn_other", input: { a: 2 } } }));
    expect((await armedOf("sched-reborn")).armed).toEqual({ name: "sched-reborn", revision: 2, fire: firstOfMonth });

    // The deleted schedule's alarm (its disarm and the new schedule's arm lost): it took the new schedule, at revision 1
    // too, for the one it was armed from, and started its workflow at the deleted one's fire (1 January, 00:00), not one
    // of the new cron's. It starts nothing now, and arms the new schedule's fire.
    await rearm("sched-reborn", old!);
    expect(await runAlarm("sched-reborn")).toEqual([]);
    expect((await armedOf("sched-reborn")).armed).toEqual({ name: "sched-reborn", revision: 2, fire: firstOfMonth });
    // Revisions go on from there through a second deletion too.
    expect((await api("DELETE", "/api/scheduler/schedules/sched-reborn")).status).toBe(200);
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-reborn", "sched_reborn"));
    expect((await armedOf("sched-reborn")).armed).toEqual({ name: "sched-reborn", revision: 3, fire: nextNewYear() });
    await apiOk("DELETE", "/api/scheduler/schedules/sched-reborn");
  });

  it("a schedule created again while the deleted one's fire is due and its alarm has not run takes none of its fires from before its creation", async () => {
    await registerQuick("sched_due_reborn");
    const minute = Math.floor(Date.now() / MINUTE) * MINUTE;
    for (const how of ["save", "alarm"] as const) {
      const name = `sched-due-reborn-${how}`;
      await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_due_reborn", { cronExpression: "0 * * * * ?", runCatchupScheduleInstances: true }));
      const { armed: old } = await armedOf(name);
      // The deleted schedule's fire of five minutes ago is due, its alarm late and its disarm lost (the alarm set an hour
      // ahead, so that workerd does not run it by itself).
      const stale = { ...old!, fire: minute - 5 * MINUTE };
      expect((await api("DELETE", `/api/scheduler/schedules/${name}`)).status).toBe(200);
      const created = Date.now();
      if (how === "save") {
        // The creation's own arm finds the stale fire.
        await rearm(name, stale, Date.now() + 3_600_000);
        await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_due_reborn", { cronExpression: "0 * * * * ?", runCatchupScheduleInstances: true }));
      } else {
        // The creation's arm lost too: the stale alarm runs and finds the new revision.
        await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_due_reborn", { cronExpression: "0 * * * * ?", runCatchupScheduleInstances: true }));
        await rearm(name, stale, Date.now() + 3_600_000);
        expect(await runDurableObjectAlarm(trigger(name))).toBe(true);
      }
      // Re-armed from the stale fire, the new schedule's alarm was due at once and started every minute since (catch-up),
      // all before it existed. Its first fire is the first minute after its creation; nothing started (read together:
      // a run by itself would have recorded its fires as it moved the armed fire on).
      const { armed, fires } = await runInDurableObject(trigger(name), (_instance, state) => ({ armed: state.storage.kv.get<ArmedFire>("armed"), fires: state.storage.kv.get<FireRecord[]>("lastFires") ?? [] }));
      expect(fires, how).toEqual([]);
      expect(armed, how).toMatchObject({ name, revision: 2 });
      // (The minute after the one the arm ran in, should the clock have crossed into the next meanwhile.)
      expect(armed!.fire % MINUTE, how).toBe(0);
      expect(armed!.fire, how).toBeGreaterThan(created);
      expect(armed!.fire, how).toBeLessThanOrEqual(Date.now() + MINUTE);
      await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
    }
  });
});

describe("refused saves change nothing", () => {
  it("refuses a bad cron, an unknown zone or workflow, a window ending before it starts and a bad name with 400 and their paths", async () => {
    await registerQuick("sched_refused");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-refused", "sched_refused", { description: "original" }));
    const original = await apiOk("GET", "/api/scheduler/schedules/sched-refused");
    const armedBefore = await armedOf("sched-refused");
    const rows = await rowCount("schedules");

    const cases: Array<[JsonObject, string]> = [
      [schedule("sched-refused", "sched_refused", { cronExpression: "0 */5 * * *" }), "cronExpression"],
      [schedule("sched-refused", "sched_refused", { cronExpression: "* * * * * *" }), "cronExpression"],
      [schedule("sched-refused", "sched_refused", { cronExpression: "0 0 0 30 2 ?" }), "cronExpression"],
      [schedule("sched-refused", "sched_refused", { zoneId: "Atlantis/Capital" }), "zoneId"],
      [schedule("sched-refused", "sched_no_such_workflow"), "startWorkflowRequest.name"],
      [schedule("sched-refused", "sched_refused", { startWorkflowRequest: { name: "sched_refused", version: 7 } }), "startWorkflowRequest.version"],
      [schedule("sched-refused", "sched_refused", { scheduleStartTime: 2_000_000_000_000, scheduleEndTime: 1_900_000_000_000 }), "scheduleEndTime"],
      [schedule("sched refused", "sched_refused"), "name"],
      [schedule("sched-refused", "sched_refused", { startWorkflowRequest: { name: "sched_refused", idempotencyKey: "fixed" } }), "startWorkflowRequest.idempotencyKey"],
      [schedule("sched-refused", "sched_refused", { startWorkflowRequest: { name: "sched_refused", idempotencyStrategy: "SOMETIMES" } }), "startWorkflowRequest.idempotencyStrategy"],
      [{ name: "sched-refused", cronExpression: YEARLY }, "startWorkflowRequest"],
      // Past the calendar the cron library counts in: once stored, every listing of schedules failed.
      [schedule("sched-refused-late", "sched_refused", { scheduleStartTime: 9_000_000_000_000_000 }), "scheduleStartTime"],
      [schedule("sched-refused-late", "sched_refused", { scheduleStartTime: Date.UTC(10000, 0, 1) }), "scheduleStartTime"],
      [schedule("sched-refused-late", "sched_refused", { scheduleEndTime: 9_000_000_000_000_000 }), "scheduleEndTime"],
      [schedule("sched-refused", "sched_refused", { scheduleEndTime: "next year" }), "scheduleEndTime"],
      // A first fire past 2189, which no alarm can be set for: the save answered 500 after the schedule was written.
      [schedule("sched-refused-far", "sched_refused", { scheduleStartTime: Date.UTC(2500, 0, 1) }), "scheduleStartTime"],
      [schedule("sched-refused-far", "sched_refused", { scheduleStartTime: Date.UTC(2189, 6, 1) }), "scheduleStartTime"],
      [schedule("sched-refused-far", "sched_refused", { scheduleStartTime: Date.UTC(3000, 0, 1), scheduleEndTime: Date.UTC(3001, 0, 1) }), "scheduleStartTime"],
      // The path of the search of schedules: a schedule so named could not be read.
      [schedule("search", "sched_refused"), "name"],
      // Several crons per schedule (Conductor's cronSchedules): refused, not fired on cronExpression alone.
      [schedule("sched-refused", "sched_refused", { cronSchedules: [{ cronExpression: "0 0 12 * * ?", zoneId: "UTC" }] }), "cronSchedules"],
      [{ name: "sched-refused", cronSchedules: [{ cronExpression: YEARLY, zoneId: "UTC" }], startWorkflowRequest: { name: "sched_refused" } }, "cronSchedules"],
      [schedule("sched-refused", "sched_refused", { cronSchedules: "0 0 12 * * ?" }), "cronSchedules"],
    ];
    for (const [body, path] of cases) {
      const refused = await expectRefused(await api("POST", "/api/scheduler/schedules", body), 400, path);
      expect(refused["error"]).toBe("VALIDATION_ERROR");
    }
    expect(await apiOk("GET", "/api/scheduler/schedules/sched-refused")).toEqual(original);
    expect(await armedOf("sched-refused")).toEqual(armedBefore);
    expect(await rowCount("schedules")).toBe(rows);
    const several = await expectRefused(await api("POST", "/api/scheduler/schedules", schedule("sched-refused", "sched_refused", { cronSchedules: [{ cronExpression: YEARLY }] })), 400);
    expect(JSON.stringify(several)).toContain("several crons per schedule are not supported here");
    // An unregistered workflow in Conductor's words, which each fire's start would answer.
    for (const [request, path, said] of [
      [{ name: "sched_no_such_workflow" }, "startWorkflowRequest.name", "No such workflow found by name: sched_no_such_workflow, version: null"],
      [{ name: "sched_refused", version: 7 }, "startWorkflowRequest.version", "No such workflow found by name: sched_refused, version: 7"],
    ] as const) {
      const unknown = await expectRefused(await api("POST", "/api/scheduler/schedules", schedule("sched-refused", "sched_refused", { startWorkflowRequest: request })), 400, path);
      expect((unknown["validationErrors"] as Array<{ message: string }>)[0]?.message).toBe(`${said}; register it first`);
    }
    // The empty list (clients' default) and null say nothing.
    for (const cronSchedules of [[], null]) {
      expect((await api("POST", "/api/scheduler/schedules", schedule("sched-refused", "sched_refused", { description: "original", cronSchedules }))).status).toBe(200);
    }
    expect(await apiOk("GET", "/api/scheduler/schedules/sched-refused")).toMatchObject({ cronExpression: YEARLY, description: "original" });
  });

  it("saves a schedule as the Python client sends it: its default idempotencyStrategy (FAIL) without a key says nothing, and is dropped", async () => {
    await registerQuick("sched_python");
    const body = schedule("sched-python", "sched_python", { startWorkflowRequest: { name: "sched_python", input: { a: 1 }, idempotencyStrategy: "FAIL", idempotencyKey: null, priority: 0 } });
    expect((await api("POST", "/api/scheduler/schedules", body)).status).toBe(200);
    const saved = await apiOk<{ startWorkflowRequest: JsonObject }>("GET", "/api/scheduler/schedules/sched-python");
    expect(saved.startWorkflowRequest).toEqual({ name: "sched_python", input: { a: 1 }, priority: 0 });
    // Nulls, as an exported or re-saved schedule carries them, are fields left out.
    const withNulls = { name: "sched_python", version: null, input: null, correlationId: null, priority: null, taskToDomain: null, workflowDef: null, idempotencyKey: null };
    expect((await api("POST", "/api/scheduler/schedules", schedule("sched-python", "sched_python", { startWorkflowRequest: withNulls }))).status).toBe(200);
    expect((await apiOk<{ startWorkflowRequest: JsonObject }>("GET", "/api/scheduler/schedules/sched-python")).startWorkflowRequest).toEqual({ name: "sched_python", input: {} });
    await apiOk("DELETE", "/api/scheduler/schedules/sched-python");
  });

  it("takes a taskToDomain domain given as a number as its text and a null one as no mapping, as Jackson reads the Map<String, String>", async () => {
    await registerQuick("sched_domain_number");
    const body = schedule("sched-domain-number", "sched_domain_number", { startWorkflowRequest: { name: "sched_domain_number", taskToDomain: { "*": 7, other: null } } });
    expect((await api("POST", "/api/scheduler/schedules", body)).status).toBe(200);
    expect((await apiOk<{ startWorkflowRequest: JsonObject }>("GET", "/api/scheduler/schedules/sched-domain-number")).startWorkflowRequest["taskToDomain"]).toEqual({ "*": "7" });
    await apiOk("DELETE", "/api/scheduler/schedules/sched-domain-number");
  });

  it("takes a correlationId given as a number as its text, as Jackson reads the String field; an object or array stays a 400", async () => {
    await registerQuick("sched_corr_number");
    const body = schedule("sched-corr-number", "sched_corr_number", { startWorkflowRequest: { name: "sched_corr_number", correlationId: 1234 } });
    expect((await api("POST", "/api/scheduler/schedules", body)).status).toBe(200);
    expect((await apiOk<{ startWorkflowRequest: JsonObject }>("GET", "/api/scheduler/schedules/sched-corr-number")).startWorkflowRequest["correlationId"]).toBe("1234");
    for (const correlationId of [{ order: 1 }, [1]]) {
      const refused = schedule("sched-corr-number", "sched_corr_number", { startWorkflowRequest: { name: "sched_corr_number", correlationId } });
      await expectRefused(await api("POST", "/api/scheduler/schedules", refused), 400, "startWorkflowRequest.correlationId");
    }
    expect((await apiOk<{ startWorkflowRequest: JsonObject }>("GET", "/api/scheduler/schedules/sched-corr-number")).startWorkflowRequest["correlationId"]).toBe("1234");
    await apiOk("DELETE", "/api/scheduler/schedules/sched-corr-number");
  });
});

describe("access", () => {
  it("saving, pausing, resuming and deleting need the right to start the workflow (on both for a move); a refusal changes nothing", async () => {
    await registerQuick("sched_acl_mine");
    await registerQuick("sched_acl_theirs");
    const ann = await createUser("sched-ann", {
      directPermissions: [
        { action: "WORKFLOW_ADMIN", scope: "workflow:sched_acl_mine" },
        { action: "WORKFLOW_READ", scope: "workflow:sched_acl_mine" },
      ],
    });
    const asAnn = orkes(ann.token);
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-acl-theirs", "sched_acl_theirs"));
    const theirs = await apiOk("GET", "/api/scheduler/schedules/sched-acl-theirs");
    const theirsArmed = await armedOf("sched-acl-theirs");
    const rows = await rowCount("schedules");

    const denied = await expectRefused(await call("POST", "/api/scheduler/schedules", asAnn, schedule("sched-acl-new", "sched_acl_theirs")), 403);
    expect(denied["message"]).toContain("WORKFLOW_ADMIN on workflow:sched_acl_theirs");
    // Moving someone else's schedule to her own workflow needs the right on its workflow too.
    await expectRefused(await call("POST", "/api/scheduler/schedules", asAnn, schedule("sched-acl-theirs", "sched_acl_mine")), 403);
    for (const [method, path] of [
      ["PUT", "/api/scheduler/schedules/sched-acl-theirs/pause"],
      ["GET", "/api/scheduler/schedules/sched-acl-theirs/pause"],
      ["PUT", "/api/scheduler/schedules/sched-acl-theirs/resume"],
      ["DELETE", "/api/scheduler/schedules/sched-acl-theirs"],
    ] as const) {
      const refusal = await expectRefused(await call(method, path, asAnn), 403);
      // Not told which workflow it starts.
      expect(refusal["message"]).not.toContain("sched_acl_theirs");
    }
    expect(await apiOk("GET", "/api/scheduler/schedules/sched-acl-theirs")).toEqual(theirs);
    expect(await armedOf("sched-acl-theirs")).toEqual(theirsArmed);
    expect(await rowCount("schedules")).toBe(rows);

    // Her own workflow: allowed, recorded as hers, whoever the body says made it (as Orkes sets both from the caller).
    const forged = { createdBy: "mallory", updatedBy: "mallory", createTime: 1, updatedTime: 2 };
    expect((await call("POST", "/api/scheduler/schedules", asAnn, { ...schedule("sched-acl-mine", "sched_acl_mine"), ...forged })).status).toBe(200);
    const mine = await apiOk("GET", "/api/scheduler/schedules/sched-acl-mine");
    expect(mine).toMatchObject({ createdBy: "sched-ann", updatedBy: "sched-ann" });
    expect(mine["createTime"]).toBeGreaterThan(1);
    // Saved again by someone else: still created by her, then, updated by the saver.
    await apiOk("POST", "/api/scheduler/schedules", { ...schedule("sched-acl-mine", "sched_acl_mine"), ...forged });
    expect(await apiOk("GET", "/api/scheduler/schedules/sched-acl-mine")).toMatchObject({ createdBy: "sched-ann", createTime: mine["createTime"], updatedBy: "admin" });
    expect((await call("PUT", "/api/scheduler/schedules/sched-acl-mine/pause", asAnn)).status).toBe(200);
    expect(await apiOk("GET", "/api/scheduler/schedules/sched-acl-mine")).toMatchObject({ createdBy: "sched-ann", updatedBy: "sched-ann" });
    expect((await call("PUT", "/api/scheduler/schedules/sched-acl-mine/resume", asAnn)).status).toBe(200);
    // Not moved to a workflow she may not start.
    await expectRefused(await call("POST", "/api/scheduler/schedules", asAnn, schedule("sched-acl-mine", "sched_acl_theirs")), 403);
    expect((await call("DELETE", "/api/scheduler/schedules/sched-acl-mine", asAnn)).status).toBe(200);
  });

  it("reads show only schedules of workflows the caller may read; an unknown name is 403 to them, 404 to who could read it", async () => {
    await registerQuick("sched_read_a");
    await registerQuick("sched_read_b");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-read-a1", "sched_read_a"));
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-read-a2", "sched_read_a"));
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-read-b1", "sched_read_b"));
    const reader = await createUser("sched-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:sched_read_a" }] });
    const asReader = orkes(reader.token);

    const listed = (await (await call("GET", "/api/scheduler/schedules", asReader)).json()) as JsonObject[];
    expect(listed.map((item) => item["name"])).toEqual(["sched-read-a1", "sched-read-a2"]);
    const filtered = (await (await call("GET", "/api/scheduler/schedules?workflowName=sched_read_b", asReader)).json()) as JsonObject[];
    expect(filtered).toEqual([]);
    const asAdmin = await apiOk<JsonObject[]>("GET", "/api/scheduler/schedules?workflowName=sched_read_b");
    expect(asAdmin.map((item) => item["name"])).toEqual(["sched-read-b1"]);

    expect((await call("GET", "/api/scheduler/schedules/sched-read-a1", asReader)).status).toBe(200);
    await expectRefused(await call("GET", "/api/scheduler/schedules/sched-read-b1", asReader), 403);
    await expectRefused(await call("GET", "/api/scheduler/schedules/sched-read-none", asReader), 403);
    await expectRefused(await api("GET", "/api/scheduler/schedules/sched-read-none"), 404);
    // Deleting one that never was is done (200) only for who could have deleted it.
    await expectRefused(await call("DELETE", "/api/scheduler/schedules/sched-read-none", asReader), 403);
    // Reading is not managing.
    await expectRefused(await call("PUT", "/api/scheduler/schedules/sched-read-a1/pause", asReader), 403);
    expect((await call("GET", "/api/scheduler/schedules", {})).status).toBe(401);
    expect((await call("POST", "/api/scheduler/schedules", {}, schedule("x", "sched_read_a"))).status).toBe(401);
  });

  it("a schedule's own list of fires shows only those of workflows the caller may read (a moved schedule keeps its old workflow's)", async () => {
    await registerQuick("sched_moved_a");
    await registerQuick("sched_moved_b");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-moved", "sched_moved_a", { startWorkflowRequest: { name: "sched_moved_a", input: { secret: "a-only" } } }));
    const before = startedIds(await runAlarm("sched-moved"));
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-moved", "sched_moved_b", { cronExpression: "0 0 9 * * ?" }));
    const after = startedIds(await runAlarm("sched-moved"));
    // Both kept (in fire time order, which the two crons decide: compared as sets).
    const all = await apiOk<JsonObject[]>("GET", "/api/scheduler/schedules/sched-moved/executions");
    expect(all.map((fire) => fire["workflowId"]).sort()).toEqual([...after, ...before].sort());

    // Who may read the schedule now (its workflow now) sees the fires of that workflow, not the start requests and
    // executions of the one before, as search/executions shows them.
    const reader = await createUser("sched-moved-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:sched_moved_b" }] });
    const asReader = orkes(reader.token);
    const seen = (await (await call("GET", "/api/scheduler/schedules/sched-moved/executions", asReader)).json()) as JsonObject[];
    expect(seen.map((fire) => fire["workflowId"])).toEqual(after);
    expect(JSON.stringify(seen)).not.toContain("a-only");
    const searched = (await (await call("GET", `/api/scheduler/search/executions?query=${encodeURIComponent("scheduleName = 'sched-moved'")}`, asReader)).json()) as { results: JsonObject[] };
    expect(searched.results.map((fire) => fire["workflowId"])).toEqual(after);
  });

  it("a scheduled start carries its saver's start rights: it cannot start a child its saver could not", async () => {
    await register({ name: "sched_payroll", tasks: [{ name: "sv", taskReferenceName: "sv", type: "SET_VARIABLE", inputParameters: { x: 1 } }] });
    const mallory = await createUser("sched-mallory", {
      directPermissions: ["WORKFLOW_WRITE", "WORKFLOW_ADMIN", "WORKFLOW_READ"].map((action) => ({ action, scope: "workflow:sched_mine*" })),
    });
    const asMallory = orkes(mallory.token);
    const definition = { name: "sched_mine_parent", version: 1, schemaVersion: 2, ownerEmail: "m@example.com", tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "sched_payroll" } } }] };
    expect((await call("POST", "/api/metadata/workflow?overwrite=true", asMallory, definition)).status).toBe(200);
    expect((await call("POST", "/api/scheduler/schedules", asMallory, schedule("sched-mallory", "sched_mine_parent"))).status).toBe(200);
    const [workflowId] = startedIds(await runAlarm("sched-mallory"));
    const parent = await waitFor(workflowId!, ["FAILED", "COMPLETED"]);
    expect(parent.status).toBe("FAILED");
    expect(parent.tasks[0]!["reasonForIncompletion"]).toContain("may not start workflow sched_payroll");
  });
});

describe("the rest of the scheduler API", () => {
  it("takes a zoneId Java's ZoneId.of takes as a fixed offset (Z, +02:00, -0530, UTC+2, GMT+05:30), keeps it as given and fires at that offset", async () => {
    await registerQuick("sched_offset");
    const saved = await apiOk("POST", "/api/scheduler/schedules", schedule("sched-offset", "sched_offset", { cronExpression: "0 0 9 * * ?", zoneId: "GMT+05:30" }));
    expect(saved["zoneId"]).toBe("GMT+05:30");
    // 09:00 at +05:30 is 03:30 UTC.
    const { alarm } = await armedOf("sched-offset");
    expect(new Date(alarm!).toISOString().slice(11)).toBe("03:30:00.000Z");
    const [fire] = await runAlarm("sched-offset");
    expect((await getWorkflow(startedIds([fire!])[0]!)).input["_schedulerCron"]).toBe("0 0 9 * * ? GMT+05:30");
    await apiOk("DELETE", "/api/scheduler/schedules/sched-offset");
    const start = Date.UTC(2030, 0, 1);
    const nextAt = async (zoneId: string) =>
      (await apiOk<number[]>("GET", `/api/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 0 9 * * ?")}&scheduleStartTime=${start}&limit=1&zoneId=${encodeURIComponent(zoneId)}`)).map((time) => new Date(time).toISOString());
    expect(await nextAt("UTC+2")).toEqual(["2030-01-01T07:00:00.000Z"]);
    expect(await nextAt("-0530")).toEqual(["2030-01-01T14:30:00.000Z"]);
    expect(await nextAt("Z")).toEqual(["2030-01-01T09:00:00.000Z"]);
    await expectRefused(await api("GET", `/api/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 0 9 * * ?")}&zoneId=${encodeURIComponent("+2:00")}`), 400, "zoneId");
    await expectRefused(await api("POST", "/api/scheduler/schedules", schedule("sched-offset-seconds", "sched_offset", { zoneId: "+02:00:30" })), 400, "zoneId");
  });

  it("nextFewSchedules lists the next fires (3 unless limit, at most 5) in the window", async () => {
    const start = Date.UTC(2030, 0, 1);
    const fires = await apiOk<number[]>("GET", `/api/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 0 12 * * MON-FRI")}&scheduleStartTime=${start}`);
    expect(fires.map((fire) => new Date(fire).toISOString())).toEqual(["2030-01-01T12:00:00.000Z", "2030-01-02T12:00:00.000Z", "2030-01-03T12:00:00.000Z"]);
    const bounded = await apiOk<number[]>("GET", `/api/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 0 12 * * MON-FRI")}&scheduleStartTime=${start}&scheduleEndTime=${Date.UTC(2030, 0, 2, 13)}&limit=5`);
    expect(bounded).toHaveLength(2);
    // 0 is no bound, as Orkes' clients send it in a schedule.
    const unbounded = await apiOk<number[]>("GET", `/api/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 0 12 * * MON-FRI")}&scheduleStartTime=${start}&scheduleEndTime=0`);
    expect(unbounded).toEqual(fires);
    // More than 5 is taken as 5, as Orkes caps it (the Python client documents limit=10); a negative one is refused.
    expect(await apiOk<number[]>("GET", `/api/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 0 12 * * MON-FRI")}&scheduleStartTime=${start}&limit=10`)).toHaveLength(5);
    await expectRefused(await api("GET", `/api/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 0 12 * * MON-FRI")}&limit=-1`), 400, "limit");
    await expectRefused(await api("GET", `/api/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 12 * * MON-FRI")}`), 400, "cronExpression");
    await expectRefused(await api("GET", "/api/scheduler/nextFewSchedules"), 400, "cronExpression");
    await expectRefused(await api("GET", `/api/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 0 12 * * MON-FRI")}&scheduleStartTime=9000000000000000`), 400, "scheduleStartTime");
    // The last year it counts in still answers (no fire there for this expression is fine; a 500 is not).
    const last = await apiOk<number[]>("GET", `/api/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 0 12 * * MON-FRI")}&scheduleStartTime=${Date.UTC(9999, 11, 31, 23, 59, 59, 999)}`);
    expect(Array.isArray(last)).toBe(true);
  });

  it("answers 501 for the scheduler endpoints it does not serve, and serves the ones next to them", async () => {
    for (const path of ["/api/scheduler/test/timeout", "/api/scheduler/test/pause"]) {
      const body = await expectRefused(await api("GET", path), 501);
      expect(body["error"]).toBe("NOT_IMPLEMENTED");
    }
    expect((await api("GET", "/api/scheduler/schedules")).status).toBe(200);
  });
});

describe("finding schedules (GET /api/scheduler/schedules/search)", () => {
  type Found = { totalHits: number; results: JsonObject[] };
  const find = (query: string) => apiOk<Found>("GET", `/api/scheduler/schedules/search?${query}`);
  const names = (found: Found) => found.results.map((result) => result["name"]);

  it("finds by workflow, part of the name (case counted), paused and free text, sorts by name and pages, as Conductor's searchSchedules", async () => {
    await registerQuick("sched_find_a");
    await registerQuick("sched_find_b");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-find-Alpha", "sched_find_a"));
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-find-bravo", "sched_find_a", { paused: true }));
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-find-charlie", "sched_find_b"));
    await apiOk("PUT", "/api/scheduler/schedules/sched-find-Alpha/tags", [{ key: "team", value: "ops" }]);

    const all = await find("scheduleName=sched-find");
    expect(all.totalHits).toBe(3);
    expect(names(all)).toEqual(["sched-find-Alpha", "sched-find-bravo", "sched-find-charlie"]);
    // Each as its read shows it, tags included.
    expect(all.results[0]).toEqual(await apiOk("GET", "/api/scheduler/schedules/sched-find-Alpha"));
    expect(all.results[0]!["tags"]).toEqual([{ key: "team", value: "ops" }]);

    // A part of the name, its case counted (Conductor's LIKE and contains); `name` as Orkes' docs and Conductor's UI send it.
    expect(names(await find("scheduleName=find-A"))).toEqual(["sched-find-Alpha"]);
    expect((await find("scheduleName=find-alpha")).totalHits).toBe(0);
    expect(names(await find("name=find-char"))).toEqual(["sched-find-charlie"]);
    expect(names(await find("scheduleName=sched-find&workflowName=sched_find_b"))).toEqual(["sched-find-charlie"]);
    expect((await find("workflowName=sched_find")).totalHits).toBe(0);
    expect(names(await find("scheduleName=sched-find&paused=true"))).toEqual(["sched-find-bravo"]);
    expect(names(await find("scheduleName=sched-find&paused=false"))).toEqual(["sched-find-Alpha", "sched-find-charlie"]);
    expect(names(await find("scheduleName=sched-find&paused=YES"))).toEqual(["sched-find-bravo"]);
    expect(names(await find("scheduleName=sched-find&paused=0"))).toEqual(["sched-find-Alpha", "sched-find-charlie"]);
    // Free text within the schedule and workflow names; `*` is everything.
    expect(names(await find("scheduleName=sched-find&freeText=find_b"))).toEqual(["sched-find-charlie"]);
    expect((await find("scheduleName=sched-find&freeText=*")).totalHits).toBe(3);

    expect(names(await find("scheduleName=sched-find&sort=name:DESC"))).toEqual(["sched-find-charlie", "sched-find-bravo", "sched-find-Alpha"]);
    const page = await find("scheduleName=sched-find&start=1&size=1");
    expect(page.totalHits).toBe(3);
    expect(names(page)).toEqual(["sched-find-bravo"]);

    await expectRefused(await api("GET", "/api/scheduler/schedules/search?paused=maybe"), 400, "paused");
    // The sort fields as Orkes' docs spell them, any case, `startworkflowrequest` by the workflow's name
    // (https://orkes.io/content/reference-docs/api/schedule/search-schedule-definitions).
    expect(names(await find("scheduleName=sched-find&sort=workflowname:DESC,name"))).toEqual(["sched-find-charlie", "sched-find-Alpha", "sched-find-bravo"]);
    expect(names(await find("scheduleName=sched-find&sort=startworkflowrequest:desc|NAME:desc"))).toEqual(["sched-find-charlie", "sched-find-bravo", "sched-find-Alpha"]);
    // Times in another order than the names (as saves made apart would set them), so that each sort shows its field.
    await env.DB.prepare(
      "UPDATE schedules SET create_time = CASE name WHEN 'sched-find-charlie' THEN 1000 WHEN 'sched-find-Alpha' THEN 2000 ELSE 3000 END, updated_time = CASE name WHEN 'sched-find-bravo' THEN 4000 WHEN 'sched-find-charlie' THEN 5000 ELSE 6000 END WHERE name LIKE 'sched-find-%'",
    ).run();
    expect(names(await find("scheduleName=sched-find&sort=createtime,name"))).toEqual(["sched-find-charlie", "sched-find-Alpha", "sched-find-bravo"]);
    // `sort` repeated, as Spring binds Conductor's List<String> sort (and Orkes' docs write it: `sort=name&sort=workflowId:DESC`).
    expect(names(await find("scheduleName=sched-find&sort=workflowName:DESC&sort=name:DESC"))).toEqual(["sched-find-charlie", "sched-find-bravo", "sched-find-Alpha"]);
    expect(names(await find("scheduleName=sched-find&sort=updatedtime,name"))).toEqual(["sched-find-bravo", "sched-find-charlie", "sched-find-Alpha"]);
    expect(names(await find("scheduleName=sched-find&sort=UpdatedTime:DESC"))).toEqual(["sched-find-Alpha", "sched-find-charlie", "sched-find-bravo"]);
    // A field it does not know is refused, where Orkes' docs say it sorts by name: a typo does not pass unnoticed.
    await expectRefused(await api("GET", "/api/scheduler/schedules/search?sort=cronExpression:ASC"), 400, "sort");
    await expectRefused(await api("GET", "/api/scheduler/schedules/search?size=1001"), 400, "size");

    // Only schedules whose workflow the caller may read, counted as such.
    const reader = await createUser("sched-find-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:sched_find_a" }] });
    const asReader = (await (await call("GET", "/api/scheduler/schedules/search?scheduleName=sched-find", orkes(reader.token))).json()) as Found;
    expect(asReader.totalHits).toBe(2);
    expect(names(asReader)).toEqual(["sched-find-Alpha", "sched-find-bravo"]);
    for (const name of ["sched-find-Alpha", "sched-find-bravo", "sched-find-charlie"]) await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
  });
});

describe("what each fire did (GET /api/scheduler/search/executions)", () => {
  type Found = { totalHits: number; results: Array<Record<string, unknown>> };
  const search = (query: string) => apiOk<Found>("GET", `/api/scheduler/search/executions?${query}`);
  const both = encodeURIComponent("scheduleName IN (sched-rec-ok, sched-rec-gone)");

  it("records each fire, the execution it started or why none started, and finds them by query, free text, sort and page", async () => {
    await registerQuick("sched_rec_ok");
    await registerQuick("sched_rec_gone");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-rec-ok", "sched_rec_ok", { zoneId: "Europe/Paris" }));
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-rec-gone", "sched_rec_gone"));
    expect((await search(`query=${both}`)).totalHits).toBe(0);
    const started = await runAlarm("sched-rec-ok");
    // Its workflow's definition deleted: the fire starts nothing, and the record says why.
    await apiOk("DELETE", "/api/metadata/workflow/sched_rec_gone/1");
    const refused = await runAlarm("sched-rec-gone");
    expect(startedIds(refused)[0]).toMatch(/^refused/);

    const found = await search(`query=${both}&sort=scheduleName:ASC`);
    expect(found.totalHits).toBe(2);
    expect(found.results[0]).toMatchObject({
      scheduleName: "sched-rec-gone",
      workflowName: "sched_rec_gone",
      state: "FAILED",
      scheduledTime: refused[0]!.scheduledTime,
      zoneId: "UTC",
      startWorkflowRequest: { name: "sched_rec_gone", input: { a: 1 } },
    });
    expect(String(found.results[0]!["reason"])).toContain("sched_rec_gone");
    expect(found.results[0]).not.toHaveProperty("workflowId");
    expect(found.results[1]).toMatchObject({ scheduleName: "sched-rec-ok", state: "EXECUTED", workflowId: startedIds(started)[0], zoneId: "Europe/Paris" });
    // When it ran (here: the alarm run by the test, ahead of the fire's time).
    expect(found.results[1]!["executionTime"]).toBeLessThanOrEqual(Date.now());
    expect(String(found.results[1]!["executionId"])).toMatch(/^[0-9a-f-]{36}$/);

    const failedOnly = await search(`query=${encodeURIComponent("state = 'FAILED' AND scheduleName IN (sched-rec-ok, sched-rec-gone)")}`);
    expect(failedOnly.results.map((fire) => fire["scheduleName"])).toEqual(["sched-rec-gone"]);
    expect((await search(`freeText=${startedIds(started)[0]}`)).results.map((fire) => fire["scheduleName"])).toEqual(["sched-rec-ok"]);
    const secondPage = await search(`query=${both}&sort=scheduleName:ASC&start=1&size=1`);
    expect(secondPage).toMatchObject({ totalHits: 2, results: [{ scheduleName: "sched-rec-ok" }] });
    // Conductor's UI asks for its three states (POLLED, a fire on its way, is never stored) and sorts on any column.
    const uiStates = await search(`query=${encodeURIComponent("state IN (POLLED,EXECUTED,FAILED) AND scheduleName IN (sched-rec-ok, sched-rec-gone)")}`);
    expect(uiStates.totalHits).toBe(2);
    expect((await search(`query=${encodeURIComponent("state = POLLED")}`)).totalHits).toBe(0);
    // A fire without a reason (or a workflow id) sorts last either way, as the execution search's missing fields.
    expect((await search(`query=${both}&sort=reason:ASC`)).results.map((fire) => fire["scheduleName"])).toEqual(["sched-rec-gone", "sched-rec-ok"]);
    expect((await search(`query=${both}&sort=workflowId:DESC`)).results.map((fire) => fire["scheduleName"])).toEqual(["sched-rec-ok", "sched-rec-gone"]);
    expect((await search(`query=${both}&sort=executionId:ASC`)).results.map((fire) => fire["executionId"])).toEqual(found.results.map((fire) => fire["executionId"]).sort());
    await expectRefused(await api("GET", `/api/scheduler/search/executions?query=${encodeURIComponent("state = DONE")}`), 400, "query");
    // The Java client's search(0, 10, "ASC", "*", ""): a direction alone, by execution time.
    expect((await search(`query=${both}&sort=ASC`)).results.map((fire) => fire["executionId"])).toEqual((await search(`query=${both}&sort=executionTime:ASC`)).results.map((fire) => fire["executionId"]));
    await expectRefused(await api("GET", "/api/scheduler/search/executions?sort=colour"), 400, "sort");
    // Orkes' docs' sort names: name (the schedule's), workflowType and status.
    expect((await search(`query=${both}&sort=name:DESC`)).results.map((fire) => fire["scheduleName"])).toEqual(["sched-rec-ok", "sched-rec-gone"]);
    expect((await search(`query=${both}&sort=workflowType:ASC`)).results.map((fire) => fire["workflowName"])).toEqual(["sched_rec_gone", "sched_rec_ok"]);
    expect((await search(`query=${both}&sort=status:ASC`)).results.map((fire) => fire["state"])).toEqual(["EXECUTED", "FAILED"]);
    // `sort` repeated, as Orkes' page writes it (https://orkes.io/content/reference-docs/api/schedule/search-schedule-executions),
    // each a term (the next test shows the second breaking the first's ties); a bad later one is refused.
    await expectRefused(await api("GET", "/api/scheduler/search/executions?sort=name&sort=colour"), 400, "sort");

    // The same fire run again (an alarm cut off before it armed the next one) finds its execution: still one record.
    const { armed } = await armedOf("sched-rec-ok");
    await rearm("sched-rec-ok", { ...armed!, fire: started[0]!.scheduledTime }, Date.now() + 60 * MINUTE);
    expect(startedIds(await runAlarm("sched-rec-ok"))).toEqual(startedIds(started));
    expect((await search(`query=${encodeURIComponent("scheduleName = 'sched-rec-ok'")}`)).results.map((fire) => fire["workflowId"])).toEqual(startedIds(started));

    // A caller sees the fires of schedules whose workflow he may read, only.
    const reader = await createUser("sched-rec-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:sched_rec_ok" }] });
    const seen = (await (await call("GET", `/api/scheduler/search/executions?query=${both}`, orkes(reader.token))).json()) as Found;
    expect(seen.results.map((fire) => fire["scheduleName"])).toEqual(["sched-rec-ok"]);

    // Deleting a schedule deletes the record of its fires.
    await apiOk("DELETE", "/api/scheduler/schedules/sched-rec-gone");
    expect((await search(`query=${both}`)).results.map((fire) => fire["scheduleName"])).toEqual(["sched-rec-ok"]);
  });

  it("records each fire's executionTime as the _executedTime its workflow started with, also for the fires of one catch-up and a fire started again", async () => {
    await registerQuick("sched_rec_time");
    const name = "sched-rec-time";
    // The schedule ends with this minute's fire: no fire of its own runs by itself while the test reads the records. One
    // ending later had the next minute's fire armed after the catch-up, and when the minute turned before the records
    // were read, that fire's alarm (run by workerd, not by the test) added a fifth record the test had not started.
    const lastFire = Math.floor(Date.now() / MINUTE) * MINUTE;
    await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_rec_time", { cronExpression: "0 * * * * ?", runCatchupScheduleInstances: true, scheduleEndTime: lastFire }));
    expect((await armedOf(name)).armed, "a schedule past its end arms no fire").toBeUndefined();
    // As if nothing had run since the fire armed 3 minutes ago: one alarm starts those 4 fires, one after another.
    const missedFrom = lastFire - 3 * MINUTE;
    const armed: ArmedFire = { name, revision: (await new ScheduleRepository(env.DB).get(name))!.revision, fire: missedFrom };
    await rearm(name, armed, Date.now() + 3_600_000);
    const fired = await runAlarm(name);
    expect(fired.map((record) => record.scheduledTime)).toEqual([0, 1, 2, 3].map((minutes) => missedFrom + minutes * MINUTE));
    expect((await armedOf(name)).armed, "nothing armed after the schedule's last fire").toBeUndefined();
    const query = `query=${encodeURIComponent(`scheduleName = '${name}'`)}&sort=scheduledTime:ASC`;
    const recordedTimes = async () => (await search(query)).results.map((fire) => fire["executionTime"]);
    const inputTimes = await Promise.all(startedIds(fired).map(async (id) => (await getWorkflow(id)).input["_executedTime"]));
    expect(await recordedTimes()).toEqual(inputTimes);
    // `sort` repeated (`sort=name&sort=workflowId:DESC` on Orkes' page): the second term orders the fires the first ties.
    const byNameThenLatest = await search(`query=${encodeURIComponent(`scheduleName = '${name}'`)}&sort=name&sort=scheduledTime:DESC`);
    expect(byNameThenLatest.results.map((fire) => fire["scheduledTime"])).toEqual([3, 2, 1, 0].map((minutes) => missedFrom + minutes * MINUTE));
    // The first fire run again (an alarm cut off before it armed the next one) finds its execution and keeps its time.
    await rearm(name, armed, Date.now() + 3_600_000);
    const again = (await runAlarm(name)).filter((record) => record.scheduledTime === missedFrom);
    expect(startedIds(again)).toEqual([startedIds(fired)[0]]);
    expect((await recordedTimes())[0]).toBe(inputTimes[0]);
    await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
  });

  it("records a fire's executionTime as its workflow's _executedTime also when the alarm was cut off between the start and the record", async () => {
    await registerQuick("sched_rec_cut");
    const name = "sched-rec-cut";
    await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_rec_cut"));
    // The record's write fails once, as if the object were evicted after the start: the retry starts the fire again.
    const databasePrototype = Object.getPrototypeOf(env.DB) as { batch: (this: D1Database, statements: D1PreparedStatement[]) => Promise<unknown> };
    const { batch } = databasePrototype;
    let cut = 0;
    databasePrototype.batch = function (this: D1Database, statements: D1PreparedStatement[]) {
      const sql = statements.map((statement) => String((statement as unknown as { statement?: string }).statement));
      if (cut === 0 && sql.some((text) => text.includes("INSERT INTO schedule_executions"))) {
        cut++;
        return Promise.reject(new Error("evicted before the fire's record was written"));
      }
      return batch.call(this, statements);
    };
    try {
      expect(await runAlarm(name)).toEqual([]);
      expect(cut).toBe(1);
    } finally {
      databasePrototype.batch = batch;
    }
    const again = await runAlarm(name);
    expect(again).toHaveLength(1);
    const [record] = (await search(`query=${encodeURIComponent(`scheduleName = '${name}'`)}`)).results;
    expect(record?.["workflowId"]).toBe(startedIds(again)[0]);
    expect(record?.["executionTime"]).toBe((await getWorkflow(startedIds(again)[0]!)).input["_executedTime"]);
    await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
  });

  it("Conductor OSS's per-schedule routes: its latest fires (limit, 10 by default) and its next fire times (count, 5 by default)", async () => {
    await registerQuick("sched_oss");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-oss", "sched_oss", { cronExpression: "0 0 9 * * ?", zoneId: "UTC" }));
    expect(await apiOk("GET", "/api/scheduler/schedules/sched-oss/executions")).toEqual([]);
    const first = await runAlarm("sched-oss");
    const second = await runAlarm("sched-oss");
    const fires = await apiOk<JsonObject[]>("GET", "/api/scheduler/schedules/sched-oss/executions");
    expect(fires.map((fire) => fire["workflowId"])).toEqual([...startedIds(second), ...startedIds(first)]);
    expect(fires[0]).toMatchObject({ scheduleName: "sched-oss", state: "EXECUTED" });
    expect(await apiOk<JsonObject[]>("GET", "/api/scheduler/schedules/sched-oss/executions?limit=1")).toEqual([fires[0]]);
    const times = await apiOk<number[]>("GET", "/api/scheduler/schedules/sched-oss/next-execution-times");
    expect(times).toHaveLength(5);
    expect(times.every((time, index) => new Date(time).getUTCHours() === 9 && time > Date.now() && (index === 0 || time - times[index - 1]! === 24 * 60 * MINUTE))).toBe(true);
    expect(await apiOk<number[]>("GET", "/api/scheduler/schedules/sched-oss/next-execution-times?count=2")).toEqual(times.slice(0, 2));
    await expectRefused(await api("GET", "/api/scheduler/schedules/sched-oss/next-execution-times?count=0"), 400);
    expect((await api("GET", "/api/scheduler/schedules/no-such-schedule/executions")).status).toBe(404);
    // Only to whoever may read the schedule's workflow.
    const stranger = await createUser("sched-oss-stranger");
    expect((await call("GET", "/api/scheduler/schedules/sched-oss/next-execution-times", orkes(stranger.token))).status).toBe(403);
  });

  it("keeps a large input out of each fire's record (its execution holds it), the rest of the start request in", async () => {
    await registerQuick("sched_rec_large");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-rec-large", "sched_rec_large", { startWorkflowRequest: { name: "sched_rec_large", input: { blob: "x".repeat(100_000) }, correlationId: "large" } }));
    const [workflowId] = startedIds(await runAlarm("sched-rec-large"));
    const [fire] = (await search(`query=${encodeURIComponent("scheduleName = 'sched-rec-large'")}`)).results;
    expect(fire).toMatchObject({ workflowId, startWorkflowRequest: { name: "sched_rec_large", correlationId: "large" } });
    expect(fire!["startWorkflowRequest"]).not.toHaveProperty("input");
    expect((await getWorkflow(workflowId!)).input["blob"]).toHaveLength(100_000);
    await apiOk("DELETE", "/api/scheduler/schedules/sched-rec-large");
  });

  it("counts at most 10,000 fires (or the page's end plus one), as the workflow search counts its hits: the exact count below, pages past it still answer", async () => {
    // 10,050 fires of one workflow (ten schedules' 1,000 and some of an eleventh), written straight into D1; no index
    // on the workflow: the count walks the table until it has counted enough.
    const workflow = "sched_many_fires";
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10050)
       INSERT INTO schedule_executions (execution_id, schedule_name, workflow_name, scheduled_time, execution_time, state, workflow_id, zone_id, start_workflow_request)
       SELECT printf('%s-%05d', ?1, i), printf('%s-%02d', ?1, i / 1000), ?1, 1000 + i, 1000 + i, 'EXECUTED', printf('%s-wf-%05d', ?1, i), 'UTC', '{}' FROM n`,
    )
      .bind(workflow)
      .run();
    // The fires other tests of this file left, which a walk of the table may pass before the 10,000th of these.
    const others = (await env.DB.prepare("SELECT COUNT(*) AS n FROM schedule_executions WHERE workflow_name <> ?").bind(workflow).first<{ n: number }>())!.n;
    try {
      await expectCountStopsAt10000(workflow, others, async (start) => {
        const found = await search(`query=${encodeURIComponent(`workflowName = ${workflow}`)}&start=${start}&size=15`);
        return { totalHits: found.totalHits, ids: found.results.map((fire) => fire["executionId"]) };
      });
    } finally {
      await env.DB.prepare("DELETE FROM schedule_executions WHERE workflow_name = ?").bind(workflow).run();
    }
  });
});

/**
 * Replaces the D1 binding of schedule `name`'s object by one that notes each statement it runs, by alarm (one list per
 * alarm, each a fresh invocation, which Cloudflare counts on its own: D1's 50 queries on Workers Free, workerd none).
 * Only the object's own statements count: those of the executions it starts are made in their objects' invocations.
 * `restore` puts the alarm method back.
 */
async function countAlarmStatements(name: string): Promise<{ alarms: string[][]; restore: () => void }> {
  const alarms: string[][] = [];
  const note = (sql: string) => alarms.at(-1)?.push(sql);
  const unwrapped = new WeakMap<D1PreparedStatement, D1PreparedStatement>();
  const counted = (statement: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get: (target, property) => {
        if (property === "bind") return (...values: unknown[]) => counted(target.bind(...values));
        if (property === "first" || property === "run" || property === "all" || property === "raw") {
          return (...args: unknown[]) => {
            note(String((target as unknown as { statement?: string }).statement));
            return (target[property] as (...passed: unknown[]) => unknown).apply(target, args);
          };
        }
        return Reflect.get(target, property, target);
      },
    });
    unwrapped.set(proxy, statement);
    return proxy;
  };
  const database = new Proxy(env.DB, {
    get: (target, property) => {
      if (property === "prepare") return (sql: string) => counted(target.prepare(sql));
      if (property === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          const own = statements.map((statement) => unwrapped.get(statement) ?? statement);
          for (const statement of own) note(String((statement as unknown as { statement?: string }).statement));
          return target.batch(own);
        };
      }
      return Reflect.get(target, property, target);
    },
  });
  await runInDurableObject(trigger(name), (instance) => {
    const object = instance as unknown as { env: Env };
    object.env = new Proxy(object.env, { get: (target, property) => (property === "DB" ? database : Reflect.get(target, property, target)) });
  });
  const { alarm } = ScheduleTrigger.prototype;
  ScheduleTrigger.prototype.alarm = async function (this: ScheduleTrigger) {
    alarms.push([]);
    return alarm.call(this);
  };
  return { alarms, restore: () => (ScheduleTrigger.prototype.alarm = alarm) };
}

describe("a catch-up within Cloudflare's D1 queries per invocation", () => {
  it("starts at most 5 fires per alarm (FIRES_PER_ALARM), the rest from an alarm due at once: each alarm's D1 statements stay under Free's 50, cold caches and all", async () => {
    const children = Array.from({ length: 16 }, (_, index) => `sched_budget_child_${index}`);
    const schemaBody = { name: "sched_budget_input", data: { type: "object", properties: { a: { type: "number" } }, required: ["a"] } };
    const flow: JsonObject = {
      name: "sched_budget_flow",
      inputSchema: { name: "sched_budget_input", type: "JSON" },
      enforceSchema: true,
      tasks: [
        { name: "sv", taskReferenceName: "sv", type: "SET_VARIABLE", inputParameters: { region: "${workflow.env.sched_budget_region}", tier: "${workflow.env.sched_budget_tier}" } },
        // Children named without a version, each read for its latest at a start; in a case never taken, so none starts.
        neverTakenSwitch(children.map((child) => ({ name: child, taskReferenceName: child, type: "SUB_WORKFLOW", subWorkflowParam: { name: child } }))),
      ],
    };
    // Registered again (each write forgets its cached copy in this isolate): the alarm starts with cold caches, as in
    // a fresh isolate.
    const registerAll = async () => {
      for (const child of children) await register({ name: child, tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP" }] });
      await apiOk("POST", "/api/schema", schemaBody);
      for (const variable of ["sched_budget_region", "sched_budget_tier"]) {
        expect((await call("PUT", `/api/environment/${variable}`, { "x-api-key": ADMIN_KEY, "content-type": "text/plain" }, "eu")).status).toBe(200);
      }
      await register(flow);
    };
    await registerAll();
    const name = "sched-budget";
    await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_budget_flow", { cronExpression: "0 * * * * ?", runCatchupScheduleInstances: true }));
    const { armed } = await armedOf(name);
    // As if nothing had run for 12 minutes: 10 fires due (the catch-up's cap).
    await rearm(name, { ...armed!, fire: Math.floor(Date.now() / MINUTE) * MINUTE - 12 * MINUTE }, Date.now() + 3_600_000);
    await registerAll();
    const counts = await countAlarmStatements(name);
    try {
      expect(await runDurableObjectAlarm(trigger(name))).toBe(true);
      // The fires left start from the alarm armed at once, which workerd runs by itself.
      await eventually(async () => (await armedOf(name)).armed?.fire ?? 0, (fire) => fire > Date.now(), "the catch-up's end", 10_000);
    } finally {
      counts.restore();
    }
    const records = await env.DB.prepare("SELECT workflow_id FROM schedule_executions WHERE schedule_name = ? AND state = 'EXECUTED'").bind(name).all<{ workflow_id: string }>();
    expect(new Set(records.results.map((row) => row.workflow_id)).size).toBeGreaterThanOrEqual(10);
    // 51 statements in one alarm before (a definition read, 16 children's, the schema's, the variables', two per start
    // for its idempotency key and eleven for the records): the 51st would have been refused on Workers Free.
    for (const statements of counts.alarms) expect(statements.length, statements.join("\n")).toBeLessThanOrEqual(50);
    // Here 21 and 17 (36 and 17 while each child's latest version was read by a statement of its own): the second
    // alarm's look-ups were still cached.
    expect(counts.alarms.length).toBeGreaterThanOrEqual(2);
    await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
  });
});

describe("a catch-up split over alarms (FIRES_PER_ALARM), changed between them", () => {
  /**
   * Holds the catch-up's second alarm (the one workerd runs by itself, at once) before it reads its armed fire, until
   * the gate is released. `restore` puts the alarm method back and opens the gate.
   */
  function holdSecondAlarm(): { held: Gate; restore: () => void } {
    const held = gate();
    const { alarm } = ScheduleTrigger.prototype;
    let calls = 0;
    ScheduleTrigger.prototype.alarm = async function (this: ScheduleTrigger) {
      if (++calls === 2) {
        held.hit();
        await held.released;
      }
      return alarm.call(this);
    };
    return { held, restore: () => ((ScheduleTrigger.prototype.alarm = alarm), held.release()) };
  }

  /** Saves schedule `name` every minute with catch-up, armed as if nothing had run for 12 minutes (10 fires due). */
  async function missedTwelveMinutes(name: string, workflow: string): Promise<void> {
    await registerQuick(workflow);
    await apiOk("POST", "/api/scheduler/schedules", schedule(name, workflow, { cronExpression: "0 * * * * ?", runCatchupScheduleInstances: true }));
    const { armed } = await armedOf(name);
    // Created an hour ago, so that the missed fires are its own (a re-arm keeps no fire from before its creation).
    await env.DB.prepare("UPDATE schedules SET create_time = create_time - 3600000 WHERE name = ?").bind(name).run();
    const thisMinute = Math.floor(Date.now() / MINUTE) * MINUTE;
    await rearm(name, { ...armed!, fire: thisMinute - 12 * MINUTE }, Date.now() + 3_600_000);
  }

  const firedTimes = async (name: string) =>
    (await env.DB.prepare("SELECT scheduled_time, workflow_id FROM schedule_executions WHERE schedule_name = ? ORDER BY scheduled_time").bind(name).all<{ scheduled_time: number; workflow_id: string }>()).results;

  it("an update between the two alarms keeps the fires left (each started once), a pause drops them", async () => {
    const name = "sched-split-update";
    await missedTwelveMinutes(name, "sched_split");
    const { held, restore } = holdSecondAlarm();
    let due: number[] = [];
    try {
      expect(await runDurableObjectAlarm(trigger(name))).toBe(true);
      await held.reached;
      // The latest 10 fires, the first alarm's share started: the 5 oldest (as of when it ran: the minute may turn).
      const first = (await firedTimes(name)).map((row) => row.scheduled_time);
      due = Array.from({ length: 10 }, (_, index) => first[0]! + index * MINUTE);
      expect(first).toEqual(due.slice(0, FIRES_PER_ALARM));
      // It armed the 6th, which has passed; an update now re-arms from it, not from now.
      await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_split", { cronExpression: "0 * * * * ?", runCatchupScheduleInstances: true, description: "edited" }));
      expect((await armedOf(name)).armed?.fire).toBe(due[FIRES_PER_ALARM]);
    } finally {
      restore();
    }
    await eventually(async () => (await armedOf(name)).armed?.fire ?? 0, (fire) => fire > Date.now(), "the catch-up's end", 10_000);
    const rows = await firedTimes(name);
    // The minute may have turned meanwhile: its fire is then one more.
    expect(rows.map((row) => row.scheduled_time).slice(0, 10)).toEqual(due);
    expect(new Set(rows.map((row) => row.workflow_id)).size).toBe(rows.length);
    await apiOk("DELETE", `/api/scheduler/schedules/${name}`);

    const paused = "sched-split-pause";
    await missedTwelveMinutes(paused, "sched_split");
    const second = holdSecondAlarm();
    try {
      expect(await runDurableObjectAlarm(trigger(paused))).toBe(true);
      await second.held.reached;
      await apiOk("PUT", `/api/scheduler/schedules/${paused}/pause`);
    } finally {
      second.restore();
    }
    await eventually(async () => (await firedTimes(paused)).length, (count) => count === FIRES_PER_ALARM, "the first alarm's records", 10_000);
    expect(await armedOf(paused)).toEqual({ armed: undefined, alarm: null });
    await apiOk("DELETE", `/api/scheduler/schedules/${paused}`);
  });
});

describe("every schedule at once (Orkes' /api/scheduler/admin/…)", () => {
  it("pauses every schedule and resumes them, re-arms lost alarms (requeue), and is refused to whoever may not manage them all", async () => {
    await registerQuick("sched_all_a");
    await registerQuick("sched_all_b");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-all-a", "sched_all_a"));
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-all-b", "sched_all_b"));
    // Paused on its own before: the resume of every schedule leaves it paused, with its reason.
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-all-own", "sched_all_a"));
    await apiOk("GET", "/api/scheduler/schedules/sched-all-own/pause?reason=maintenance");
    const names = ["sched-all-a", "sched-all-b"];
    const states = async () => Promise.all(names.map(async (name) => ({ paused: (await apiOk<{ paused: boolean }>("GET", `/api/scheduler/schedules/${name}`)).paused, alarm: (await armedOf(name)).alarm })));

    // Someone who may start only one of the workflows may not pause them all: nothing changes.
    const operator = await createUser("sched-all-operator", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:sched_all_a" }, { action: "WORKFLOW_READ", scope: "*" }] });
    expect((await call("GET", "/api/scheduler/admin/pause", orkes(operator.token))).status).toBe(403);
    expect((await states()).map((state) => state.paused)).toEqual([false, false]);

    const paused = await apiOk<{ schedules: number }>("GET", "/api/scheduler/admin/pause");
    expect(paused.schedules).toBeGreaterThanOrEqual(2);
    expect(await states()).toEqual([{ paused: true, alarm: null }, { paused: true, alarm: null }]);
    expect(await apiOk("GET", "/api/scheduler/schedules/sched-all-a")).toMatchObject({ pausedReason: "paused with every schedule" });
    await apiOk("GET", "/api/scheduler/admin/resume");
    const resumed = await states();
    expect(resumed.map((state) => state.paused)).toEqual([false, false]);
    for (const state of resumed) expect(state.alarm).toBe(nextNewYear());
    expect(await apiOk("GET", "/api/scheduler/schedules/sched-all-own")).toMatchObject({ paused: true, pausedReason: "maintenance" });
    expect((await armedOf("sched-all-own")).alarm).toBeNull();

    // An alarm lost (a restored state): requeue arms it again from the schedule.
    await runInDurableObject(trigger("sched-all-b"), async (_instance, state) => {
      state.storage.kv.delete("armed");
      await state.storage.deleteAlarm();
    });
    expect((await armedOf("sched-all-b")).alarm).toBeNull();
    await apiOk("GET", "/api/scheduler/admin/requeue");
    expect((await armedOf("sched-all-b")).alarm).toBe(nextNewYear());
    for (const name of names) await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
  });

  it("past the request's calls to Cloudflare's services, answers how many it paused, and a second call pauses the rest", async () => {
    await registerQuick("sched_all_limit");
    const names = ["sched-all-limit-a", "sched-all-limit-b"];
    for (const name of names) await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_all_limit"));
    const pausedOf = async () => Promise.all(names.map(async (name) => (await apiOk<{ paused: boolean }>("GET", `/api/scheduler/schedules/${name}`)).paused));
    // The runtime refuses the second write (as a deployed Worker past Free's 50 D1 queries does; workerd counts none).
    const { setPaused } = ScheduleRepository.prototype;
    let writes = 0;
    ScheduleRepository.prototype.setPaused = async function (this: ScheduleRepository, ...args: Parameters<typeof setPaused>) {
      if (++writes > 1) throw new Error("Too many API requests by single Worker invocation.");
      return setPaused.apply(this, args);
    };
    try {
      const refused = await expectRefused(await api("GET", "/api/scheduler/admin/pause"), 503);
      expect(refused["message"]).toMatch(/^Acted on 1 schedules, then .* call it again to act on the rest/);
    } finally {
      ScheduleRepository.prototype.setPaused = setPaused;
    }
    // One paused (whichever comes first by name among every schedule), the others as they were.
    const pausedWithAll = () => env.DB.prepare("SELECT COUNT(*) AS n FROM schedules WHERE paused = 1 AND paused_reason = 'paused with every schedule'").first<{ n: number }>();
    expect(await pausedWithAll()).toEqual({ n: 1 });
    await apiOk("GET", "/api/scheduler/admin/pause");
    expect(await pausedOf()).toEqual([true, true]);
    await apiOk("GET", "/api/scheduler/admin/resume");
    expect(await pausedOf()).toEqual([false, false]);
    for (const name of names) await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
  });

  it("past the request's calls at a resume's arming, leaves the schedule paused, which the same request again resumes and arms", async () => {
    const name = "sched-all-unarmed";
    await pausedWithEverySchedule(name, "sched_all_unarmed");
    // The runtime refuses the call to the schedule's object (as a deployed Worker past its calls does; workerd counts
    // none). Only this schedule's: those of other tests the pause of every schedule paused too are resumed as usual.
    const restore = failingResumeArming(name, () => new Error("Too many API requests by single Worker invocation."));
    let refused: JsonObject;
    try {
      refused = await expectRefused(await api("GET", "/api/scheduler/admin/resume"), 503);
    } finally {
      restore();
    }
    expect(refused["message"]).toMatch(/call it again to act on the rest \(those done are skipped\)$/);
    await expectResumedByTheSameRequestAgain(name);
  });

  it("an object reset under a resume's arming leaves the schedule paused, and the same request again resumes and arms it (it was resumed unarmed, and skipped)", async () => {
    const name = "sched-all-reset";
    await pausedWithEverySchedule(name, "sched_all_reset");
    // What workerd throws to the caller of a call an object's reset cut off (see faults.test.ts).
    const restore = failingResumeArming(name, () => Object.assign(new Error("Durable Object reset because its code was updated."), { retryable: true }));
    try {
      await expectRefused(await api("GET", "/api/scheduler/admin/resume"), 503);
    } finally {
      restore();
    }
    await expectResumedByTheSameRequestAgain(name);
  });

  it("D1 refusing a resume's write after its arming leaves the schedule paused, its alarm firing nothing, and the same request again resumes it", async () => {
    const name = "sched-all-refused";
    await pausedWithEverySchedule(name, "sched_all_refused");
    const { setPaused } = ScheduleRepository.prototype;
    ScheduleRepository.prototype.setPaused = async function (this: ScheduleRepository, ...args: Parameters<typeof setPaused>) {
      if (args[0] === name && !args[2]) throw new Error("D1_ERROR: Network connection lost.");
      return setPaused.apply(this, args);
    };
    try {
      expect((await api("GET", "/api/scheduler/admin/resume")).status).toBe(500);
    } finally {
      ScheduleRepository.prototype.setPaused = setPaused;
    }
    // Armed for a schedule D1 holds paused: its alarm reads the pause and clears itself, starting nothing.
    expect((await armedOf(name)).alarm).toBe(nextNewYear());
    expect(await runAlarm(name)).toEqual([]);
    expect((await armedOf(name)).alarm).toBeNull();
    await expectResumedByTheSameRequestAgain(name);
  });

  it("a schedule resumed with every schedule, armed before its resume was written, starts its next fire when it comes (its alarm re-arms it at the resume's revision)", async () => {
    const name = "sched-all-due";
    await registerQuick("sched_all_due");
    // Yearly: no fire of its own comes while the test runs (a minute's could, and re-arm it at the resume's revision).
    await apiOk("POST", "/api/scheduler/schedules", schedule(name, "sched_all_due"));
    await apiOk("GET", "/api/scheduler/admin/pause");
    await apiOk("GET", "/api/scheduler/admin/resume");
    const { armed } = await armedOf(name);
    const resumed = await env.DB.prepare("SELECT revision FROM schedules WHERE name = ?").bind(name).first<{ revision: number }>();
    // Armed again after the resume was written (an arm between the two may have cleared the one ahead of it).
    expect(armed!.revision).toBe(resumed!.revision);
    // As the arm ahead left it, from the row before the resume, when the arm after the write was cut off: the armed fire
    // comes (made due: this year's, in a schedule created the year before; its alarm set an hour ahead, so that workerd
    // does not run it by itself) and its alarm runs.
    await env.DB.prepare("UPDATE schedules SET create_time = create_time - 400 * 86400000 WHERE name = ?").bind(name).run();
    const due = Date.UTC(new Date().getUTCFullYear(), 0, 1);
    await rearm(name, { ...armed!, revision: resumed!.revision - 1, fire: due }, Date.now() + 3_600_000);
    expect(await runDurableObjectAlarm(trigger(name))).toBe(true);
    // Re-armed for that fire at the resume's revision, due, so run at once by itself: the fire starts.
    const fired = await eventually(() => runInDurableObject(trigger(name), (_instance, state) => state.storage.kv.get<FireRecord[]>("lastFires") ?? []), (records) => records.length > 0, `the due fire of ${name}`);
    expect(fired.map((record) => [record.scheduledTime, "workflowId" in record])).toEqual([[due, true]]);
    expect((await armedOf(name)).armed).toMatchObject({ revision: resumed!.revision });
    await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
  });

  it("a schedule whose arm ahead of its resume was cleared by another arm before the resume was written is armed by the resume all the same", async () => {
    const name = "sched-all-raced";
    await pausedWithEverySchedule(name, "sched_all_raced");
    const methods = ScheduleTrigger.prototype as unknown as Record<string, (this: ScheduleTrigger, name: string) => Promise<unknown>>;
    const armResuming = methods["armResuming"]!;
    // Another arm of the schedule (a requeue, its own alarm's re-arm) whose read started after the arm ahead's and
    // before the resume was written: it reads the schedule paused and clears the alarm the arm ahead set.
    methods["armResuming"] = async function (this: ScheduleTrigger, scheduleName: string) {
      const armedAhead = await armResuming.call(this, scheduleName);
      await this.arm(scheduleName);
      return armedAhead;
    };
    try {
      await apiOk("GET", "/api/scheduler/admin/resume");
    } finally {
      methods["armResuming"] = armResuming;
    }
    expect((await apiOk<{ paused: boolean }>("GET", `/api/scheduler/schedules/${name}`)).paused).toBe(false);
    expect((await armedOf(name)).alarm).toBe(nextNewYear());
    await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
  });

  it("an object still on the code before armResuming (a deployment under way) is armed after the resume's write, as that code's router armed it", async () => {
    const name = "sched-all-older";
    await pausedWithEverySchedule(name, "sched_all_older");
    const methods = ScheduleTrigger.prototype as unknown as Record<string, unknown>;
    const { armResuming } = methods;
    // The test pool's wrapper then answers 'does not implement "armResuming"', as workerd does an object without it.
    delete methods["armResuming"];
    try {
      await expectResumedByTheSameRequestAgain(name);
    } finally {
      methods["armResuming"] = armResuming;
    }
  });

  it("pauses and resumes the schedules a bulk request names (SchedulerClient's pauseSchedulers), each as its own route would", async () => {
    await registerQuick("sched_bulk_mine");
    await registerQuick("sched_bulk_theirs");
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-bulk-mine", "sched_bulk_mine"));
    await apiOk("POST", "/api/scheduler/schedules", schedule("sched-bulk-theirs", "sched_bulk_theirs"));
    const names = ["sched-bulk-mine", "sched-bulk-theirs"];
    const states = async () => Promise.all(names.map(async (name) => ({ paused: (await apiOk<{ paused: boolean }>("GET", `/api/scheduler/schedules/${name}`)).paused, alarm: (await armedOf(name)).alarm })));

    // Someone who may manage only one of them: that one is paused, the other refused by name, an unknown one too.
    const bea = await createUser("sched-bulk-bea", { directPermissions: [{ action: "WORKFLOW_ADMIN", scope: "workflow:sched_bulk_mine" }, { action: "WORKFLOW_READ", scope: "workflow:sched_bulk_mine" }] });
    const answer = await call("PUT", "/api/scheduler/bulk/pause", orkes(bea.token), [...names, "sched-bulk-mine", "sched-bulk-none"]);
    expect(answer.status).toBe(200);
    const outcome = (await answer.json()) as { bulkSuccessfulResults: string[]; bulkErrorResults: Record<string, string> };
    expect(outcome.bulkSuccessfulResults).toEqual(["sched-bulk-mine"]);
    expect(Object.keys(outcome.bulkErrorResults)).toEqual(["sched-bulk-theirs", "sched-bulk-none"]);
    expect(outcome.bulkErrorResults["sched-bulk-theirs"]).toContain("WORKFLOW_ADMIN");
    expect(await states()).toEqual([{ paused: true, alarm: null }, { paused: false, alarm: nextNewYear() }]);

    const resumed = await apiOk<{ bulkSuccessfulResults: string[] }>("PUT", "/api/scheduler/bulk/resume", names);
    expect(resumed.bulkSuccessfulResults).toEqual(names);
    expect(await states()).toEqual([{ paused: false, alarm: nextNewYear() }, { paused: false, alarm: nextNewYear() }]);
    // A body that is no list of names changes nothing.
    await expectRefused(await api("PUT", "/api/scheduler/bulk/pause", { names }), 400, "(body)");
    expect((await states()).map((state) => state.paused)).toEqual([false, false]);
    // An empty list does nothing, as Conductor's SchedulerBulkService answers it.
    expect(await apiOk("PUT", "/api/scheduler/bulk/pause", [])).toEqual({ bulkSuccessfulResults: [], bulkErrorResults: {} });
    for (const name of names) await apiOk("DELETE", `/api/scheduler/schedules/${name}`);
  });
});
