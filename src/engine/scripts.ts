/**
 * The engine's view of a JavaScript evaluator (INLINE tasks, SWITCH `javascript` expressions, DO_WHILE conditions). Workers may not
 * evaluate code themselves, so the actor hands the engine a sandboxed interpreter through {@link DecideEnv}; the
 * engine only asks it to run a script over a task's input.
 */
import { isRecord } from "./definition/checks";
import { isLoopType, type JoinEvaluatorType, type JsonObject, type JsonValue, type SwitchEvaluatorType } from "./model";

/**
 * What running a script gave: its completion value as JSON, or why it failed; either way, with the lines it wrote to
 * `console` when it wrote any (see {@link ScriptLogs}).
 */
export type ScriptOutcome =
  | { readonly ok: true; readonly value: JsonValue; readonly logs?: ScriptLogs }
  | {
      readonly ok: false;
      readonly logs?: ScriptLogs;
      readonly error: string;
      /**
       * True when the script did not fail by itself: the runner's budget stopped it (Conductor's evaluator timeout) or the
       * interpreter broke under it. What a task may retry; a script that throws or does not parse fails the same way again.
       */
      readonly stopped?: true;
    };

/**
 * The lines a script wrote with `console.log` (`info`, `warn`, `error`, `debug`), in order, each as Conductor's
 * ConsoleBridge writes it into the task's log (`[Log] "checking 21"`), bounded by the runner (a count and a size per run,
 * the last line saying what was left out). Absent or empty when it wrote none.
 */
export type ScriptLogs = readonly string[];

/** Runs scripts with `$` bound to a task's input, as Conductor's javascript/graaljs evaluators do. */
export interface ScriptRunner {
  /**
   * Runs `source` as a classic script with the global `$` set to `input`. The outcome is the script's completion value
   * (the value of its last expression statement) as JSON; `undefined` and functions become null. A thrown error, a
   * syntax error, or running past the runner's memory or instruction budget is a failed outcome, never an exception.
   */
  run(source: string, input: JsonObject): ScriptOutcome;
  /** Why `source` does not parse as a script, or undefined when it does. Nothing is run. */
  syntaxError(source: string): string | undefined;
  /**
   * The work the runner's runs have done so far, in script budgets (1 is the most one script may run, about a million
   * loop iterations, a few hundred ms of CPU; a jq filter may take 5); it only grows. Each run is bounded, but a
   * decision may run many (a loop of INLINE tasks, a fork of them): the decider reads this to hold the next ones back
   * for a later decision once it has done enough (see `SCRIPT_BUDGETS_PER_DECISION` in decider.ts). A runner without
   * it counts as doing none.
   */
  spent?(): number;
}

/**
 * The script `task` runs, if any, and the field holding it: an INLINE's `inputParameters.expression`, a SWITCH's
 * `expression` or a DO_WHILE's `loopCondition`, each when its evaluatorType is javascript or graaljs (for a DO_WHILE,
 * also when it has none), a DECISION's `caseExpression`, or a JOIN's join script (see {@link joinScript}). Reads a
 * task as received too, whatever its shape.
 */
export function taskScript(task: unknown): { source: string; field: string } | undefined {
  if (!isRecord(task)) return undefined;
  if (task["type"] === "INLINE") {
    const input = task["inputParameters"];
    if (!isRecord(input)) return undefined;
    const expression = input["expression"];
    // No evaluatorType is javascript, as Conductor's Inline reads it (see inlineEvaluatorType).
    return isScriptEvaluator(input["evaluatorType"] ?? "javascript") && typeof expression === "string" ? { source: expression, field: "inputParameters.expression" } : undefined;
  }
  const expression = task["expression"];
  if (task["type"] === "SWITCH" && isScriptEvaluator(task["evaluatorType"]) && typeof expression === "string") return { source: expression, field: "expression" };
  if (task["type"] === "JOIN") {
    const source = joinScript(task);
    return source === undefined ? undefined : { source, field: "expression" };
  }
  const caseExpression = task["caseExpression"];
  // A DECISION's caseExpression is JavaScript whenever it is not blank (see decisionEvaluator).
  if (task["type"] === "DECISION" && typeof caseExpression === "string" && caseExpression.trim() !== "") return { source: caseExpression, field: "caseExpression" };
  if (task["type"] === "HTTP_POLL") return httpPollCondition(task["inputParameters"]);
  if (task["type"] === "LAMBDA") {
    const input = task["inputParameters"];
    const script = isRecord(input) ? input["scriptExpression"] : undefined;
    // Checked as it runs: the body of a function called at once.
    return typeof script === "string" ? { source: lambdaScript(script), field: "inputParameters.scriptExpression" } : undefined;
  }
  const condition = task["loopCondition"];
  // A DO_WHILE's (or WHILE's) condition is javascript when no evaluatorType is given, as in Conductor OSS.
  const loopEvaluator = givenEvaluatorType(task) ?? "javascript";
  if (isLoopType(task["type"]) && isScriptEvaluator(loopEvaluator) && typeof condition === "string" && condition.trim() !== "") return { source: condition, field: "loopCondition" };
  return undefined;
}

