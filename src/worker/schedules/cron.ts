import { Cron } from "croner";

/**
 * Cron expressions of schedules, read as Orkes Conductor reads them: Spring's six fields, seconds first
 * (`second minute hour day-of-month month day-of-week`), with `?`, `L`, `W`, `#`, ranges, lists, steps (`*\/5`,
 * `0/5`) and names (`MON-FRI`, `JAN`). Pure: no I/O, so unit tests run it in Node and the Durable Object in workerd.
 */

/** Spring's macros, as its six fields. */
const MACROS: Readonly<Record<string, string>> = {
  "@yearly": "0 0 0 1 1 *",
  "@annually": "0 0 0 1 1 *",
  "@monthly": "0 0 0 1 * *",
  "@weekly": "0 0 0 * * 0",
  "@daily": "0 0 0 * * *",
  "@midnight": "0 0 0 * * *",
  "@hourly": "0 0 * * * *",
};

const FIELD_NAMES = ["second", "minute", "hour", "day-of-month", "month", "day-of-week"] as const;

/**
 * The shortest time allowed between two fires of one schedule. Each fire starts a workflow, and a schedule firing
 * every second would start 86,400 a day; ten seconds still allows Orkes' own `*\/10 * * * * *` example.
 */
export const MIN_FIRE_INTERVAL_MS = 10_000;
/** How many upcoming fires {@link MIN_FIRE_INTERVAL_MS} is checked over. */
const INTERVAL_CHECK_FIRES = 20;

/** A parsed cron expression in its time zone. */
export interface CronSchedule {
  readonly cron: Cron;
}

/** Either a schedule or why the expression (or zone) cannot be one. */
export type CronParse = { ok: true; schedule: CronSchedule } | { ok: false; message: string };

/** The zone a schedule's cron is evaluated in, as croner takes it: an IANA id, or a fixed offset east of UTC in minutes. */
export type CronZone = { timezone: string } | { utcOffset: number };

/** The widest offset croner takes (its `utcOffset` bound, in minutes): ±14:30, beyond every offset in use. */
const MAX_OFFSET_MINUTES = 14 * 60 + 30;

/** Java's ZoneOffset.of forms after the sign: `h`, `hh`, `hh:mm`, `hhmm`, `hh:mm:ss`, `hhmmss`. */
const JAVA_OFFSET = /^([+-])(?:(\d)|(\d\d)(?:(:?)(\d\d)(?:\4(\d\d))?)?)$/;

/**
 * The fixed offset `text` (`Z`, or a sign and one of Java's forms) names, in minutes east of UTC; undefined when it is
 * no offset, a message when it is one croner cannot take (seconds, or beyond ±14:30) or Java refuses (past ±18:00).
 */
function javaOffset(text: string): number | string | undefined {
  if (text === "Z") return 0;
  const match = JAVA_OFFSET.exec(text);
  if (match === null) return undefined;
  const [, sign, oneDigitHours, hours, , minutes, seconds] = match;
  const h = Number(oneDigitHours ?? hours);
  const m = Number(minutes ?? 0);
  const sec = Number(seconds ?? 0);
  if (h > 18 || m > 59 || sec > 59 || h * 3600 + m * 60 + sec > 18 * 3600) return undefined;
  if (sec !== 0) return "is an offset with seconds, which schedules here do not take (hours and minutes only)";
  const total = (sign === "-" ? -1 : 1) * (h * 60 + m);
  if (Math.abs(total) > MAX_OFFSET_MINUTES) return "is an offset beyond ±14:30, which schedules here do not take";
  return total;
}

/**
 * The zone `zoneId` names, read as Java's `ZoneId.of` reads it (Orkes' scheduler evaluates a schedule's cron in
 * `ZoneId.of(zoneId)`): an IANA id the runtime knows (`UTC`, `Europe/Berlin`), or a fixed offset: `Z`, `+2`, `+02`,
 * `+02:00`, `-0530` (Java's ZoneOffset forms), each also after `UTC`, `GMT` or `UT` (`UTC+2`, `GMT+05:30`, `UT-3`), and
 * `UT` alone (UTC). The id itself is kept as given, as Orkes keeps it.
 */
