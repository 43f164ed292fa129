/**
 * What HTTP itself accepts in a request line and header fields, checked before a value reaches `fetch`
 * (which throws an opaque TypeError) or a `Headers` lookup. Pure.
 */

/** RFC 7230 `token`: the characters a method or a header name may hold. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The rule in words, for messages. */
export const TOKEN_DESCRIPTION = "a token (RFC 7230: letters, digits and !#$%&'*+-.^_`|~, no spaces, colons or other separators)";

/** True when `name` can be a header name. */
export function isHeaderName(name: unknown): boolean {
  return typeof name === "string" && TOKEN.test(name);
}

/** True when `value` can be sent as a header value: no NUL, CR or LF, which would end or split the header. */
export function isHeaderValueText(value: string): boolean {
  return !/[\0\r\n]/.test(value);
}

/**
 * Why `value` cannot be sent as a header value, or undefined when it can: {@link isHeaderValueText}, and no character
 * beyond Latin-1 (U+00FF), which a header has no form for (fetch's ByteString: a browser throws a TypeError; workerd
 * sends its UTF-8 bytes with a warning, which a receiver reading Latin-1, as HTTP's obs-text, reads as other
 * characters). Never quotes the value, which may hold a secret.
 */
export function headerValueProblem(value: string): string | undefined {
  if (!isHeaderValueText(value)) return "it holds a line break or NUL";
  if (/[^\u0000-\u00ff]/.test(value)) return "it holds a character beyond Latin-1 (U+00FF), which no header can carry: percent-encode it (as RFC 8187's UTF-8'' form does) or send it in the body";
  return undefined;
}

/**
 * True for `.` and `..`: a name that would be one path segment of a URL, and which a client's URL resolves away
 * (`/api/metadata/workflow/..` is `/api/metadata/`), so that a request about it reaches another route.
 */
export function isDotSegment(name: string): boolean {
  return name === "." || name === "..";
}

/**
 * True when `text` holds a lone surrogate (`"\ud800"` in JSON, half of a character outside the BMP): a URL path cannot
 * carry it (a segment is percent-decoded as UTF-8, which has no form for it, so `%ED%A0%80` reads as U+FFFD), and D1
 * keeps its bytes, read back as three U+FFFD. A name holding one could be stored but never named again to read or
 * delete it.
 */
export function holdsLoneSurrogate(text: string): boolean {
  return /\p{Cs}/u.test(text);
}

/** The rule of {@link holdsLoneSurrogate} in words, for messages that go on to say why. */
export const LONE_SURROGATE_RULE = "must not hold a lone surrogate (a \\uD800-\\uDFFF escape without its pair, such as half an emoji)";

/** Why a name may not {@link holdsLoneSurrogate}. */
export const LONE_SURROGATE_MESSAGE = `${LONE_SURROGATE_RULE}: a URL cannot carry it, so no request could name it again`;

/**
 * Why free text kept in a text column (a correlation id, a reason, a log line, a user's name, a group's description)
 * may not {@link holdsLoneSurrogate}: D1 and a Durable Object's SQLite keep its UTF-8 bytes, which have no form for half
 * a character, and read it back as U+FFFD, so it would be stored as other text than was sent. JSON data (inputs,
 * outputs, variables) is stored as JSON text, where it is an escape (`\ud83d`), and kept exactly.
 */
export const LONE_SURROGATE_TEXT_MESSAGE = `${LONE_SURROGATE_RULE}: it is stored as UTF-8 text, which has no form for it, and would read back as U+FFFD`;

/** `text` with each lone surrogate (see {@link holdsLoneSurrogate}) replaced by U+FFFD, as UTF-8 text stores it. */
export function wellFormed(text: string): string {
  return text.replace(/\p{Cs}/gu, "\uFFFD");
}

/** Why a name may not be {@link isDotSegment}. */
export const DOT_SEGMENT_MESSAGE = "must not be . or .. (a URL naming it would resolve it away)";
