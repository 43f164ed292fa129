// @ts-check
/**
 * A tiny DOM builder. Every piece of data reaches the page as text nodes or attribute values, never as HTML,
 * so nothing an execution carries (inputs, outputs, reasons) can inject markup.
 */

/** @typedef {string | number | boolean | null | undefined | Node | ChildList} Child */
/** @typedef {Array<Child>} ChildList */

/**
 * Creates an element. Attributes starting with `on` become listeners; `false`/`null`/`undefined` are skipped;
 * `true` sets a boolean attribute.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown>} [attributes]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2).toLowerCase(), /** @type {EventListener} */ (value));
    } else if (name === "className") {
      element.className = String(value);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

/**
 * Appends children (nested arrays flattened, empty values skipped).
 * @param {Node} parent
 * @param {Child[]} children
 */
export function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false || child === true) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * Replaces every child of `parent`.
 * @param {Node} parent
 * @param {...Child} children
 */
export function replaceChildren(parent, ...children) {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

/**
 * A one-line text box for text the service keeps only up to `max` characters (or refuses beyond): `maxlength`
 * stops the typing there, so what the user sees is what gets stored, and a hint under it says so with a running
 * count. Both count UTF-16 units, as the service does.
 * @param {{ id: string, name: string, max: number, note: string, value?: string }} options `note` opens the hint
 * @returns {{ input: HTMLInputElement, hint: HTMLParagraphElement }}
 */
export function limitedInput({ id, name, max, note, value }) {
  const hint = h("p", { id: `${id}-hint`, className: "help counter" });
  const input = h("input", { id, name, value, maxlength: String(max), "aria-describedby": hint.id });
  const count = () => (hint.textContent = `${note} ${input.value.length} / ${max}`);
  input.addEventListener("input", count);
  count();
  return { input, hint };
}

/**
 * Milliseconds since the epoch as local date and time; empty for 0 (Conductor's "not yet").
 * @param {number | null | undefined} ms
 */
export function formatTime(ms) {
  if (!ms) return "";
  const date = new Date(ms);
  const pad = (/** @type {number} */ n, size = 2) => String(n).padStart(size, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/**
 * A duration for people: "840 ms", "12.3 s", "4 min 5 s".
 * @param {number} ms
 */
export function formatDuration(ms) {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * One term and its value in a `dl.facts` list (a task's type, a schedule's next fire...).
 * @param {string} term
 * @param {...Child} value
 */
export function fact(term, ...value) {
  return h("div", { className: "fact" }, h("dt", {}, term), h("dd", {}, ...value));
}

/**
 * A status badge; its colour comes from the stylesheet's `status-<STATUS>` class.
 * @param {string} status
 */
export function statusBadge(status) {
  return h("span", { className: `badge status-${status}` }, status);
}

/**
 * A time as milliseconds since the epoch, from either form the API uses (numbers in executions, ISO 8601
 * strings in search summaries, as Conductor does); 0 when absent.
 * @param {unknown} value
 */
export function toMillis(value) {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value) {
    const parsed = Date.parse(value);
    return Number.isFinite(parsed) ? parsed : 0;
  }
  return 0;
}

/**
 * Runs `render` (which rebuilds part of `container`) and gives the keyboard focus back to the control that had
 * it, found again by its diagram step, its link target or its label: a live refresh must not move the focus.
 * @param {HTMLElement} container
 * @param {() => void} render
 */
export function keepingFocus(container, render) {
  const focused = document.activeElement;
  if (!(focused instanceof HTMLElement) || !container.contains(focused) || focused === container) {
    render();
    return;
  }
  const ref = focused.getAttribute("data-ref");
  const href = focused.getAttribute("href");
  const label = focused.textContent ?? "";
  render();
  if (container.contains(focused)) return;
  const candidates = [...container.querySelectorAll("button, a, [data-ref]")];
  const target = candidates.find((element) =>
    ref !== null ? element.getAttribute("data-ref") === ref : href !== null ? element.getAttribute("href") === href : element.textContent === label);
  if (target instanceof HTMLElement) target.focus();
}

/**
 * Tags as chips (`key=value`); nothing for none.
 * @param {Array<{ key: string, value: string }> | undefined} tags
 */
export function tagList(tags) {
  return (tags ?? []).map((tag) => h("span", { className: "tag" }, tag.value === "" ? tag.key : `${tag.key}=${tag.value}`));
}

/**
 * True when a list filter's `needle` (lower case) is in `name` or in one of `tags` as `key=value`.
 * @param {string} name
 * @param {Array<{ key: string, value: string }> | undefined} tags
 * @param {string} needle
 */
export function matchesFilter(name, tags, needle) {
  return name.toLowerCase().includes(needle) || (tags ?? []).some((tag) => `${tag.key}=${tag.value}`.toLowerCase().includes(needle));
}

/**
 * A button that copies `text` to the clipboard, saying whether it did.
 * @param {string} text
 */
export function copyButton(text) {
  const copy = h("button", {
    type: "button",
    className: "secondary small",
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(text);
        copy.textContent = "Copied";
      } catch {
        copy.textContent = "Copy failed";
      }
    },
  }, "Copy");
  return copy;
}
