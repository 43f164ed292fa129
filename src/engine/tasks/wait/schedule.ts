/**
 * The two ways a WAIT task gives its wake-up time, read as Conductor reads them: a `duration` in the format of
 * its DateTimeUtils.parseDuration, or an `until` date-time in one of its formats. Pure; no clock.
 */

/**
 * Conductor's duration pattern: days, hours, minutes, seconds, each optional but in that order, any case.
 * Anchored: Conductor's `Matcher.matches()` takes the whole text.
 */
const DURATION = /^\s*(?:(\d+)\s*(?:days?|d))?\s*(?:(\d+)\s*(?:hours?|hrs?|h))?\s*(?:(\d+)\s*(?:minutes?|mins?|m))?\s*(?:(\d+)\s*(?:seconds?|secs?|s))?\s*$/i;

/** The accepted duration format, for messages. */
export const DURATION_FORMAT = 'days, hours, minutes and seconds in that order, such as "10s", "30 seconds", "5m", "1h 30m" or "2 days 3 hours"';

/** The accepted until formats, for messages. */
export const UNTIL_FORMAT =
  '"yyyy-MM-dd HH:mm z" (z: UTC, GMT or Z, an offset such as +05:30, -0800 or GMT-08:00, or one of EST, EDT, CST, CDT, MST, MDT, PST, PDT), "yyyy-MM-dd HH:mm" or "yyyy-MM-dd" (those two in UTC)';

/**
 * Whether a WAIT's `duration` or `until` (as written, or resolved) is given. Null, absent and blank text ("" or only
 * spaces, which forms write for an input left empty) are not, as Conductor reads them: its registration check
 * (WorkflowTaskTypeConstraint), WaitTaskMapper and Wait task look at a value only when `StringUtils.isNotBlank`, so such
 * a WAIT waits, untimed, until completed from outside, or uses the other input.
 */
export function isWaitInputGiven(value: unknown): boolean {
  return value !== undefined && value !== null && !(typeof value === "string" && value.trim() === "");
}

/** The latest moment a Date can hold (and so an alarm can be set for), epoch ms. */
const MAX_TIME = 8.64e15;

/**
 * The length in ms of a duration such as "1h 30m", or undefined when `text` is not one. An empty text, which
 * Conductor's pattern would match as zero, is not one: Conductor never reads it as a duration (a blank `duration` is
 * not given: see {@link isWaitInputGiven}).
 */
export function parseWaitDuration(text: string): number | undefined {
  if (text.trim() === "") return undefined;
  const match = DURATION.exec(text);
  if (!match) return undefined;
  const [days, hours, minutes, seconds] = match.slice(1).map((group) => (group === undefined ? 0 : Number(group)));
  const ms = (((days! * 24 + hours!) * 60 + minutes!) * 60 + seconds!) * 1000;
  return Number.isSafeInteger(ms) && ms <= MAX_TIME ? ms : undefined;
}

/** yyyy-MM-dd, optionally followed by HH:mm and, after that, a zone. */
const DATE_TIME = /^\s*(\d{4})-(\d{2})-(\d{2})(?:\s+(\d{2}):(\d{2})(?:\s+(\S+))?)?\s*$/;

/** A zone written as UTC, GMT, UT or Z, optionally followed by an offset; or an offset alone. */
const OFFSET_ZONE = /^(?:(?:UTC|GMT|UT|Z)(?:([+-])(\d{1,2})(?::?(\d{2}))?)?|([+-])(\d{2})(?::?(\d{2}))?)$/i;

/**
 * North American abbreviations Java's SimpleDateFormat reads as fixed offsets (minutes east of UTC). Other names
 * are ambiguous (IST, CST elsewhere) or need a time-zone database, so they are refused rather than guessed.
 */
const NAMED_ZONES: ReadonlyMap<string, number> = new Map([
  ["EST", -300],
  ["EDT", -240],
  ["CST", -360],
  ["CDT", -300],
  ["MST", -420],
  ["MDT", -360],
  ["PST", -480],
  ["PDT", -420],
]);

/** Conductor's (Java's) bound on a zone offset: ±18 hours. */
const MAX_OFFSET_MINUTES = 18 * 60;

/** The zone's offset east of UTC in minutes, or undefined when it is not one this service reads. */
function zoneOffsetMinutes(zone: string): number | undefined {
  const named = NAMED_ZONES.get(zone.toUpperCase());
  if (named !== undefined) return named;
  const match = OFFSET_ZONE.exec(zone);
  if (!match) return undefined;
  const sign = match[1] ?? match[4];
  if (sign === undefined) return 0;
  const hours = Number(match[2] ?? match[5]);
  const minutes = Number(match[3] ?? match[6] ?? "0");
  if (minutes > 59) return undefined;
  const offset = hours * 60 + minutes;
  if (offset > MAX_OFFSET_MINUTES) return undefined;
  return sign === "-" ? -offset : offset;
}

/**
 * The moment (epoch ms) an `until` such as "2030-01-02 03:04 UTC" names, or undefined when `text` is not in one of
 * Conductor's formats ({@link UNTIL_FORMAT}) or names a date or time that does not exist (read strictly: Java's
 * lenient parsing would turn February 30 into March 2). Without a zone the time is in UTC, where Conductor takes
 * its server's zone: this service has no other to offer.
 */
export function parseWaitUntil(text: string): number | undefined {
  const match = DATE_TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute] = match.slice(1, 6).map((group) => (group === undefined ? 0 : Number(group)));
  const zone = match[6];
  const offset = zone === undefined ? 0 : zoneOffsetMinutes(zone);
  if (offset === undefined || hour! > 23 || minute! > 59) return undefined;
  const local = Date.UTC(year!, month! - 1, day!, hour!, minute!);
  const check = new Date(local);
  // Date.UTC rolls an impossible date over (month 13, February 30): such a date does not exist.
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month! - 1 || check.getUTCDate() !== day) return undefined;
  return local - offset * 60_000;
}

/**
 * The latest wake-up time a WAIT may have: what a Date can hold. An alarm cannot be set past 2189: the object arms the
 * latest it can and, woken then with nothing due, arms it again.
 */
export const MAX_WAKE_TIME = MAX_TIME;