export function parseZone(zoneId: string): { ok: true; zone: CronZone } | { ok: false; message: string } {
  const unknown = { ok: false as const, message: `"${zoneId}" is not a known IANA time zone id (e.g. UTC, Europe/Berlin, America/New_York) nor a UTC offset (Z, +02:00, -0530, UTC+2, GMT+05:30)` };
  // Java's order: a sign (or one character) is an offset; UTC, GMT or UT followed by a sign, a prefixed offset.
  const prefixed = /^(?:UTC|GMT|UT)(?=[+-])/.exec(zoneId);
  const offsetText = zoneId.length <= 1 || zoneId.startsWith("+") || zoneId.startsWith("-") ? zoneId : prefixed !== null ? zoneId.slice(prefixed[0].length) : zoneId === "UT" ? "Z" : undefined;
  if (offsetText !== undefined) {
    const offset = javaOffset(offsetText);
    if (offset === undefined) return unknown;
    if (typeof offset === "string") return { ok: false, message: `"${zoneId}" ${offset}` };
    return { ok: true, zone: { utcOffset: offset } };
  }
  if (zoneId.trim() === "" || zoneId !== zoneId.trim()) return unknown;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zoneId });
    return { ok: true, zone: { timezone: zoneId } };
  } catch {
    return unknown;
  }
}

/**
 * The expression as croner reads it with Spring's meaning, or why it is not one. Spring's `?` (no specific value,
 * day fields only) is croner's `*`; croner would read a `?` elsewhere as "the current time".
 */
function springToCroner(expression: string): { ok: true; pattern: string; written: readonly string[] } | { ok: false; message: string } {
  const trimmed = expression.trim();
  const macro = MACROS[trimmed.toLowerCase()];
  if (macro !== undefined) return { ok: true, pattern: macro, written: macro.split(" ") };
  const fields = trimmed.split(/\s+/);
  if (fields.length !== 6) {
    return { ok: false, message: `must have 6 fields (second minute hour day-of-month month day-of-week), e.g. "0 */5 * * * ?"; this has ${fields.length}` };
  }
  // As written, for the messages: the fields below are rewritten as croner reads them.
  const written = [...fields];
  const days = springDaysOfWeek(fields[5]!);
  if (!days.ok) return days;
  fields[5] = days.field;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (!field.includes("?")) continue;
    if (field !== "?" || (FIELD_NAMES[i] !== "day-of-month" && FIELD_NAMES[i] !== "day-of-week")) {
      return { ok: false, message: `"?" may only stand alone in the day-of-month or day-of-week field, not in the ${FIELD_NAMES[i]} field ("${field}")` };
    }
    fields[i] = "*";
  }
  fields[MONTH] = numberedMonths(fields[MONTH]!);
  for (let i = 0; i < fields.length; i++) {
    const refusal = valueRefusal(fields[i]!, i, written[i]!);
    if (refusal !== undefined) return { ok: false, message: refusal };
    fields[i] = stepsPastTheEnd(fields[i]!, i);
  }
  return { ok: true, pattern: fields.join(" "), written };
}

/** The index of the month field in {@link FIELD_NAMES}. */
const MONTH = 4;

/** Spring's month names, January 1 to December 12. */
const SPRING_MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"] as const;

/**
 * A month field with each month name (any case) written as its number, as Spring reads the field: names first, then
 * values, ranges and steps alike whichever way they were written (`JAN/13` is `1/13`, January alone; `DEC-JAN` a range
 * ending before it starts). A three-letter word that names no month stays, for croner to refuse.
 */
function numberedMonths(field: string): string {
  return field.replace(/(?<![a-z])[a-z]{3}(?![a-z])/gi, (word) => {
    const month = SPRING_MONTHS.indexOf(word.toUpperCase() as (typeof SPRING_MONTHS)[number]);
    return month < 0 ? word : String(month + 1);
  });
}

/**
 * Field `index` (second to month) with each stepped part whose step passes the end of its range written as the one
 * value it has, its start: Spring takes `*\/90` as a minute (minute 0 alone) and `0 0 *\/36 * * ?` as midnight,
 * where croner refuses a step longer than the field. Other parts stay as they are.
 */
function stepsPastTheEnd(field: string, index: number): string {
  const bounds = FIELD_BOUNDS[index];
  if (bounds === undefined) return field;
  const [min, max] = bounds;
  return field
    .split(",")
    .map((part) => {
      const match = /^(?:(\*)|(\d+))(?:-(\d+))?\/(\d+)$/.exec(part);
      if (match === null) return part;
      const [, star, first, last, step] = match;
      const start = star !== undefined ? min : Number(first);
      const end = last !== undefined ? Number(last) : max;
      return Number(step) > 0 && start + Number(step) > end ? String(start) : part;
    })
    .join(",");
}

/** The values each field from second to month takes, as Spring's do (day-of-week: {@link springDaysOfWeek}). */
const FIELD_BOUNDS: ReadonlyArray<readonly [min: number, max: number, names?: string]> = [[0, 59], [0, 59], [0, 23], [1, 31], [1, 12, " (or JAN to DEC)"]];