/**
 * The scripts of a CONDITIONAL_FORK's branch conditions (those whose evaluatorType is javascript or graaljs), each with
 * its field: none for any other task. Reads a task as received too, whatever its shape.
 */
export function conditionScripts(task: unknown): Array<{ source: string; field: string }> {
  if (!isRecord(task) || task["type"] !== "CONDITIONAL_FORK" || !Array.isArray(task["conditionalBranches"])) return [];
  return task["conditionalBranches"].flatMap((branch: unknown, position) => {
    const condition = isRecord(branch) ? branch["condition"] : undefined;
    if (!isRecord(condition) || !isScriptEvaluator(condition["evaluatorType"]) || typeof condition["expression"] !== "string") return [];
    return [{ source: condition["expression"], field: `conditionalBranches[${position}].condition.expression` }];
  });
}

/**
 * The script LAMBDA runs for `scriptExpression`: Conductor's LAMBDA takes a function body (`if ($.a) { return 1 }`),
 * so it runs as the body of a function called at once, its return value the result. The body starts on the script's
 * first line, so that an error's line is the body's own; it ends on a line of its own, so that a comment ending the
 * body leaves the call alone.
 */
export function lambdaScript(scriptExpression: string): string {
  return `(function () {${scriptExpression}\n})()`;
}

/** An HTTP_POLL's terminationCondition as written: in `http_request` (which wins) or flat in its input. */
function httpPollCondition(input: unknown): { source: string; field: string } | undefined {
  if (!isRecord(input)) return undefined;
  const nested = input["http_request"];
  if (isRecord(nested) && typeof nested["terminationCondition"] === "string") return { source: nested["terminationCondition"], field: "inputParameters.http_request.terminationCondition" };
  return typeof input["terminationCondition"] === "string" ? { source: input["terminationCondition"], field: "inputParameters.terminationCondition" } : undefined;
}

/** The evaluator types a JOIN's join script may name: Orkes' UI and SDKs write `js`; its other evaluators' names too. */
export const JOIN_EVALUATOR_TYPES = ["js", "javascript", "graaljs"] as const;

/**
 * A JOIN's join script (Orkes' `expression` on a JOIN), when it has one: a non-blank `expression` whose evaluatorType
 * is one of {@link JOIN_EVALUATOR_TYPES} or none (Orkes documents the expression alone). A blank one is none: Orkes'
 * UI writes "" when its script box is ticked but left empty. Reads a task as received too, whatever its shape.
 */
export function joinScript(task: unknown): string | undefined {
  if (!isRecord(task) || task["type"] !== "JOIN") return undefined;
  const expression = task["expression"];
  const evaluatorType = givenEvaluatorType(task) ?? "js";
  if (typeof expression !== "string" || expression.trim() === "") return undefined;
  return (JOIN_EVALUATOR_TYPES as readonly unknown[]).includes(evaluatorType) ? expression : undefined;
}

/**
 * A task's own `evaluatorType` as received, undefined when it has none: absent, null, or "" (the Go SDK's client writes
 * every unset text field as ""; registration reads it as absent, see BLANK_MEANS_UNSET), so that the script checked at
 * registration is the one that runs.
 */
function givenEvaluatorType(task: Readonly<Record<string, unknown>>): unknown {
  const evaluatorType = task["evaluatorType"];
  return evaluatorType === "" || evaluatorType === null ? undefined : evaluatorType;
}

function isScriptEvaluator(evaluatorType: unknown): boolean {
  return evaluatorType === "javascript" || evaluatorType === "graaljs";
}

/**
 * The names a script reads off `$` (`$.name`, `$['name']`, `$["name"]`; `a$.b` reads nothing off it) that `input`, what
 * `$` is bound to, does not hold: once each, in order. A script failing with "cannot read property of undefined" most
 * often read one (`$.loop['iteration']`, `$.workflow.input.kind`), which its error does not name.
 */
