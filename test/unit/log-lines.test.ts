import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// An operator reading `wrangler tail` looks a line up in docs/reliability.md, "Logs": every line the service writes is
// one JSON object with a `msg`, and every `msg` is listed there (up to its first `;`, `:` or `(`, where the lines go on
// to say what happens next).

/** Every TypeScript file under `dir`, recursively. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const sources = sourceFiles("src").map((path) => ({ path, text: readFileSync(path, "utf8") }));
const logsSection = (() => {
  const doc = readFileSync("docs/reliability.md", "utf8");
  const start = doc.indexOf("\n## Logs");
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end === -1 ? undefined : end).replace(/\s+/g, " ");
})();

/** The `msg` texts of the service's log lines, and the `failure` texts a limit object's notice rounds log as theirs. */
function loggedMessages(): Array<{ path: string; msg: string }> {
  return sources.flatMap(({ path, text }) => [...text.matchAll(/\b(?:msg|failure): "([^"]+)"/g)].map((match) => ({ path, msg: match[1]! })));
}

describe("the service's log lines", () => {
  it("are each one JSON object with a msg, written with console.error or console.warn", () => {
    const calls = sources.flatMap(({ path, text }) =>
      // A console call in code, not in a comment or in the text of a script run by the interpreter.
      text.split("\n").filter((line) => /\bconsole\.\w+\(/.test(line) && !/^\s*(?:\*|\/\/|")/.test(line) && !path.includes("quickjs-runner")).map((line) => ({ path, line: line.trim() })),
    );
    expect(calls.length).toBeGreaterThan(20);
    for (const { path, line } of calls) expect(line, path).toMatch(/console\.(?:error|warn)\(JSON\.stringify\(\{ msg: /);
  });

  it("are each listed in docs/reliability.md, Logs", () => {
    const messages = loggedMessages();
    expect(messages.length).toBeGreaterThan(30);
    for (const { path, msg } of messages) {
      const key = msg.replace(/[;:(].*$/, "").trim();
      expect(logsSection, `${path}: "${msg}"`).toContain(key);
    }
  });
});
