// @ts-check
/**
 * Pretty-prints JSON exactly as `JSON.stringify(value, null, 2)` does while recording the line of every path
 * (`tasks[1].inputParameters.uri`, the form of the API's `validationErrors`), so an error can be shown at its field.
 */

/**
 * @param {unknown} value
 * @returns {{ text: string, lineOf: Map<string, number> }} lines are 1-based
 */
export function prettyWithPaths(value) {
  /** @type {string[]} */
  const lines = [];
  /** @type {Map<string, number>} */
  const lineOf = new Map();

  /**
   * @param {unknown} node
   * @param {string} path
   * @param {string} indent
   * @param {string} prefix what precedes the value on its first line (indent and key)
   * @param {string} suffix a trailing comma or nothing
   */
  function write(node, path, indent, prefix, suffix) {
    lineOf.set(path, lines.length + 1);
    if (Array.isArray(node) && node.length > 0) {
      lines.push(`${prefix}[`);
      node.forEach((item, index) => write(item, `${path}[${index}]`, `${indent}  `, `${indent}  `, index < node.length - 1 ? "," : ""));
      lines.push(`${indent}]${suffix}`);
    } else if (node !== null && typeof node === "object" && !Array.isArray(node) && Object.keys(node).length > 0) {
      const entries = Object.entries(node).filter(([, child]) => child !== undefined);
      lines.push(`${prefix}{`);
      entries.forEach(([key, child], index) => {
        write(child, path === "" ? key : `${path}.${key}`, `${indent}  `, `${indent}  ${JSON.stringify(key)}: `, index < entries.length - 1 ? "," : "");
      });
      lines.push(`${indent}}${suffix}`);
    } else {
      lines.push(`${prefix}${JSON.stringify(node) ?? "null"}${suffix}`);
    }
  }

  write(value, "", "", "", "");
  return { text: lines.join("\n"), lineOf };
}

/**
 * The line of `path`, or of its nearest ancestor that exists (a missing field is shown at its parent).
 * @param {Map<string, number>} lineOf
 * @param {string} path
 * @returns {number}
 */
export function lineOfPath(lineOf, path) {
  let current = path;
  for (;;) {
    const line = lineOf.get(current);
    if (line !== undefined) return line;
    if (current === "") return 1;
    const cut = Math.max(current.lastIndexOf("."), current.lastIndexOf("["));
    current = cut <= 0 ? "" : current.slice(0, cut);
  }
}
