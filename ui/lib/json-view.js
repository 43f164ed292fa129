// @ts-check
import { h } from "./dom.js";

const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

/**
 * Pretty-printed JSON in a `<pre>`, keys, strings, numbers and literals coloured by class (text nodes only).
 * @param {unknown} value
 * @param {string} [label] accessible name of the block
 */
export function jsonBlock(value, label) {
  const text = value === undefined ? "" : JSON.stringify(value, null, 2);
  const pre = h("pre", { className: "json", tabindex: "0", "aria-label": label });
  let last = 0;
  for (const match of text.matchAll(TOKEN)) {
    const index = match.index ?? 0;
    if (index > last) pre.append(text.slice(last, index));
    const [whole, string, colon, literal] = match;
    const kind = string !== undefined ? (colon ? "key" : "string") : literal !== undefined ? "literal" : "number";
    pre.append(h("span", { className: `json-${kind}` }, string !== undefined ? string : whole));
    if (colon) pre.append(colon);
    last = index + whole.length;
  }
  if (last < text.length) pre.append(text.slice(last));
  return pre;
}
