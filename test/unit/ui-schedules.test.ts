// The web UI's Schedules page: how it words a schedule's state, workflow and fire times, and what it asks
// nextFewSchedules (plain ES modules of ui/, run in Node: only pure helpers).
import { describe, expect, it } from "vitest";

interface SchedulesModule {
  scheduleState(schedule: { paused?: boolean }): string;
  workflowText(start: { name: string; version?: number }): string;
  formatInZone(ms: number, zoneId: string): string;
  fireTimeText(ms: number, zoneId: string, localZone?: string): string;
  nextFireText(schedule: { paused?: boolean; zoneId: string; nextRunTime?: number }, localZone?: string): string;
  nextFiresQuery(schedule: Record<string, unknown>, limit?: number): string;
}

// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const { fireTimeText, formatInZone, nextFireText, nextFiresQuery, scheduleState, workflowText } = (await import(
  /* @vite-ignore */ new URL("../../ui/views/schedules.js", import.meta.url).href
)) as SchedulesModule;

const NEW_YEAR_UTC = Date.UTC(2027, 0, 1, 0, 0, 0);

describe("the UI's Schedules page", () => {
  it("says whether a schedule is paused or active, and which workflow version it starts", () => {
    expect(scheduleState({ paused: true })).toBe("paused");
    expect(scheduleState({ paused: false })).toBe("active");
    expect(scheduleState({})).toBe("active");
    expect(workflowText({ name: "orders", version: 3 })).toBe("orders v3");
    expect(workflowText({ name: "orders" })).toBe("orders (latest version)");
  });

  it("shows a time as the clock of a zone shows it, midnight as 00, not 24", () => {
    expect(formatInZone(NEW_YEAR_UTC, "UTC")).toBe("2027-01-01 00:00:00");
    expect(formatInZone(NEW_YEAR_UTC, "Europe/Berlin")).toBe("2027-01-01 01:00:00");
    expect(formatInZone(NEW_YEAR_UTC, "America/New_York")).toBe("2026-12-31 19:00:00");
    expect(formatInZone(NEW_YEAR_UTC + 1234, "UTC")).toBe("2027-01-01 00:00:01");
    // Fixed offsets as a schedule takes them (Java's ZoneId.of forms), which browsers do not read as time zones.
    expect(formatInZone(NEW_YEAR_UTC, "UTC+2")).toBe("2027-01-01 02:00:00");
    expect(formatInZone(NEW_YEAR_UTC, "GMT+05:30")).toBe("2027-01-01 05:30:00");
    expect(formatInZone(NEW_YEAR_UTC, "-0530")).toBe("2026-12-31 18:30:00");
    expect(formatInZone(NEW_YEAR_UTC, "Z")).toBe("2027-01-01 00:00:00");
    expect(fireTimeText(NEW_YEAR_UTC, "UT-3", "UTC")).toBe("2026-12-31 21:00:00 UT-3 (2027-01-01 00:00:00 local)");
  });

  it("shows a fire in the schedule's zone, with the browser's time only when its clock differs", () => {
    expect(fireTimeText(NEW_YEAR_UTC, "UTC", "UTC")).toBe("2027-01-01 00:00:00 UTC");
    // Another name for the same clock adds nothing.
    expect(fireTimeText(NEW_YEAR_UTC, "UTC", "Etc/UTC")).toBe("2027-01-01 00:00:00 UTC");
    expect(fireTimeText(NEW_YEAR_UTC, "Europe/Berlin", "UTC")).toBe("2027-01-01 01:00:00 Europe/Berlin (2027-01-01 00:00:00 local)");
  });

  it("gives no next fire while paused or once the window has ended", () => {
    expect(nextFireText({ paused: true, zoneId: "UTC", nextRunTime: NEW_YEAR_UTC }, "UTC")).toBe("none while paused");
    expect(nextFireText({ paused: false, zoneId: "UTC" }, "UTC")).toBe("none: its end time has passed");
    expect(nextFireText({ paused: false, zoneId: "Asia/Tokyo", nextRunTime: NEW_YEAR_UTC }, "Asia/Tokyo")).toBe("2027-01-01 09:00:00 Asia/Tokyo");
  });

  it("asks nextFewSchedules about a schedule as a save reads it: UTC without a zone, no bound for 0 or null", () => {
    const ask = (schedule: Record<string, unknown>, limit?: number) => Object.fromEntries(new URLSearchParams(nextFiresQuery(schedule, limit)));
    expect(ask({ cronExpression: "0 0 * * * ?", zoneId: "Europe/Berlin" })).toEqual({ cronExpression: "0 0 * * * ?", zoneId: "Europe/Berlin", limit: "5" });
    expect(ask({ cronExpression: "@daily", zoneId: null, scheduleStartTime: 0, scheduleEndTime: null }, 3)).toEqual({ cronExpression: "@daily", zoneId: "UTC", limit: "3" });
    expect(ask({ cronExpression: "@daily", scheduleStartTime: 1_800_000_000_000, scheduleEndTime: 1_900_000_000_000 })).toEqual({
      cronExpression: "@daily", zoneId: "UTC", scheduleStartTime: "1800000000000", scheduleEndTime: "1900000000000", limit: "5",
    });
    // A value of the wrong type goes to the service as text, for it to say what is wrong; a missing expression as empty.
    expect(ask({ cronExpression: 5, zoneId: "UTC", scheduleStartTime: "soon" })).toEqual({ cronExpression: "5", zoneId: "UTC", scheduleStartTime: "soon", limit: "5" });
    expect(ask({})).toEqual({ cronExpression: "", zoneId: "UTC", limit: "5" });
  });
});
