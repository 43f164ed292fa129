import { DurableObject } from "cloudflare:workers";
import { dueFires, nextFireAfter, parseCron } from "../worker/schedules/cron";
import { ScheduleRepository, type StoredSchedule } from "../worker/schedules/store";
import { recordFireStatements } from "../worker/schedules/executions";
import { fireWindow, LATEST_FIRE_MILLIS, scheduledInput } from "../worker/schedules/validate";
import { startExecution, type StartOptions } from "../worker/start-execution";
import { retryingExecutionCall } from "../worker/executions";
import { uuidFromDigest } from "../engine/task-id";
import { retryFailureLogged } from "./retry-log";

/** The fire this object's alarm is set for, and the schedule revision it was computed from. */
export interface ArmedFire {
  name: string;
  revision: number;
  /** Epoch ms of the fire (the cron slot), also the alarm's time. */
  fire: number;
}

/**
 * What the last alarm started: each fire's time, when its start was made (the `_executedTime` its workflow's input
 * carries) and the execution it started (or why none started).
 */
export type FireRecord = { scheduledTime: number; executedTime: number; executionId: string } & ({ workflowId: string } | { refused: string });

/**
 * Most fires one alarm starts. Each start is a D1 batch of two statements (its idempotency key) and a record, and the
 * first one's look-ups (its definition, task definitions, pinned children, schemas, environment variables) are D1
 * reads as well, again whenever the isolate's 2 s caches lapse between two starts: a 10-fire catch-up (cold caches)
 * made 35 statements for a definition with an enforced input schema and environment variables, and 51 with 16
 * sub-workflows named without a version, past the 50 D1 queries Workers Free allows one invocation (the rest throw).
 * A catch-up's further fires start from an alarm set at once, a fresh invocation: 5 starts leave about 33 statements
 * for the look-ups.
 */
export const FIRES_PER_ALARM = 5;

/** How long after a failed alarm (D1 or a start unreachable) it runs again, with the same armed fire. */
export const ALARM_RETRY_MS = 30_000;

/** The idempotency key of one fire: a repeated alarm finds the execution its first run started. */
export function fireIdempotencyKey(scheduleName: string, fire: number): string {
  return `schedule:${scheduleName}:${fire}`;
}

/**
 * The id of one fire's record (and its workflow's `_executionId`): made from the schedule name and the fire time, so
 * that every run of the fire names the same one. A UUID in form (version 8: derived, not random).
 */
export async function fireExecutionId(scheduleName: string, fire: number): Promise<string> {
  return uuidFromDigest(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(fireIdempotencyKey(scheduleName, fire)))), 8);
}

/**
 * Fires one schedule (one object per schedule name): its alarm is set for the schedule's next fire. The schedule
 * itself lives in D1 (`schedules`), read afresh on every alarm; this object keeps only the fire it is armed for.
 *
 * Alarms run at least once (a run may be cut off at any await and run again), so a fire's start carries an
 * idempotency key made of the schedule name and the fire time: a repeated run gets the execution the first one
 * started instead of a second. The next fire is armed (state and alarm written together, no await between) only
 * after every due fire has started, so a run cut off before that starts the same fires again, and never skips one.
 * With more due than {@link FIRES_PER_ALARM}, the first of those left is armed instead, once this alarm's share has
 * started: its alarm (due at once) starts it and the fires after it.
 */
export class ScheduleTrigger extends DurableObject<Env> {
  /**
   * Numbers the reads of the schedule this object arms from, in the order they were started: D1's answers may come
   * back in another order (each read is its own request), and one started later has seen every write whose arm call
   * came in before it started.
   */
  #readsStarted = 0;
  /** Alarm runs in a row that failed in this instance (their log lines thinned out by {@link retryFailureLogged}). */
  #failedAlarms = 0;
  /** The number of the latest-started read an arm (or an alarm's re-arm) has acted on; an earlier read's answer is stale. */
  #readActedOn = 0;

  /**
   * (Re)arms the alarm from the schedule as D1 holds it now: the first fire after now, none when it is paused, past
   * its window or gone. Called after every save, pause and resume. When an arm call that came in later has already
   * acted on its own read, this one's read is older and changes nothing: a pause's read answered after the resume's
   * would otherwise clear the alarm of a schedule D1 holds resumed, and it would never fire again.
   */
  async arm(name: string): Promise<ArmedFire | null> {
    return this.#armAsRead(name, (schedule) => schedule);
  }

  /**
   * As {@link arm}, for a schedule about to be resumed: armed as if D1 held it resumed (the first fire after now),
   * before the resume is written. The resume of every schedule arms each one so, then writes its resume: an object
   * reset or a D1 refusal between the two leaves a paused schedule armed (its alarm finds it paused, or at another
   * revision, and re-arms from it: nothing fires), and the same request again finds it paused and does both. Written
   * first, a resume whose arming failed was skipped by the request again (resumed already) and never fired.
   */
  async armResuming(name: string): Promise<ArmedFire | null> {
    return this.#armAsRead(name, (schedule) => ({ ...schedule, paused: false }));
  }

