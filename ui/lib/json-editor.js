// @ts-check
import { errorMessage } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { lineOfPath, prettyWithPaths } from "./json-paths.js";

/**
 * @typedef {object} JsonEditor
 * @property {HTMLElement} element
 * @property {() => unknown} read parses the text (reformatting it so lines match paths); throws a SyntaxError with a line
 * @property {(value: unknown) => void} write
 * @property {(errors: Array<{path: string, message: string}>) => void} showErrors marks each error at its field's line
 * @property {(message: string, line?: number) => void} showProblem one message, optionally at a line
 * @property {() => void} clearErrors
 */

/**
 * A JSON text editor: a textarea over a backdrop that highlights the lines of validation errors, a line gutter
 * and a list of errors (each focuses its line). Plain textarea editing, so it works with any keyboard and
 * screen reader. `readOnly` shows the text for reading (and copying) to a user who may not change what it holds.
 * @param {{ label: string, value?: unknown, rows?: number, id: string, readOnly?: boolean }} options
 * @returns {JsonEditor}
 */
export function jsonEditor({ label, value, rows = 18, id, readOnly = false }) {
  const textarea = h("textarea", { id, className: "editor-text", rows: String(rows), spellcheck: "false", autocomplete: "off", readonly: readOnly, "aria-describedby": `${id}-errors` });
  const backdrop = h("div", { className: "editor-backdrop", "aria-hidden": "true" });
  const gutter = h("div", { className: "editor-gutter", "aria-hidden": "true" });
  const errorList = h("ul", { id: `${id}-errors`, className: "editor-errors", "aria-live": "polite" });
  /** @type {Map<string, number>} */
  let lineOf = new Map();
  /** @type {Map<number, string[]>} */
  let marked = new Map();

  function render() {
    const lines = textarea.value.split("\n");
    replaceChildren(gutter, lines.map((_, index) => h("div", { className: marked.has(index + 1) ? "gutter-line marked" : "gutter-line" }, String(index + 1))));
    replaceChildren(backdrop, lines.map((line, index) => h("div", { className: marked.has(index + 1) ? "backdrop-line marked" : "backdrop-line" }, line || " ")));
    syncScroll();
  }
  function syncScroll() {
    backdrop.scrollTop = textarea.scrollTop;
    backdrop.scrollLeft = textarea.scrollLeft;
    gutter.scrollTop = textarea.scrollTop;
  }
  /** @param {number} line */
  function focusLine(line) {
    const lines = textarea.value.split("\n");
    const start = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0);
    textarea.focus();
    textarea.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
    const lineHeight = textarea.scrollHeight / Math.max(1, lines.length);
    textarea.scrollTop = Math.max(0, (line - 3) * lineHeight);
    syncScroll();
  }
  /** @param {Map<number, string[]>} byLine @param {Array<{line: number, text: string}>} items */
  function mark(byLine, items) {
    marked = byLine;
    replaceChildren(errorList, items.map(({ line, text }) => h("li", {}, h("button", { type: "button", className: "link", onclick: () => focusLine(line) }, `Line ${line}: `), text)));
    textarea.setAttribute("aria-invalid", items.length > 0 ? "true" : "false");
    render();
  }

  textarea.addEventListener("input", () => {
    if (marked.size > 0) mark(new Map(), []);
    else render();
  });
  textarea.addEventListener("scroll", syncScroll);

  const editor = {
    element: h("div", { className: "editor" },
      h("label", { for: id, className: "editor-label" }, label),
      // The textarea sets the frame's size; gutter and backdrop lie under it and follow its scrolling.
      h("div", { className: "editor-frame" }, gutter, backdrop, textarea),
      errorList),
    read() {
      /** @type {unknown} */
      let value;
      try {
        value = JSON.parse(textarea.value);
      } catch (error) {
        const message = errorMessage(error);
        throw new SyntaxError(`Not valid JSON: ${message}`, { cause: { line: lineOfSyntaxError(textarea.value, message) } });
      }
      editor.write(value);
      return value;
    },
    /** @param {unknown} next */
    write(next) {
      const pretty = prettyWithPaths(next);
      lineOf = pretty.lineOf;
      textarea.value = pretty.text;
      mark(new Map(), []);
    },
    /** @param {Array<{path: string, message: string}>} errors */
    showErrors(errors) {
      /** @type {Map<number, string[]>} */
      const byLine = new Map();
      const items = errors.map(({ path, message }) => {
        const line = lineOfPath(lineOf, path);
        byLine.set(line, [...(byLine.get(line) ?? []), message]);
        return { line, text: `${path || "(whole document)"}: ${message}` };
      });
      mark(byLine, items);
      if (items[0]) focusLine(items[0].line);
    },
    /** @param {string} message @param {number} [line] */
    showProblem(message, line) {
      mark(line ? new Map([[line, [message]]]) : new Map(), [{ line: line ?? 1, text: message }]);
    },
    clearErrors() {
      mark(new Map(), []);
    },
  };
  editor.write(value ?? {});
  return editor;
}

/**
 * Parses an editor's JSON object, showing the problem at its line when it is not one.
 * @param {JsonEditor} editor
 * @returns {Record<string, unknown>}
 */
export function readObject(editor) {
  /** @type {unknown} */
  let value;
  try {
    value = editor.read();
  } catch (error) {
    const line = error instanceof SyntaxError ? /** @type {{line?: number} | undefined} */ (error.cause)?.line : undefined;
    editor.showProblem(errorMessage(error), line);
    throw new Error("Fix the JSON first.");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    editor.showProblem("Expected a JSON object.");
    throw new Error("Fix the JSON first.");
  }
  return /** @type {Record<string, unknown>} */ (value);
}

/**
 * The line a JSON.parse message points at (engines say "position N" or "line L column C").
 * @param {string} text
 * @param {string} message
 */
function lineOfSyntaxError(text, message) {
  const lineColumn = /line (\d+)/.exec(message);
  if (lineColumn) return Number(lineColumn[1]);
  const position = /position (\d+)/.exec(message);
  if (position) return text.slice(0, Number(position[1])).split("\n").length;
  return undefined;
}
