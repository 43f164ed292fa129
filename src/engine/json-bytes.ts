/**
 * The size of a value as JSON, counted without writing it out. A leaf module (no imports), so that the expression
 * language can bound what it builds with it as the decider bounds what it stores.
 */

/**
 * The UTF-8 bytes of `value` as JSON.stringify writes it, counted without writing it: exact when at most `cap`, else a
 * count past `cap` where counting stopped. A value the engine resolved may hold the same large value many times over
 * (each reference is written out, and counted, where it appears), so writing it out to measure it could take more
 * memory than an isolate has, or more than a string may hold. Properties that JSON.stringify leaves out (undefined)
 * are left out; `toJSON` is not looked for (payloads are plain JSON).
 */
export function jsonBytesWithin(value: unknown, cap: number): number {
  const meter = { total: 0, cap };
  countJson(value, meter);
  return meter.total;
}

/** What {@link countJson} has counted so far, and where it stops. */
interface JsonMeter {
  total: number;
  readonly cap: number;
}

/** Adds the bytes of `value` as JSON to `meter`; false once it is past its cap (the rest is not counted). */
function countJson(value: unknown, meter: JsonMeter): boolean {
  switch (typeof value) {
    case "string":
      meter.total += stringJsonBytes(value, meter.cap - meter.total);
      break;
    case "number":
      meter.total += Number.isFinite(value) ? String(value).length : 4;
      break;
    case "boolean":
      meter.total += value ? 4 : 5;
      break;
    case "object":
      if (value === null) meter.total += 4;
      else if (Array.isArray(value)) return countArray(value, meter);
      else return countObject(value as Record<string, unknown>, meter);
      break;
    default:
      // undefined (and what JSON has no form for) in an array: JSON.stringify writes null.
      meter.total += 4;
  }
  return meter.total <= meter.cap;
}

function countArray(items: readonly unknown[], meter: JsonMeter): boolean {
  // The brackets and the commas between items.
  meter.total += 2 + Math.max(0, items.length - 1);
  for (const item of items) if (!countJson(item, meter)) return false;
  return meter.total <= meter.cap;
}

function countObject(object: Record<string, unknown>, meter: JsonMeter): boolean {
  let written = 0;
  meter.total += 2;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const item = object[key];
    if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
    // A comma before every property but the first, and the colon after its key.
    meter.total += (written++ > 0 ? 1 : 0) + stringJsonBytes(key, meter.cap - meter.total) + 1;
    if (!countJson(item, meter)) return false;
  }
  return meter.total <= meter.cap;
}

/** Text that JSON writes as it is, one byte a character: printable ASCII but the quote and the backslash. */
const NEEDS_COUNTING = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;

/**
 * The UTF-8 bytes of `text` as a JSON string, quotes included; once past `room`, a count past it (the rest unread).
 * Most text is plain ASCII, measured by one native scan.
 */
function stringJsonBytes(text: string, room: number): number {
  // At least a byte a UTF-16 unit: longer than the room, it is over whatever it holds.
  if (text.length + 2 > room || !NEEDS_COUNTING.test(text)) return text.length + 2;
  let bytes = 2;
  for (let at = 0; at < text.length; at++) {
    const unit = text.charCodeAt(at);
    if (unit < 0x80) bytes += unit === 0x22 || unit === 0x5c ? 2 : unit >= 0x20 ? 1 : SHORT_ESCAPES.has(unit) ? 2 : 6;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(at + 1))) {
      bytes += 4;
      at++;
    } else bytes += unit >= 0xd800 && unit <= 0xdfff ? 6 : 3; // a lone surrogate is written \udxxx
  }
  return bytes;
}

/** Control characters JSON writes in two characters (\b \t \n \f \r); the others take six (\u00XX). */
const SHORT_ESCAPES = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/**
 * `value` as JSON text, when it is at most `cap` UTF-8 bytes; undefined, without writing it out, when it is more. For a
 * value an expression resolved to where text is wanted (a key, a name): a query's subtrees may be tens of MB as JSON.
 */
export function jsonWithin(value: unknown, cap: number): string | undefined {
  return jsonBytesWithin(value, cap) > cap ? undefined : JSON.stringify(value);
}