  /** Arms the alarm from schedule `name` as D1 holds it now, seen through `as` (see {@link arm}). */
  async #armAsRead(name: string, as: (schedule: StoredSchedule) => StoredSchedule): Promise<ArmedFire | null> {
    const read = ++this.#readsStarted;
    const schedule = await new ScheduleRepository(this.env.DB).get(name);
    if (!this.#actOn(read)) return this.ctx.storage.kv.get<ArmedFire>("armed") ?? null;
    if (schedule === undefined) {
      await this.disarm();
      return null;
    }
    // Saved (or resumed) since: its next failure is logged as the first, as the operator who changed it would look for.
    this.#failedAlarms = 0;
    return this.#armAfter(as(schedule), this.#rearmFrom(schedule, Date.now()));
  }

  /** Whether read number `read` is the latest started of those acted on so far (then it is acted on). */
  #actOn(read: number): boolean {
    if (read < this.#readActedOn) return false;
    this.#readActedOn = read;
    return true;
  }

  /**
   * Where a re-arm of `schedule` (a save, or an alarm finding the schedule changed since it was armed) looks for the
   * next fire from: now, or just before the fire this object is armed for when that fire is due and has not run yet
   * (its alarm is late, or this runs first): re-armed from now, that fire would be dropped. The schedule as it is now
   * decides what fires from there (the first of its fires not before that one, the catch-up rules included); a fire
   * that did start meanwhile starts nothing twice (its idempotency key). Not from a fire before the schedule was
   * created: that one was armed for a schedule deleted under its name (its disarm lost), and the new schedule, whose
   * fires are those after its creation, would start at once a fire it never had (every one since, with catch-up).
   */
  #rearmFrom(schedule: StoredSchedule, now: number): number {
    const armed = this.ctx.storage.kv.get<ArmedFire>("armed");
    return armed !== undefined && armed.fire <= now && armed.fire > schedule.createTime ? armed.fire - 1 : now;
  }

  /** Stops the alarm for good and forgets everything (the schedule was deleted). */
  async disarm(): Promise<void> {
    this.ctx.storage.kv.delete("lastFires");
    await this.#clearAlarm();
  }

  /** No fire to arm (paused, past its window): no alarm, and no armed fire a stray run could start. */
  async #clearAlarm(): Promise<void> {
    // A fire armed later (the schedule resumed, saved again) logs its failures from the first.
    this.#failedAlarms = 0;
    this.ctx.storage.kv.delete("armed");
    await this.ctx.storage.deleteAlarm();
  }

  override async alarm(): Promise<void> {
    const armed = this.ctx.storage.kv.get<ArmedFire>("armed");
    if (armed === undefined) return;
    try {
      await this.#fire(armed);
      this.#failedAlarms = 0;
    } catch (error) {
      // Caught rather than thrown: workerd gives up on an alarm after a few failed retries, and the schedule would
      // stop for good. The armed fire stays, so the next run starts it (or finds what this run started).
      const attempt = ++this.#failedAlarms;
      if (retryFailureLogged(attempt)) console.error(JSON.stringify({ msg: "schedule alarm failed; will retry", schedule: armed.name, fire: armed.fire, attempt, error: String(error) }));
      // Unless a save, pause or delete re-armed or disarmed the object meanwhile: its alarm (or none) stands, and a retry
      // now would start the newly armed fire early.
      if (this.#stillArmed(armed)) await this.ctx.storage.setAlarm(Date.now() + ALARM_RETRY_MS);
    }
  }

  async #fire(armed: ArmedFire): Promise<void> {
    const read = ++this.#readsStarted;
    const schedule = await new ScheduleRepository(this.env.DB).get(armed.name);
    // Disarmed or re-armed from this read only when no arm call that came in meanwhile acted on a newer one (which
    // armed the object as D1 holds the schedule now).
    if (schedule === undefined) {
      if (this.#actOn(read)) await this.disarm();
      return;
    }
    // Changed since this fire was computed (a save whose arm call was lost, or one racing this run): its fires are
    // those of the schedule as it is now, from now on.
    if (schedule.revision !== armed.revision || schedule.paused) {
      if (this.#actOn(read)) await this.#armAfter(schedule, this.#rearmFrom(schedule, Date.now()));
      return;
    }
    const parsed = parseCron(schedule.config.cronExpression, schedule.config.zoneId);
    if (!parsed.ok) {
      console.error(JSON.stringify({ msg: "stored schedule no longer parses; not armed", schedule: schedule.name, reason: parsed.message }));
      // As above: a save whose arm call came in meanwhile acted on a newer read (a cron that parses), and stands.
      if (this.#actOn(read)) await this.disarm();
      return;
    }
    const now = Date.now();
    const due = dueFires(parsed.schedule, armed.fire, now, schedule.config.runCatchupScheduleInstances, fireWindow(schedule.config));
    const fired: FireRecord[] = [];
    for (const fire of due.slice(0, FIRES_PER_ALARM)) {
      // A delete, pause or save during the starts before: the fires left are no longer the schedule's (a re-arm's
      // alarm starts those the schedule as it is now still has; one already started starts nothing twice).
      if (!this.#stillArmed(armed)) break;
      fired.push(await this.#start(schedule, fire));
    }
    // Before the next fire is armed: a failure here runs these fires again, which finds what they started.
    if (fired.length > 0) await this.env.DB.batch(recordFireStatements(this.env.DB, schedule, fired));
    this.ctx.storage.kv.put("lastFires", fired);
    // Only if nothing re-armed or disarmed this object while the starts were awaited, nor acted on a newer read.
    if (!this.#stillArmed(armed) || !this.#actOn(read)) return;
    // A catch-up's fires past this alarm's share: the first of them armed, due at once (see FIRES_PER_ALARM). That
    // alarm starts it and those after it, as the schedule then has them.
    const left = due[FIRES_PER_ALARM];
    if (left !== undefined) await this.#armFire(schedule, left);
    else await this.#armAfter(schedule, Math.max(now, armed.fire));
  }

  /** Whether the object is still armed for `armed`: no save, pause or delete re-armed or disarmed it since. */
  #stillArmed(armed: ArmedFire): boolean {
    const current = this.ctx.storage.kv.get<ArmedFire>("armed");
    return current?.revision === armed.revision && current.fire === armed.fire;
  }

  /** Starts the schedule's workflow for one fire, as the API would for whoever last saved the schedule. */
  async #start(schedule: StoredSchedule, fire: number): Promise<FireRecord> {
    const { input: _input, ...start } = schedule.config.startWorkflowRequest;
    // The same for every run of this fire: a repeated alarm's start finds the execution whose input names it.
    const executionId = await fireExecutionId(schedule.name, fire);
    // One time for the input and the fire's record, as Conductor's scheduler gives both its record's executionTime.
    const executedTime = Date.now();
    const options: StartOptions = {
      ...start,
      input: scheduledInput(schedule.config, { scheduleName: schedule.name, scheduledTime: fire, executedTime, executionId }),
      idempotencyKey: fireIdempotencyKey(schedule.name, fire),
      idempotencyStrategy: "RETURN_EXISTING",
      baseUrl: schedule.baseUrl,
      startScopes: schedule.startScopes,
      createdBy: schedule.createdBy,
    };
    const outcome = await startExecution(this.env, options);
    if (outcome.ok) {
      // A fire started again (its alarm cut off after the start, before or after the record) finds the execution an
      // earlier run started, whose input holds the time that run made its start: the record takes that one.
      const started = outcome.existing ? ((await this.#executedTimeOf(outcome.workflowId)) ?? executedTime) : executedTime;
      return { scheduledTime: fire, executedTime: started, executionId, workflowId: outcome.workflowId };
    }
    // A refusal is final for this fire (the definition was deleted, the input grew too large): the schedule goes on.
    console.warn(JSON.stringify({ msg: "scheduled start refused", schedule: schedule.name, fire, code: outcome.code, reason: outcome.message }));
    return { scheduledTime: fire, executedTime, executionId, refused: outcome.message };
  }

  /** The `_executedTime` the input of execution `workflowId` holds, or undefined when it holds none (or is gone). */
  async #executedTimeOf(workflowId: string): Promise<number | undefined> {
    const json = await retryingExecutionCall(this.env, workflowId, (stub) => stub.getWorkflowJson(false));
    const time = json === null ? undefined : (JSON.parse(json) as { input?: { _executedTime?: unknown } }).input?._executedTime;
    return typeof time === "number" ? time : undefined;
  }

  /**
   * Arms the first fire strictly after `afterMs`, or clears the alarm when there is none (or it is paused). A fire after
   * {@link LATEST_FIRE_MILLIS} (a schedule saved before saves refused one) is none: `setAlarm` would refuse it, and the
   * arm call fail each time.
   */
  async #armAfter(schedule: StoredSchedule, afterMs: number): Promise<ArmedFire | null> {
    const parsed = schedule.paused ? undefined : parseCron(schedule.config.cronExpression, schedule.config.zoneId);
    const fire = parsed?.ok ? nextFireAfter(parsed.schedule, afterMs, fireWindow(schedule.config)) : undefined;
    if (fire === undefined || fire > LATEST_FIRE_MILLIS) {
      await this.#clearAlarm();
      return null;
    }
    return this.#armFire(schedule, fire);
  }

  /** Arms `fire` of `schedule` (its alarm set for it: at once when it has passed). */
  async #armFire(schedule: StoredSchedule, fire: number): Promise<ArmedFire> {
    const armed: ArmedFire = { name: schedule.name, revision: schedule.revision, fire };
    // No await between the two: committed together, so the state never names a fire the alarm is not set for.
    this.ctx.storage.kv.put("armed", armed);
    await this.ctx.storage.setAlarm(fire);
    return armed;
  }
}
