import type { JsonObject } from "../../engine/model";
import type { ValidationIssue } from "../../engine/validation-issue";
import type { SaveScheduleRequest } from "../schemas";
import type { StartOptions } from "../start-execution";
import { LATEST_ALARM_MILLIS } from "../alarm-limit";
import { cronRefusal, nextFireAfter, parseCron, parseZone, type CronSchedule, type FireWindow } from "./cron";

/** The latest fire a schedule may have: its object arms a Durable Object alarm for each fire (see {@link LATEST_ALARM_MILLIS}). */
export const LATEST_FIRE_MILLIS = LATEST_ALARM_MILLIS;

/** The start request a schedule stores and each fire starts (input plus `_scheduledTime` and `_executedTime`). */
export type ScheduledStart = Pick<StartOptions, "name" | "version" | "input" | "correlationId" | "priority" | "taskToDomain">;

/** A schedule's definition as stored (D1 `schedules.schedule`), normalized: defaults applied, nulls gone. */
export interface ScheduleConfig {
  cronExpression: string;
  zoneId: string;
  startWorkflowRequest: ScheduledStart;
  runCatchupScheduleInstances: boolean;
  scheduleStartTime?: number;
  scheduleEndTime?: number;
  description?: string;
}

/** A request's schedule, normalized, with its parsed cron; or the problems that refuse it (400). */
export type CheckedSchedule = { ok: true; config: ScheduleConfig; paused: boolean; cron: CronSchedule } | { ok: false; issues: ValidationIssue[] };

/** The window of a schedule's fires. */
export function fireWindow(config: ScheduleConfig): FireWindow {
  return { start: config.scheduleStartTime, end: config.scheduleEndTime };
}

/**
 * Checks what the shape alone does not say: the zone is known, the cron expression parses in it, fires at all and
 * not too often, and the window does not end before it starts. Pure (the definition's existence is checked by the
 * route, against D1).
 */
export function checkSchedule(request: SaveScheduleRequest, nowMs: number): CheckedSchedule {
  const issues: ValidationIssue[] = [];
  const zoneId = request.zoneId ?? "UTC";
  let cron: CronSchedule | undefined;
  const zone = parseZone(zoneId);
  if (!zone.ok) {
    issues.push({ path: "zoneId", message: zone.message });
  } else {
    const parsed = parseCron(request.cronExpression, zoneId);
    const refusal = parsed.ok ? cronRefusal(parsed.schedule, nowMs) : parsed.message;
    if (refusal !== undefined) issues.push({ path: "cronExpression", message: refusal });
    else if (parsed.ok) cron = parsed.schedule;
  }
  const { scheduleStartTime: start, scheduleEndTime: end } = request;
  if (start !== undefined && end !== undefined && end < start) issues.push({ path: "scheduleEndTime", message: "must not be before scheduleStartTime" });
  if (cron !== undefined && start !== undefined && firesTooLate(cron, nowMs, { start, end })) {
    issues.push({ path: "scheduleStartTime", message: `must not put the schedule's first fire after ${LATEST_FIRE_MILLIS} (${new Date(LATEST_FIRE_MILLIS).toISOString()}): the alarm that starts a fire takes no later date` });
  }
  if (issues.length > 0 || cron === undefined) return { ok: false, issues };

  const { name, version, input, correlationId, priority, taskToDomain } = request.startWorkflowRequest;
  const startWorkflowRequest: ScheduledStart = { name, input: input ?? {} };
  if (version !== undefined) startWorkflowRequest.version = version;
  if (correlationId !== undefined) startWorkflowRequest.correlationId = correlationId;
  if (priority !== undefined) startWorkflowRequest.priority = priority;
  if (taskToDomain !== undefined) startWorkflowRequest.taskToDomain = taskToDomain;
  const config: ScheduleConfig = {
    cronExpression: request.cronExpression.trim(),
    zoneId,
    startWorkflowRequest,
    runCatchupScheduleInstances: request.runCatchupScheduleInstances ?? false,
  };
  if (start !== undefined) config.scheduleStartTime = start;
  if (end !== undefined) config.scheduleEndTime = end;
  if (request.description !== undefined && request.description !== null) config.description = request.description;
  return { ok: true, config, paused: request.paused ?? false, cron };
}

/**
 * True when a schedule whose window starts at `window.start` would first fire after {@link LATEST_FIRE_MILLIS}, or
 * starts after it (the cron library finds no fire from the year 3000 on): saved, it would arm an alarm workerd
 * refuses, and the save would fail after the schedule was written. A window ending before its first fire arms nothing.
 */
function firesTooLate(cron: CronSchedule, nowMs: number, window: FireWindow): boolean {
  if ((window.start ?? 0) > LATEST_FIRE_MILLIS) return true;
  return (nextFireAfter(cron, nowMs, window) ?? 0) > LATEST_FIRE_MILLIS;
}

/** Which fire a start is: its schedule, its cron slot, when it started, and the id of its record (see executions.ts). */
export interface Fire {
  scheduleName: string;
  scheduledTime: number;
  executedTime: number;
  executionId: string;
}

/**
 * The input a fire of a schedule (`config`) starts its workflow with: the schedule's input plus what Orkes and
 * Conductor add, the schedule's name, the fire's time, the time it started, the id of the fire's record
 * (`search/executions`' `executionId`) and, as Conductor's scheduler adds it, the cron expression and zone that fired.
 */
export function scheduledInput(config: Pick<ScheduleConfig, "startWorkflowRequest" | "cronExpression" | "zoneId">, fire: Fire): JsonObject {
  return {
    ...config.startWorkflowRequest.input,
    _startedByScheduler: fire.scheduleName,
    _scheduledTime: fire.scheduledTime,
    _executedTime: fire.executedTime,
    _executionId: fire.executionId,
    _schedulerCron: `${config.cronExpression} ${config.zoneId}`,
  };
}