export function unboundScriptNames(script: string, input: JsonObject): string[] {
  const read = [...script.matchAll(/(?<![\w$])\$\s*(?:\.\s*([A-Za-z_][\w$]*)|\[\s*(["'])([^"'\]]*)\2\s*\])/g)].map((match) => match[1] ?? match[3] ?? "");
  return [...new Set(read)].filter((name) => !Object.hasOwn(input, name));
}

/**
 * One token of a script {@link keysReadOff} can follow: blanks, `$`, a word, a plain number, a quoted text with no
 * backslash and no line break, or an operator that neither calls, divides (a `/` may open a comment or a regular
 * expression) nor assigns. Anything else (a template, a backslash escape, a non-ASCII name) makes the script one it
 * does not follow. Shifts, `++` and `--` are tokens of their own: read as `>` then `>=`, `$.a >>= 1` would pass for a
 * comparison, and a step (`$.a++`) assigns as `=` does.
 */
const SIMPLE_TOKEN = /\s+|(\$)|([A-Za-z_]\w*)|(\d+(?:\.\d+)?)|'([^'\\\n\r\u2028\u2029]*)'|"([^"\\\n\r\u2028\u2029]*)"|(===|!==|==|!=|>>>|>>|<<|\+\+|--|<=|>=|&&|\|\||[<>!+\-*%?:;,(){}[\].])/y;

/** The words a script {@link keysReadOff} follows may hold: literals and `if`/`else`, no name that could reach `$` otherwise. */
const SIMPLE_WORDS: ReadonlySet<string> = new Set(["true", "false", "null", "undefined", "NaN", "Infinity", "if", "else"]);

/**
 * The keys a script reads off `$[name]` (`$.loop.iteration`, `$['loop']["iteration"]`: `iteration`), when the script is
 * simple enough to be sure it reads nothing else of it: made only of comparisons, arithmetic, logic, `if`/`else` and
 * reads of `$` by literal keys, each read of `$[name]` naming a key of it. Undefined for any other script: one that
 * calls anything (through a call the script could reach the global `$` by other names), names anything but `$` and
 * literals, reads `$[name]` whole or by a computed key, or that this reading cannot follow (comments, HTML-like ones
 * too, templates, escapes). What it answers is sure; undefined says nothing.
 */
export function keysReadOff(source: string, name: string): ReadonlySet<string> | undefined {
  // A classic script's HTML-like comments hide the rest of their line: what follows one may be a call on the next.
  if (source.includes("<!--") || source.includes("-->")) return undefined;
  const keys = new Set<string>();
  type Token = { kind: "dollar" | "word" | "number" | "text" | "operator"; text: string };
  const tokens: Token[] = [];
  SIMPLE_TOKEN.lastIndex = 0;
  while (SIMPLE_TOKEN.lastIndex < source.length) {
    const match = SIMPLE_TOKEN.exec(source);
    if (match === null) return undefined;
    if (match[1] !== undefined) tokens.push({ kind: "dollar", text: "$" });
    else if (match[2] !== undefined) tokens.push({ kind: "word", text: match[2] });
    else if (match[3] !== undefined) tokens.push({ kind: "number", text: match[3] });
    else if (match[4] !== undefined || match[5] !== undefined) tokens.push({ kind: "text", text: match[4] ?? match[5] ?? "" });
    else if (match[6] !== undefined) tokens.push({ kind: "operator", text: match[6] });
  }
  // Whether the token before ends a value (a call would follow it): a `(` may only group.
  let afterValue = false;
  for (let at = 0; at < tokens.length; ) {
    const token = tokens[at]!;
    if (token.kind === "dollar") {
      const path: string[] = [];
      at++;
      for (;;) {
        const [first, second, third] = [tokens[at], tokens[at + 1], tokens[at + 2]];
        if (first?.text === "." && first.kind === "operator" && second?.kind === "word") {
          path.push(second.text);
          at += 2;
        } else if (first?.text === "[" && first.kind === "operator" && (second?.kind === "text" || second?.kind === "number") && third?.text === "]" && third.kind === "operator") {
          // A number read as a key is its text as JavaScript writes it: only a plain whole number is sure to be.
          if (second.kind === "number" && !/^(?:0|[1-9]\d*)$/.test(second.text)) return undefined;
          path.push(second.text);
          at += 3;
        } else break;
      }
      if (path.length === 0) return undefined;
      if (path[0] === name) {
        if (path.length < 2) return undefined;
        keys.add(path[1]!);
      }
      afterValue = true;
      continue;
    }
    if (token.kind === "word" && !SIMPLE_WORDS.has(token.text)) return undefined;
    if (token.kind === "operator" && (token.text === "." || token.text === "[" || token.text === "]")) return undefined;
    // A step assigns (to `$`'s own copy, so reading nothing more, but a script that only reads needs no such argument).
    if (token.kind === "operator" && (token.text === "++" || token.text === "--")) return undefined;
    if (token.text === "(" && token.kind === "operator" && afterValue) return undefined;
    afterValue = token.kind === "number" || token.kind === "text" || (token.kind === "word" && token.text !== "if" && token.text !== "else") || (token.kind === "operator" && (token.text === ")" || token.text === "}"));
    at++;
  }
  return keys;
}

/** How many of the names `$` holds a script's failure lists: an input of many parameters is named by its first few. */
const MAX_LISTED_NAMES = 10;

/** The names `input` (a script's `$`) holds, for a failure's reason: the first {@link MAX_LISTED_NAMES}, or `none`. */
export function listedNames(input: JsonObject): string {
  const names = Object.keys(input);
  if (names.length === 0) return "none";
  return names.length <= MAX_LISTED_NAMES ? names.join(", ") : `${names.slice(0, MAX_LISTED_NAMES).join(", ")}, …`;
}

/**
 * The value Conductor's evaluators give for `expression` over `input` (SWITCH and INLINE alike): `value-param` reads the
 * input parameter it names (null when there is none), `javascript` and `graaljs` run it as a script.
 */
export function evaluateWith(evaluatorType: SwitchEvaluatorType | JoinEvaluatorType, expression: string, input: JsonObject, scripts: ScriptRunner): ScriptOutcome {
  if (evaluatorType === "value-param") return { ok: true, value: Object.hasOwn(input, expression) ? (input[expression] ?? null) : null };
  return scripts.run(expression, input);
}