/**
 * Why the numbers of field `index` (second to month) are not values of it, or undefined: a number out of its bounds, or
 * a range ending before it starts, as Spring refuses both. Checked here for the message's sake: croner counts days and
 * months from 0 inside and names those (a 32nd day is "Invalid value for day: 31", month 0 "month: -1"). `written` is
 * the field as the expression has it (month names and all), which the message quotes.
 */
function valueRefusal(field: string, index: number, written: string): string | undefined {
  const bounds = FIELD_BOUNDS[index];
  if (bounds === undefined) return undefined;
  const [min, max, names = ""] = bounds;
  // Names become numbers without adding or removing a comma: the parts of both line up.
  const writtenParts = written.split(",");
  for (const [at, part] of field.split(",").entries()) {
    const shown = writtenParts[at] ?? part;
    // A value, a range or either with a step (`5`, `1-5`, `5/10`, `1-5/2`), or a nearest weekday (`15W`).
    const match = /^(\d+)(?:-(\d+))?(?:\/\d+)?$|^(\d+)W$/i.exec(part);
    if (match === null) continue;
    const [, first, last, weekday] = match;
    const values = [first, last, weekday].filter((value) => value !== undefined).map(Number);
    if (values.some((value) => value < min || value > max)) return `is not a valid cron expression: ${FIELD_NAMES[index]} values are ${min} to ${max}${names}, not "${shown}"`;
    if (last !== undefined && Number(first) > Number(last)) return `is not a valid cron expression: the ${FIELD_NAMES[index]} range "${shown}" ends before it starts`;
  }
  return undefined;
}

/**
 * croner's message for an expression it refuses, with the field named as this module names it and quoted as `written`
 * (the expression's fields) has it, not as rewritten for croner.
 */
function cronerRefusal(error: unknown, written: readonly string[]): string {
  const message = error instanceof Error ? error.message.replace(/^CronPattern: /, "") : String(error);
  // croner numbers the fields from 0, seconds first, as FIELD_NAMES does.
  const illegal = /^configuration entry (\d) \((.*)\) contains illegal characters\.$/.exec(message);
  const index = illegal === null ? undefined : Number(illegal[1]);
  const field = index === undefined ? undefined : FIELD_NAMES[index];
  if (illegal !== null && field !== undefined) return `is not a valid cron expression: the ${field} field ("${written[index!] ?? illegal[2]}") holds characters it does not take`;
  return `is not a valid cron expression: ${message.replace(/\bdayOfWeek\b/g, "day-of-week")}`;
}

/** Spring's day names, Monday 1 to Sunday 7 (java.time's numbering). */
const SPRING_DAYS = ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"] as const;

/**
 * A day-of-week field of plain values, ranges, lists and steps as Spring reads it, written as the list of days croner
 * reads the same way (0 or 7 Sunday). Spring counts from Monday 1 to Sunday 7: `*\/2` is Monday, Wednesday, Friday
 * and Sunday, `SUN/3` Sunday alone, and a range starting at 7 starts at Sunday (`7-2`, Sunday to Tuesday); croner
 * would count from Sunday 0. Parts with `L` or `#` (Quartz's, read alike by both) stay as they are, in a list too
 * (`*\/2,6L`: Spring's Monday, Wednesday, Friday, Sunday and the last Saturday), and so do `*` and `?`; a part that is
 * none of these is left for croner to refuse.
 */
