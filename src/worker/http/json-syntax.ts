/**
 * Where a text stops being JSON, and why, for the 400 of a request body that does not parse. `JSON.parse`'s own
 * message is no help here: it may quote the body (a credential with it), and for some mistakes (`[1,]`) it names no
 * position at all. The description quotes only the structural characters it expects or finds, never the body's text.
 */

/** A problem's place in the text (1-based, a column counting UTF-16 code units as editors count characters) and what is wrong there. */
export interface JsonSyntaxProblem {
  line: number;
  column: number;
  problem: string;
}

type Expectation = "value" | "first-value" | "member-value" | "key" | "first-key" | "colon" | "next";

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERALS = ["true", "false", "null"] as const;
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX4 = /[0-9a-fA-F]{4}/y;

/**
 * The first place where `text` is not JSON (RFC 8259, as `JSON.parse` reads it), or undefined when it is JSON.
 * Iterative, so a deeply nested body cannot exhaust the stack.
 */
export function findJsonSyntaxProblem(text: string): JsonSyntaxProblem | undefined {
  const containers: Array<"{" | "["> = [];
  let expect: Expectation = "value";
  let index = 0;
  const at = (position: number, problem: string): JsonSyntaxProblem => {
    const before = text.slice(0, position).split("\n");
    return { line: before.length, column: before[before.length - 1]!.length + 1, problem };
  };
  /** What a character where a value or a name belongs tells of the mistake, the usual ones named. */
  const misplaced = (char: string, wanted: string): JsonSyntaxProblem => {
    if (char === "}" || char === "]") {
      const open = containers[containers.length - 1];
      const closing = open === "{" ? "}" : open === "[" ? "]" : undefined;
      if (closing === undefined) return at(index, `a '${char}' that closes nothing`);
      if (char !== closing) return at(index, `a '${char}' where the '${open}' before it is still open (it closes with '${closing}')`);
      if (expect === "member-value") return at(index, "a value missing after ':'");
      if (expect === "value" || expect === "key") return at(index, `a comma before '${char}': JSON allows no trailing comma`);
    }
    if (char === "'") return at(index, "a single quote: JSON strings and names take double quotes");
    if (char === "/") return at(index, "a comment: JSON has none");
    return at(index, `expected ${wanted}`);
  };
  /** Moves `index` past the string opening there; the problem inside it instead, if any. */
  const skipString = (): JsonSyntaxProblem | undefined => {
    for (let position = index + 1; position < text.length; position++) {
      const code = text.charCodeAt(position);
      if (code === 0x22) {
        index = position + 1;
        return undefined;
      }
      if (code < 0x20) return at(position, "a control character (a line break, a tab) inside a string: write it escaped, as \\n or \\t");
      if (code === 0x5c) {
        const escaped = text[position + 1];
        if (escaped === "u") {
          HEX4.lastIndex = position + 2;
          if (!HEX4.test(text)) return at(position, "a \\u escape without four hexadecimal digits");
          position += 5;
        } else if (escaped !== undefined && ESCAPES.has(escaped)) position += 1;
        else return at(position, "a backslash that starts no JSON escape (write \\\\ for a backslash)");
      }
    }
    return at(index, "a string that is not closed");
  };
  /** Ends the innermost object or array at its closing character: what follows is what follows a value. */
  const close = () => {
    containers.pop();
    index++;
    expect = "next";
  };
  for (;;) {
    while (index < text.length && WHITESPACE.has(text[index]!)) index++;
    if (index >= text.length) {
      if (expect === "next" && containers.length === 0) return undefined;
      return at(index, containers.length > 0 ? `the body ends before its JSON does: an unclosed '${containers[containers.length - 1]}'` : "the body ends before its JSON does");
    }
    const char = text[index]!;
    switch (expect) {
      case "value":
      case "first-value":
      case "member-value": {
        if (char === "]" && expect === "first-value") close();
        else if (char === "{" || char === "[") {
          containers.push(char);
          index++;
          expect = char === "{" ? "first-key" : "first-value";
        } else if (char === '"') {
          const problem = skipString();
          if (problem) return problem;
          expect = "next";
        } else {
          NUMBER.lastIndex = index;
          const literal = LITERALS.find((word) => text.startsWith(word, index));
          if (literal) index += literal.length;
          else if (NUMBER.test(text)) index = NUMBER.lastIndex;
          else return misplaced(char, "a value (an object, an array, a string in double quotes, a number, true, false or null)");
          expect = "next";
        }
        break;
      }
      case "key":
      case "first-key": {
        if (char === "}" && expect === "first-key") close();
        else if (char === '"') {
          const problem = skipString();
          if (problem) return problem;
          expect = "colon";
        } else return misplaced(char, "a property name in double quotes");
        break;
      }
      case "colon": {
        if (char !== ":") return at(index, "expected ':' after the property name");
        index++;
        expect = "member-value";
        break;
      }
      case "next": {
        const open = containers[containers.length - 1];
        if (open === undefined) return at(index, "more after the end of the JSON value (two values? a missing '[' or ','?)");
        const closing = open === "{" ? "}" : "]";
        if (char === closing) close();
        else if (char === ",") {
          expect = open === "{" ? "key" : "value";
          index++;
        } else return at(index, `expected ',' or '${closing}'`);
        break;
      }
    }
  }
}
