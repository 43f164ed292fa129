import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/worker/http/errors";
import { MAX_CATCHUP_FIRES, cronRefusal, dueFires, nextFires, parseCron, parseZone, type CronSchedule } from "../../src/worker/schedules/cron";
import { checkSchedule, scheduledInput } from "../../src/worker/schedules/validate";
import { SaveScheduleRequest, parseOrThrow } from "../../src/worker/schemas";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

function cron(expression: string, zone = "UTC"): CronSchedule {
  const parsed = parseCron(expression, zone);
  if (!parsed.ok) throw new Error(`${expression}: ${parsed.message}`);
  return parsed.schedule;
}

/** The next `count` fires after `from`, as ISO strings. */
const next = (expression: string, from: string, count = 3, zone = "UTC") => nextFires(cron(expression, zone), at(from), count).map(iso);

describe("Spring cron expressions", () => {
  const monday = "2026-11-23T10:00:00.000Z"; // a Monday

  it("reads six fields, seconds first, with steps, ranges, lists and names", () => {
    expect(next("0 */5 * * * ?", "2026-11-23T10:02:30Z")).toEqual(["2026-11-23T10:05:00.000Z", "2026-11-23T10:10:00.000Z", "2026-11-23T10:15:00.000Z"]);
    expect(next("0 0/5 * * * *", "2026-11-23T10:02:30Z", 1)).toEqual(["2026-11-23T10:05:00.000Z"]);
    expect(next("5/20 * * * * *", "2026-11-23T10:00:00Z")).toEqual(["2026-11-23T10:00:05.000Z", "2026-11-23T10:00:25.000Z", "2026-11-23T10:00:45.000Z"]);
    expect(next("0 0 9 * * MON-FRI", "2026-11-27T12:00:00Z", 2)).toEqual(["2026-11-30T09:00:00.000Z", "2026-12-01T09:00:00.000Z"]);
    expect(next("0 0 12 * * mon,wed", monday, 2)).toEqual(["2026-11-23T12:00:00.000Z", "2026-11-25T12:00:00.000Z"]);
    expect(next("0 0 0 1 JAN ?", monday, 1)).toEqual(["2027-01-01T00:00:00.000Z"]);
  });

  it("reads month names as Spring does, as their numbers before anything else: in ranges, lists and steps, beside numbers and day names", () => {
    expect(next("0 0 0 1 JAN-MAR,oct ?", monday, 4)).toEqual(["2027-01-01T00:00:00.000Z", "2027-02-01T00:00:00.000Z", "2027-03-01T00:00:00.000Z", "2027-10-01T00:00:00.000Z"]);
    expect(next("0 0 0 13 Jan,3 ?", monday, 2)).toEqual(["2027-01-13T00:00:00.000Z", "2027-03-13T00:00:00.000Z"]);
    expect(next("0 0 9 ? JAN-2 MON#1,FRI", monday, 3)).toEqual(["2027-01-01T09:00:00.000Z", "2027-01-04T09:00:00.000Z", "2027-01-08T09:00:00.000Z"]);
    // A step past the end of the range is its start alone, named as numbered (Spring reads `JAN/13` as `1/13`).
    expect(next("0 0 0 1 JAN/13 ?", monday, 2)).toEqual(["2027-01-01T00:00:00.000Z", "2028-01-01T00:00:00.000Z"]);
    expect(next("0 0 0 1 JAN/13 ?", monday, 2)).toEqual(next("0 0 0 1 1/13 ?", monday, 2));
    expect(next("0 0 0 1 FEB-DEC/12 ?", monday, 2)).toEqual(["2027-02-01T00:00:00.000Z", "2028-02-01T00:00:00.000Z"]);
    // Refused as their numbers would be, quoted as written.
    const refusal = (expression: string) => {
      const parsed = parseCron(expression, "UTC");
      return parsed.ok ? "accepted" : parsed.message;
    };
    expect(refusal("0 0 0 ? DEC-JAN *")).toBe('is not a valid cron expression: the month range "DEC-JAN" ends before it starts');
    expect(refusal("0 0 0 ? JAN-13 *")).toBe('is not a valid cron expression: month values are 1 to 12 (or JAN to DEC), not "JAN-13"');
    expect(refusal("0 0 0 ? JAN-FOO *")).toBe('is not a valid cron expression: the month field ("JAN-FOO") holds characters it does not take');
    // A day-of-month takes no names, as in Spring.
    expect(refusal("0 0 0 JAN/13 * ?")).toBe('is not a valid cron expression: the day-of-month field ("JAN/13") holds characters it does not take');
  });

  it("takes a step past the end of its range as Spring does: its start alone", () => {
    // Spring sets the bits from the start every step: */90 minutes is minute 0, */36 hours hour 0, 10-12/5 hour 10.
    expect(next("0 */90 * * * *", "2026-11-23T10:02:30Z", 2)).toEqual(["2026-11-23T11:00:00.000Z", "2026-11-23T12:00:00.000Z"]);
    expect(next("0 0 */36 * * ?", monday, 2)).toEqual(["2026-11-24T00:00:00.000Z", "2026-11-25T00:00:00.000Z"]);
    expect(next("0 0 10-12/5 * * ?", monday, 2)).toEqual(["2026-11-24T10:00:00.000Z", "2026-11-25T10:00:00.000Z"]);
    expect(next("0 0 0 */40 * ?", monday, 2)).toEqual(["2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"]);
    expect(next("0 0 0 1 6/12 ?", monday, 2)).toEqual(["2027-06-01T00:00:00.000Z", "2028-06-01T00:00:00.000Z"]);
    // A step of 0 is still refused, as Spring refuses it.
    expect(parseCron("0 */0 * * * *", "UTC")).toMatchObject({ ok: false });
  });

  it("reads day-of-week 0 and 7 as Sunday, and ? as no specific value in either day field", () => {
    expect(next("0 0 0 * * 0", monday, 1)).toEqual(["2026-11-29T00:00:00.000Z"]);
    expect(next("0 0 0 * * 7", monday, 1)).toEqual(["2026-11-29T00:00:00.000Z"]);
    expect(next("0 0 0 ? * SUN", monday, 1)).toEqual(["2026-11-29T00:00:00.000Z"]);
  });

  it("counts day-of-week steps and ranges from Monday 1 to Sunday 7, as Spring does", () => {
    const days = (expression: string) => next(expression, "2026-11-22T12:00:00Z", 7).map((fire) => new Date(fire).getUTCDay());
    // From Sunday the 22nd: Spring's */2 is days 1, 3, 5, 7 (Monday, Wednesday, Friday, Sunday).
    expect(days("0 0 9 ? * */2")).toEqual([1, 3, 5, 0, 1, 3, 5]);
    expect(days("0 0 9 ? * */3")).toEqual([1, 4, 0, 1, 4, 0, 1]);
    expect(days("0 0 9 ? * MON/2")).toEqual([1, 3, 5, 0, 1, 3, 5]);
    expect(days("0 0 9 ? * 0/2")).toEqual([2, 4, 6, 0, 2, 4, 6]);
    // Sunday is 7 and ends the week: SUN/3 and 7/2 are Sunday alone; as a range's start it is Sunday 0.
    expect(days("0 0 9 ? * SUN/3")).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(days("0 0 9 ? * 7/2")).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(days("0 0 9 ? * 7-2")).toEqual([1, 2, 0, 1, 2, 0, 1]);
    expect(days("0 0 9 ? * SUN-TUE")).toEqual([1, 2, 0, 1, 2, 0, 1]);
    expect(days("0 0 9 ? * 1-5/2,SAT")).toEqual([1, 3, 5, 6, 1, 3, 5]);
    // Beside a Quartz part (L, #) in a list too: */2 is still Monday, Wednesday, Friday and Sunday, with the last Saturday
    // of the month (the 28th of November 2026) and, from December, the first Tuesday (the 1st).
    expect(days("0 0 9 ? * */2,6L")).toEqual([1, 3, 5, 6, 0, 1, 3]);
    expect(next("0 0 9 ? * 6-7,TUE#1", "2026-11-27T12:00:00Z", 4)).toEqual(["2026-11-28T09:00:00.000Z", "2026-11-29T09:00:00.000Z", "2026-12-01T09:00:00.000Z", "2026-12-05T09:00:00.000Z"]);
    for (const bad of ["0 0 9 ? * 5-2", "0 0 9 ? * */0", "0 0 9 ? * 9/2", "0 0 9 ? * FRI-MON,5L"]) expect(parseCron(bad, "UTC")).toMatchObject({ ok: false, message: expect.stringMatching(/day-of-week/) });
  });

  it("reads L, W and # as Spring does", () => {
    expect(next("0 0 0 L * ?", monday, 2)).toEqual(["2026-11-30T00:00:00.000Z", "2026-12-31T00:00:00.000Z"]);
    // The 15th of January 2027 is a Friday; of May 2027 a Saturday, so its nearest weekday is Friday the 14th.
    expect(next("0 0 0 15W 5 ?", monday, 1)).toEqual(["2027-05-14T00:00:00.000Z"]);
    expect(next("0 0 0 LW * ?", "2027-01-01T00:00:00Z", 1)).toEqual(["2027-01-29T00:00:00.000Z"]);
    // The weekday nearest the 31st, within its month (Quartz: W never crosses into another month): the 31st of January
    // 2027 is a Sunday, so Friday the 29th; February and April have no 31st, so no fire (as in Quartz and Spring).
    expect(next("0 0 0 31W * ?", "2027-01-01T00:00:00Z", 3)).toEqual(["2027-01-29T00:00:00.000Z", "2027-03-31T00:00:00.000Z", "2027-05-31T00:00:00.000Z"]);
    // The 1st of May 2027 is a Saturday: Monday the 3rd, not Friday the 30th of April.
    expect(next("0 0 0 1W 5 ?", monday, 1)).toEqual(["2027-05-03T00:00:00.000Z"]);
    expect(next("0 0 0 ? * 5L", monday, 1)).toEqual(["2026-11-27T00:00:00.000Z"]); // last Friday of November
    expect(next("0 0 0 ? * MON#2", monday, 1)).toEqual(["2026-12-14T00:00:00.000Z"]); // second Monday of December
  });

  it("needs both day fields to match when both are given (Spring), not either (Vixie cron)", () => {
    // The first Monday that is the 1st of a month.
    expect(next("0 0 0 1 * MON", monday, 1)).toEqual(["2027-02-01T00:00:00.000Z"]);
  });

  it("takes Spring's macros", () => {
    expect(next("@daily", "2026-11-23T10:00:00Z", 1)).toEqual(["2026-11-24T00:00:00.000Z"]);
    expect(next("@hourly", "2026-11-23T10:00:00Z", 1)).toEqual(["2026-11-23T11:00:00.000Z"]);
  });

  it("evaluates in the schedule's zone, across a DST change", () => {
    // 09:00 in New York is 14:00 UTC in winter and 13:00 UTC in summer (DST starts 2027-03-14).
    expect(next("0 0 9 * * *", "2027-03-12T20:00:00Z", 3, "America/New_York")).toEqual(["2027-03-13T14:00:00.000Z", "2027-03-14T13:00:00.000Z", "2027-03-15T13:00:00.000Z"]);
  });

  it("fires a fixed time of day that a DST change skips at the first time after the gap", () => {
    // 02:30 does not exist in New York on 2027-03-14 (02:00 EST jumps to 03:00 EDT, 07:00 UTC).
    expect(next("0 30 2 * * *", "2027-03-13T12:00:00Z", 2, "America/New_York")).toEqual(["2027-03-14T07:00:00.000Z", "2027-03-15T06:30:00.000Z"]);
  });

  it("fires a fixed time of day that a DST change repeats once, at its first occurrence (Spring fires both)", () => {
    // 02:30 occurs twice in Berlin on 2026-10-25: 00:30 UTC (summer time) and 01:30 UTC (winter time).
    expect(next("0 30 2 * * *", "2026-10-24T12:00:00Z", 2, "Europe/Berlin")).toEqual(["2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
    // docs/api.md's example, the other day: 02:30 does not exist in Berlin on 2026-03-29, and 03:00 summer time is 01:00 UTC.
    expect(next("0 30 2 * * *", "2026-03-28T12:00:00Z", 2, "Europe/Berlin")).toEqual(["2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"]);
  });

  it("fires an hourly expression at every time that exists across both DST changes, as Spring does", () => {
    // Spring's CronExpression.next, chained, gives these: both 02:00s in October, no 02:00 in March.
    expect(next("0 0 * * * *", "2026-10-24T23:30:00Z", 4, "Europe/Berlin")).toEqual(["2026-10-25T00:00:00.000Z", "2026-10-25T01:00:00.000Z", "2026-10-25T02:00:00.000Z", "2026-10-25T03:00:00.000Z"]);
    expect(next("0 0 * * * *", "2026-03-28T23:30:00Z", 3, "Europe/Berlin")).toEqual(["2026-03-29T00:00:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-29T02:00:00.000Z"]);
  });

  it("refuses what Spring refuses, saying why", () => {
    const refusal = (expression: string) => {
      const parsed = parseCron(expression, "UTC");
      return parsed.ok ? "accepted" : parsed.message;
    };
    expect(refusal("*/5 * * * *")).toMatch(/must have 6 fields.*this has 5/);
    expect(refusal("0 0 0 * * * 2027")).toMatch(/this has 7/);
    expect(refusal("? 0 0 * * *")).toMatch(/only stand alone in the day-of-month or day-of-week field, not in the second field/);
    expect(refusal("0 0 25 * * *")).toMatch(/not a valid cron expression.*hour/);
    expect(refusal("0 0 0 * * 8")).toMatch(/not a valid cron expression/);
    // Each value out of bounds named with its field and as written (croner counts days and months from 0 inside).
    expect(refusal("0 0 0 32 * ?")).toBe('is not a valid cron expression: day-of-month values are 1 to 31, not "32"');
    expect(refusal("0 0 0 0 * ?")).toBe('is not a valid cron expression: day-of-month values are 1 to 31, not "0"');
    expect(refusal("0 0 0 32W * ?")).toBe('is not a valid cron expression: day-of-month values are 1 to 31, not "32W"');
    expect(refusal("0 0 0 ? 13 *")).toBe('is not a valid cron expression: month values are 1 to 12 (or JAN to DEC), not "13"');
    expect(refusal("0 0 0 ? 0-3 *")).toBe('is not a valid cron expression: month values are 1 to 12 (or JAN to DEC), not "0-3"');
    expect(refusal("0 60/5 * * * *")).toBe('is not a valid cron expression: minute values are 0 to 59, not "60/5"');
    expect(refusal("0 0 22-2 * * *")).toBe('is not a valid cron expression: the hour range "22-2" ends before it starts');
    expect(refusal("0 0 0 ? FOO *")).toBe('is not a valid cron expression: the month field ("FOO") holds characters it does not take');
    expect(refusal("x 0 0 * * ?")).toBe('is not a valid cron expression: the second field ("x") holds characters it does not take');
    expect(refusal("0 0 0 ? * 9L")).toMatch(/day-of-week: 9/);
    expect(refusal("every day")).toMatch(/must have 6 fields/);
    expect(refusal("")).toMatch(/must have 6 fields/);
  });

  it("refuses a schedule that never fires or fires more often than every 10 seconds", () => {
    const now = at("2026-11-23T10:00:00Z");
    expect(cronRefusal(cron("0 0 0 31 2 ?"), now)).toBe("never fires");
    expect(cronRefusal(cron("* * * * * *"), now)).toMatch(/more often than once every 10 seconds/);
    expect(cronRefusal(cron("0,5 0 * * * *"), now)).toMatch(/more often/);
    expect(cronRefusal(cron("*/10 * * * * *"), now)).toBeUndefined();
    expect(cronRefusal(cron("0 0 9 * * MON-FRI"), now)).toBeUndefined();
  });

  it("knows the IANA zones the runtime knows, written exactly", () => {
    expect(parseZone("UTC").ok).toBe(true);
    expect(parseZone("Europe/Berlin").ok).toBe(true);
    expect(parseZone("Mars/Olympus_Mons").ok).toBe(false);
    expect(parseZone("").ok).toBe(false);
    expect(parseZone(" UTC").ok).toBe(false);
  });

  it("takes the fixed offsets Java's ZoneId.of takes (Orkes reads zoneId with it), and evaluates the cron at that offset", () => {
    const from = at("2026-01-10T00:00:00Z");
    const nineAt = (zoneId: string) => {
      const parsed = parseCron("0 0 9 * * ?", zoneId);
      if (!parsed.ok) throw new Error(`${zoneId}: ${parsed.message}`);
      return nextFires(parsed.schedule, from, 1).map(iso)[0];
    };
    // Java's ZoneOffset forms, alone or after UTC, GMT or UT; Z and UT alone are UTC.
    for (const zoneId of ["Z", "UT", "UTC", "GMT", "+00:00", "UTC+0", "GMT-00"]) expect(nineAt(zoneId), zoneId).toBe("2026-01-10T09:00:00.000Z");
    for (const zoneId of ["+2", "+02", "+02:00", "+0200", "+02:00:00", "UTC+2", "GMT+02:00", "UT+0200"]) expect(nineAt(zoneId), zoneId).toBe("2026-01-10T07:00:00.000Z");
    expect(nineAt("-0530")).toBe("2026-01-10T14:30:00.000Z");
    expect(nineAt("GMT+05:30")).toBe("2026-01-10T03:30:00.000Z");
    expect(nineAt("UT-3")).toBe("2026-01-10T12:00:00.000Z");
    expect(nineAt("+14:30")).toBe("2026-01-10T18:30:00.000Z");
    // An IANA id that looks like an offset keeps its IANA meaning (POSIX's sign: Etc/GMT+2 is two hours west of UTC).
    expect(nineAt("Etc/GMT+2")).toBe("2026-01-10T11:00:00.000Z");
    expect(parseZone("Etc/GMT+2")).toEqual({ ok: true, zone: { timezone: "Etc/GMT+2" } });
    // What Java refuses ("+2:00", "+19", "UTC+", a lower-case prefix, a space) and what croner cannot take (seconds, past ±14:30).
    for (const zoneId of ["+2:00", "+19", "+18:30", "UTC+", "utc+2", "UTC +2", "+02:0", "+02:00:", "+0200:00", "-"]) expect(parseZone(zoneId).ok, zoneId).toBe(false);
    expect(parseZone("+02:00:30")).toEqual({ ok: false, message: expect.stringMatching(/seconds/) });
    expect(parseZone("-15:00")).toEqual({ ok: false, message: expect.stringMatching(/beyond ±14:30/) });
    expect(parseZone("UTC+2")).toEqual({ ok: true, zone: { utcOffset: 120 } });
    expect(parseZone("Europe/Berlin")).toEqual({ ok: true, zone: { timezone: "Europe/Berlin" } });
  });
});

describe("fire windows", () => {
  const hourly = () => cron("0 0 * * * *");

  it("counts a fire exactly at the window's start and end, and none outside", () => {
    const window = { start: at("2026-11-23T12:00:00Z"), end: at("2026-11-23T14:00:00Z") };
    expect(nextFires(hourly(), at("2026-11-23T09:30:00Z"), 5, window).map(iso)).toEqual(["2026-11-23T12:00:00.000Z", "2026-11-23T13:00:00.000Z", "2026-11-23T14:00:00.000Z"]);
    expect(nextFires(hourly(), at("2026-11-23T14:00:00Z"), 5, window)).toEqual([]);
  });
});

describe("the fires an alarm starts", () => {
  const everyMinute = () => cron("0 * * * * *");
  const armed = at("2026-11-23T10:00:00Z");

  it("starts the armed fire when the alarm runs on time, or early (as tests run it)", () => {
    expect(dueFires(everyMinute(), armed, armed + 150, false).map(iso)).toEqual(["2026-11-23T10:00:00.000Z"]);
    expect(dueFires(everyMinute(), armed, armed - 3_600_000, true).map(iso)).toEqual(["2026-11-23T10:00:00.000Z"]);
  });

  it("without catch-up, a late alarm starts only the oldest fire that passed (the armed one), as Conductor's scheduler starts the run time it stored", () => {
    expect(dueFires(everyMinute(), armed, at("2026-11-23T10:05:30Z"), false).map(iso)).toEqual(["2026-11-23T10:00:00.000Z"]);
    // A retry of that alarm later still (it failed) picks the same fire, which its idempotency key finds started.
    expect(dueFires(everyMinute(), armed, at("2026-11-23T10:06:10Z"), false).map(iso)).toEqual(["2026-11-23T10:00:00.000Z"]);
    // The armed fire outside the window (the window's start moved past it): the oldest missed fire inside.
    expect(dueFires(everyMinute(), armed, at("2026-11-23T10:05:30Z"), false, { start: at("2026-11-23T10:02:00Z") }).map(iso)).toEqual(["2026-11-23T10:02:00.000Z"]);
  });

  it("with catch-up, a late alarm starts each missed fire, oldest first, at most the latest ten", () => {
    expect(dueFires(everyMinute(), armed, at("2026-11-23T10:03:30Z"), true).map(iso)).toEqual([
      "2026-11-23T10:00:00.000Z",
      "2026-11-23T10:01:00.000Z",
      "2026-11-23T10:02:00.000Z",
      "2026-11-23T10:03:00.000Z",
    ]);
    const afterADay = dueFires(everyMinute(), armed, at("2026-11-24T10:00:30Z"), true);
    expect(afterADay).toHaveLength(MAX_CATCHUP_FIRES);
    expect(afterADay.map(iso).slice(-2)).toEqual(["2026-11-24T09:59:00.000Z", "2026-11-24T10:00:00.000Z"]);
  });

  it("split over alarms (FIRES_PER_ALARM), a catch-up's later alarm, armed for the first fire left, starts exactly the fires left (none twice, none lost, ten over both); after another outage, the latest ten since its fire", () => {
    const perAlarm = 5;
    const late = at("2026-11-24T10:00:30Z");
    const first = dueFires(everyMinute(), armed, late, true);
    // Run at once (a few ms later), or later with the end of the window passed meanwhile: the same fires left.
    expect(dueFires(everyMinute(), first[perAlarm]!, late + 20, true)).toEqual(first.slice(perAlarm));
    const window = { end: first.at(-1)! };
    expect(dueFires(everyMinute(), first[perAlarm]!, late + 5 * 60_000, true, window)).toEqual(first.slice(perAlarm));
    // Run after another outage: the latest ten of all since the fire it is armed for, not ten more on top of them.
    const afterAnHour = dueFires(everyMinute(), first[perAlarm]!, late + 3_600_000, true);
    expect(afterAnHour).toHaveLength(MAX_CATCHUP_FIRES);
    expect(afterAnHour.map(iso).at(-1)).toBe("2026-11-24T11:00:00.000Z");
  });

  it("starts no fire outside the window", () => {
    const window = { end: at("2026-11-23T10:01:00Z") };
    expect(dueFires(everyMinute(), armed, at("2026-11-23T10:05:30Z"), true, window).map(iso)).toEqual(["2026-11-23T10:00:00.000Z", "2026-11-23T10:01:00.000Z"]);
    expect(dueFires(everyMinute(), armed, at("2026-11-23T10:05:30Z"), false, window).map(iso)).toEqual(["2026-11-23T10:00:00.000Z"]);
  });
});

describe("a schedule's validation", () => {
  const now = at("2026-11-23T10:00:00Z");
  const valid = { name: "nightly", cronExpression: "0 0 2 * * ?", startWorkflowRequest: { name: "report", input: { a: 1 } } };
  const parse = (body: unknown) => parseOrThrow(SaveScheduleRequest, body, "schedule");
  const issues = (body: unknown) => {
    try {
      const checked = checkSchedule(parse(body), now);
      return checked.ok ? [] : checked.issues;
    } catch (error) {
      if (error instanceof ApiError) return error.validationErrors ?? [];
      throw error;
    }
  };

  it("normalizes a valid request: UTC by default, Orkes' 0 bounds as none, nulls as absent", () => {
    const checked = checkSchedule(parse({ ...valid, scheduleStartTime: 0, scheduleEndTime: null, description: null, paused: null, zoneId: null }), now);
    expect(checked.ok && checked.config).toEqual({ cronExpression: "0 0 2 * * ?", zoneId: "UTC", startWorkflowRequest: { name: "report", input: { a: 1 } }, runCatchupScheduleInstances: false });
    expect(checked.ok && checked.paused).toBe(false);
  });

  it("reads a start request's version and priority as Jackson reads an Integer: \"\" none (Orkes' docs' example), digits a number", () => {
    const start = (startWorkflowRequest: Record<string, unknown>) => {
      const checked = checkSchedule(parse({ ...valid, startWorkflowRequest: { name: "report", ...startWorkflowRequest } }), now);
      return checked.ok ? checked.config.startWorkflowRequest : undefined;
    };
    expect(start({ version: "", priority: "" })).toEqual({ name: "report", input: {} });
    expect(start({ version: "2", priority: "7" })).toEqual({ name: "report", input: {}, version: 2, priority: 7 });
    expect(issues({ ...valid, startWorkflowRequest: { name: "report", version: "latest" } }).map((issue) => issue.path)).toEqual(["startWorkflowRequest.version"]);
    expect(issues({ ...valid, startWorkflowRequest: { name: "report", priority: 100 } }).map((issue) => issue.path)).toEqual(["startWorkflowRequest.priority"]);
    expect(issues({ ...valid, startWorkflowRequest: { name: "report", version: -1 } }).map((issue) => issue.path)).toEqual(["startWorkflowRequest.version"]);
  });

  it("refuses a bad cron, an unknown zone and a window ending before it starts, with their paths", () => {
    expect(issues({ ...valid, cronExpression: "0 0 2 * *" })).toEqual([{ path: "cronExpression", message: expect.stringMatching(/6 fields/) }]);
    expect(issues({ ...valid, zoneId: "Nowhere/City" })).toEqual([{ path: "zoneId", message: expect.stringMatching(/not a known IANA time zone/) }]);
    expect(issues({ ...valid, zoneId: "+02:00:30" })).toEqual([{ path: "zoneId", message: expect.stringMatching(/seconds/) }]);
    expect(issues({ ...valid, scheduleStartTime: now + 10, scheduleEndTime: now })).toEqual([{ path: "scheduleEndTime", message: "must not be before scheduleStartTime" }]);
  });

  it("refuses a bad name, a missing workflow name, and a start request's idempotency key", () => {
    expect(issues({ ...valid, name: "has space" }).map((issue) => issue.path)).toEqual(["name"]);
    expect(issues({ ...valid, name: "tags" }).map((issue) => issue.path)).toEqual(["name"]);
    expect(issues({ ...valid, name: "" }).map((issue) => issue.path)).toEqual(["name"]);
    expect(issues({ ...valid, startWorkflowRequest: { input: {} } }).map((issue) => issue.path)).toEqual(["startWorkflowRequest.name"]);
    expect(issues({ ...valid, startWorkflowRequest: { name: "report", idempotencyKey: "k" } }).map((issue) => issue.path)).toEqual(["startWorkflowRequest.idempotencyKey"]);
    expect(issues({ ...valid, cronExpression: 5 }).map((issue) => issue.path)).toEqual(["cronExpression"]);
    expect(issues([valid]).map((issue) => issue.path)).toEqual(["(body)"]);
  });

  it("takes a schedule read back with GET (its read-only fields are ignored)", () => {
    expect(v.is(SaveScheduleRequest, { ...valid, createTime: 1, updatedTime: 2, nextRunTime: 3, createdBy: "x", pausedReason: "y", tags: [] })).toBe(true);
  });

  it("gives each fire the schedule's input plus its schedule's name, the fire's and the start's times, its record's id and the cron that fired", () => {
    const fire = { scheduleName: "nightly", scheduledTime: 1000, executedTime: 1200, executionId: "e-1" };
    const config = { cronExpression: "0 0 2 * * ?", zoneId: "Europe/Paris", startWorkflowRequest: { name: "report", input: { a: 1, _scheduledTime: "mine" } } };
    expect(scheduledInput(config, fire)).toEqual({ a: 1, _startedByScheduler: "nightly", _scheduledTime: 1000, _executedTime: 1200, _executionId: "e-1", _schedulerCron: "0 0 2 * * ? Europe/Paris" });
  });
});