function springDaysOfWeek(field: string): { ok: true; field: string } | { ok: false; message: string } {
  if (field === "*" || field === "?") return { ok: true, field };
  const days = new Set<number>();
  // Quartz's parts (`5L`, `MON#2`), read alike by both, stay as they are beside the days the others make (`*\/2,6L`).
  const quartzParts: string[] = [];
  for (const part of field.split(",")) {
    if (/[L#]/i.test(part)) {
      quartzParts.push(part);
      continue;
    }
    const numberedPart = SPRING_DAYS.reduce((text, day, index) => text.replace(new RegExp(day, "gi"), String(index + 1)), part);
    const match = /^(?:(\*)|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(numberedPart);
    if (match === null) return { ok: true, field };
    const [, star, first, last, step] = match;
    const valid = (day: number) => day >= 0 && day <= 7;
    let min = star !== undefined ? 1 : Number(first);
    const max = star !== undefined ? 7 : last !== undefined ? Number(last) : step !== undefined ? 7 : min;
    if (!valid(min) || !valid(max)) return { ok: false, message: `is not a valid cron expression: day-of-week values are 0 to 7 (or MON to SUN), not "${part}"` };
    // Spring: Sunday as the start of a range is 0, not 7.
    if (last !== undefined && min === 7) min = 0;
    if (min > max) return { ok: false, message: `is not a valid cron expression: the day-of-week range "${part}" ends before it starts` };
    const every = step === undefined ? 1 : Number(step);
    if (every < 1) return { ok: false, message: `is not a valid cron expression: the day-of-week step in "${part}" must be at least 1` };
    for (let day = min; day <= max; day += every) days.add(day % 7);
  }
  return { ok: true, field: [...[...days].sort((a, b) => a - b).map(String), ...quartzParts].join(",") };
}

/** Parses a Spring cron expression evaluated in `zoneId` (see {@link parseZone}). */
export function parseCron(expression: string, zoneId: string): CronParse {
  const pattern = springToCroner(expression);
  if (!pattern.ok) return pattern;
  const zone = parseZone(zoneId);
  if (!zone.ok) return zone;
  let cron: Cron;
  try {
    // AND of day-of-month and day-of-week as Spring does; `0/5` read as Spring's "from 0 every 5".
    cron = new Cron(pattern.pattern, { mode: "6-part", domAndDow: true, sloppyRanges: true, ...zone.zone });
  } catch (error) {
    return { ok: false, message: cronerRefusal(error, pattern.written) };
  }
  return { ok: true, schedule: { cron } };
}

/** Why a parsed schedule may not be saved (never fires, or fires more often than allowed), from `nowMs` on. */
export function cronRefusal(schedule: CronSchedule, nowMs: number): string | undefined {
  const fires = schedule.cron.nextRuns(INTERVAL_CHECK_FIRES, new Date(nowMs)).map((date) => date.getTime());
  if (fires.length === 0) return "never fires";
  for (let i = 1; i < fires.length; i++) {
    if (fires[i]! - fires[i - 1]! < MIN_FIRE_INTERVAL_MS) return `fires more often than once every ${MIN_FIRE_INTERVAL_MS / 1000} seconds, the shortest interval allowed`;
  }
  return undefined;
}

/** The window a schedule fires in, both ends inclusive (epoch ms); an absent end is open. */
export interface FireWindow {
  start?: number | undefined;
  end?: number | undefined;
}

/** The first fire strictly after `afterMs` inside `window`, or undefined when there is none. */
export function nextFireAfter(schedule: CronSchedule, afterMs: number, window: FireWindow = {}): number | undefined {
  return nextFires(schedule, afterMs, 1, window)[0];
}

/** Up to `count` fires strictly after `afterMs` inside `window`, in order. */
export function nextFires(schedule: CronSchedule, afterMs: number, count: number, window: FireWindow = {}): number[] {
  // croner's next run is strictly after its reference: a fire exactly at the window's start counts.
  const from = window.start !== undefined && window.start - 1 > afterMs ? window.start - 1 : afterMs;
  const fires = schedule.cron.nextRuns(count, new Date(from)).map((date) => date.getTime());
  return window.end === undefined ? fires : fires.filter((fire) => fire <= window.end!);
}

/** Most missed fires one catch-up starts (the latest ones; older ones are skipped). */
export const MAX_CATCHUP_FIRES = 10;

/**
 * The fires an alarm set for `armedFire` starts when it runs at `nowMs`. The armed fire is due whenever its alarm
 * runs (an alarm never runs before its time in production; tests run it early). Fires since then that also passed
 * (the alarm ran late: nothing ran while the service was down or the object was busy) are missed: with `catchUp`,
 * each of the latest {@link MAX_CATCHUP_FIRES} is due, oldest first; without, only the oldest fire is (the armed one,
 * when in the window), so a late alarm still starts one execution and the schedule goes on from there. The oldest, as
 * Conductor's scheduler starts the run time it stored (its `_scheduledTime`) however late, then arms the next fire
 * after now; and a retry of a failed alarm, later, picks the same fire again (its start found by its idempotency key).
 */
export function dueFires(schedule: CronSchedule, armedFire: number, nowMs: number, catchUp: boolean, window: FireWindow = {}): number[] {
  const inWindow = (fire: number) => (window.start === undefined || fire >= window.start) && (window.end === undefined || fire <= window.end);
  const missed =
    nowMs > armedFire
      ? schedule.cron
          .previousRuns(MAX_CATCHUP_FIRES, new Date(nowMs + 1))
          .map((date) => date.getTime())
          .filter((fire) => fire > armedFire)
          .reverse()
      : [];
  const due = [armedFire, ...missed].filter(inWindow);
  if (catchUp) return due.slice(-MAX_CATCHUP_FIRES);
  return due.slice(0, 1);
}
