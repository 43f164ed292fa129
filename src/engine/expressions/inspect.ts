/**
 * Static checks over definition values, run when a definition is registered rather than when
 * a task starts: malformed templates and the secrets a definition needs.
 */
import type { JsonValue } from "../model";
import { isValidSecretName } from "../secret-rules";
import { childPath, type ValidationIssue } from "../validation-issue";
import { BUILT_IN_ROOTS, childExpressions, filterPredicates, type Expression, type PathSegment, type SplicedExpression } from "./ast";
import { ENVIRONMENT_VARIABLE_NAME, environmentVariableNameOf } from "./environment";
import { ExpressionSyntaxError } from "./errors";
import { isUnderSecrets, secretFieldReadReason, secretNameOf } from "./secrets";
import { parseTemplate, type TemplatePart } from "./template";

/**
 * Every malformed template inside a (nested) JSON value, one issue per bad string, with
 * `path` built by {@link childPath} from `path` (e.g. `tasks[1].inputParameters.headers.X`)
 * and the message naming the problem and its position in that string. A secret used other than
 * as a value (compared, negated, as a condition) is a problem too.
 */
export function findTemplateErrors(value: JsonValue, path: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  forEachTemplateString(value, path, (text, at) => {
    let parts;
    try {
      parts = parseTemplate(text).parts;
    } catch (error) {
      if (!(error instanceof ExpressionSyntaxError)) throw error;
      issues.push({ path: at, message: error.message });
      return;
    }
    for (const part of parts) {
      if (part.kind !== "expression") continue;
      const misuse = secretMisuse(part.expression) ?? secretFieldRead(part.expression) ?? computedEnvironmentName(part.expression) ?? impossibleName(part.expression);
      if (misuse !== undefined) issues.push({ path: at, message: misuse });
    }
  });
  return issues;
}

/**
 * Why an expression uses a secret other than as a value, or undefined. What is stored and shown is
 * resolved with every secret masked, what is sent with the real value: an operator's outcome (a
 * comparison, a condition, a negation) would differ between the two and tell whoever reads the stored
 * input something about the secret, one bit per run. As a whole expression, a branch of `?:` or text in
 * a string, the secret is simply masked.
 */
function secretMisuse(expression: Expression): string | undefined {
  const found = operandSecret(expression, undefined);
  if (found === undefined) return undefined;
  const { secret, at, role } = found;
  return `${secret} at position ${at} may only be used as a value (the whole expression, a branch of ?:, or text in a string), not ${role}: the outcome would reveal something about the secret`;
}

/** A secret an operator consumes: how it is written, where, and how it is consumed. */
interface OperandSecret {
  readonly secret: string;
  readonly at: number;
  readonly role: string;
}

/** The first secret below `expression` that an operator consumes, with how; `role` is set once inside an operand. */
function operandSecret(expression: Expression, role: string | undefined): OperandSecret | undefined {
  switch (expression.kind) {
    case "literal":
      return undefined;
    case "spliced":
      return splicedSecret(expression);
    case "path": {
      const name = secretNameOf(expression.root, expression.segments);
      if (name !== null) {
        const secret = { secret: `workflow.secrets.${name}`, at: expression.start };
        if (expression.query !== undefined || expression.fn !== undefined) return { ...secret, role: "followed by a JSONPath step or function" };
        if (role !== undefined) return { ...secret, role };
      }
      for (const predicate of filterPredicates(expression)) {
        const found = operandSecret(predicate, role ?? "in a filter");
        if (found !== undefined) return found;
      }
      return undefined;
    }
    case "not":
      return operandSecret(expression.operand, role ?? "as an operand of !");
    case "negate":
      return operandSecret(expression.operand, role ?? "as an operand of -");
    case "compare":
    case "logical": {
      const inner = role ?? `as an operand of ${expression.operator}`;
      return operandSecret(expression.left, inner) ?? operandSecret(expression.right, inner);
    }
    case "conditional":
      // The branches are values: which one is chosen depends only on the condition.
      return (
        operandSecret(expression.test, role ?? "as the condition of ?:") ??
        operandSecret(expression.consequent, role) ??
        operandSecret(expression.alternate, role)
      );
  }
}

/**
 * A secret a spliced path reads: one named by its text, which the value written in completes, or one whose value is
 * written into its text (a path read with it tells what it holds).
 */
function splicedSecret(spliced: SplicedExpression): OperandSecret | undefined {
  const { fixed } = spliced;
  if (fixed !== null && isUnderSecrets(fixed.root, fixed.segments)) {
    const name = secretNameOf(fixed.root, fixed.segments);
    return { secret: name === null ? "workflow.secrets" : `workflow.secrets.${name}`, at: spliced.start, role: "followed by a nested ${…}" };
  }
  for (const inner of childExpressions(spliced)) {
    const found = operandSecret(inner, "in a nested ${…} of a path");
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Why an expression reads below a secret's name (`${workflow.secrets.creds.user}`, `….creds['user']`, `….creds[0]`), or
 * undefined (see {@link secretFieldReadReason}). Such a path would send nothing of the secret, where Conductor OSS reads
 * a JSON path into it: refused so that a copied definition fails at registration instead of sending a wrong value.
 */
function secretFieldRead(expression: Expression): string | undefined {
  if (expression.kind === "path") {
    const reason = secretFieldReadReason(expression);
    if (reason !== undefined) return reason;
  }
  for (const child of childExpressions(expression)) {
    const found = secretFieldRead(child);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Why an expression names a secret or an environment variable by a name none can have (`${workflow.secrets['api key']}`:
 * the secrets API takes 1 to 128 of `A-Z a-z 0-9 _ . -`, the environment API the same less `.`), or undefined. Every run
 * of it would fail its task saying the secret is not defined, or read `null` for the variable, whatever is put: refused at
 * registration, where the mistake is made.
 */
function impossibleName(expression: Expression): string | undefined {
  if (expression.kind === "path") {
    const { root, segments, start } = expression;
    const name = segments[1];
    if (isUnderSecrets(root, segments) && typeof name === "string" && !isValidSecretName(name)) {
      return `workflow.secrets at position ${start} names ${JSON.stringify(name)}, which no secret can be named: a secret's name is 1 to 128 characters of A-Z, a-z, 0-9, '_', '.' or '-', other than . and .., as PUT /api/secrets/{name} takes it`;
    }
    const variable = environmentVariableNameOf(root, segments);
    if (variable !== null && !ENVIRONMENT_VARIABLE_NAME.test(variable)) {
      return `workflow.env at position ${start} names ${JSON.stringify(variable)}, which no environment variable can be named: a variable's name is 1 to 128 characters of A-Z, a-z, 0-9, '_' or '-', as PUT /api/environment/{name} takes it`;
    }
  }
  for (const child of childExpressions(expression)) {
    const found = impossibleName(child);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Why an expression names an environment variable by a nested `${…}`, or undefined. A start looks up the variables the
 * definition names, so such a name would find nothing.
 */
function computedEnvironmentName(expression: Expression): string | undefined {
  if (expression.kind === "spliced" && expression.fixed !== null) {
    const { root, segments } = expression.fixed;
    if (root === "workflow" && segments[0] === "env" && environmentVariableNameOf(root, segments) === null) {
      return `workflow.env at position ${expression.start} must be followed by the variable's name, not a nested \${…}: a start looks up the variables a definition names`;
    }
  }
  for (const child of childExpressions(expression)) {
    const found = computedEnvironmentName(child);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Names of every secret a value references through `${workflow.secrets.<name>}`, deduplicated,
 * in order of first appearance. References in branches that may not run count too, since they
 * can. Malformed strings are skipped: {@link findTemplateErrors} reports them.
 */
export function referencedSecrets(value: JsonValue): string[] {
  return referencedNames(value, secretNameOf);
}

/**
 * Names of every environment variable a value references through `${workflow.env.<name>}` (or `….$`), deduplicated,
 * in order of first appearance, as {@link referencedSecrets} finds secrets.
 */
export function referencedEnvironmentVariables(value: JsonValue): string[] {
  return referencedNames(value, environmentVariableNameOf);
}

/** The names `nameOf` finds in the paths of every expression of `value`. */
function referencedNames(value: JsonValue, nameOf: (root: string, segments: readonly PathSegment[]) => string | null): string[] {
  const names = new Set<string>();
  forEachTemplateString(value, "", (text) => {
    for (const part of wellFormedParts(text)) {
      if (part.kind === "expression") collectNames(part.expression, nameOf, names);
    }
  });
  return [...names];
}

/** A task reference name an expression reads (see {@link taskReferencesIn}). */
export interface TaskReference {
  /** The reference name: the root of a path that is not built in (`workflow`, `system`, …) nor a filter's `@`. */
  readonly reference: string;
  /** The path of the string holding the expression, built by {@link childPath} from the path given. */
  readonly path: string;
  /** The `${…}` that reads it, as written (the outermost one, when it reads the name in a nested part). */
  readonly expression: string;
}

/**
 * The task reference names the expressions of a (nested) JSON value read, once per string and name, in order: the
 * roots of their paths, those in operands, filters and nested `${…}` included, that are not built in. A root a nested
 * `${…}` gives (`${${workflow.input.step}.output}`) is known only as it runs, and not listed; nor are names in `$${…}`
 * (an escape: text) or in strings that do not parse (see {@link findTemplateErrors}).
 */
export function taskReferencesIn(value: JsonValue, path: string): TaskReference[] {
  const reference = (root: string): string | null => (root !== "@" && !BUILT_IN_ROOTS.has(root) ? root : null);
  return namesReadIn(value, path, reference).map(({ name, ...where }) => ({ reference: name, ...where }));
}

/** A field of the workflow an expression reads (see {@link workflowFieldsIn}). */
export interface WorkflowFieldRead {
  /** The field: the first step after `workflow` (`input` in `${workflow.input.x}`). */
  readonly field: string;
  /** The path of the string holding the expression, built by {@link childPath} from the path given. */
  readonly path: string;
  /** The `${…}` that reads it, as written (the outermost one, when it reads it in a nested part). */
  readonly expression: string;
}

/**
 * The workflow fields the expressions of a (nested) JSON value read by name (`${workflow.input.x}` reads `input`),
 * once per string and field, in order, those in operands, filters and nested `${…}` included.
 */
export function workflowFieldsIn(value: JsonValue, path: string): WorkflowFieldRead[] {
  const field = (root: string, segments: readonly PathSegment[]): string | null => (root === "workflow" && typeof segments[0] === "string" ? segments[0] : null);
  return namesReadIn(value, path, field).map(({ name, ...where }) => ({ field: name, ...where }));
}

/**
 * The names `nameOf` finds in the paths of the expressions of a (nested) JSON value, once per string and name, in
 * order, with the path of the string and the `${…}` (the outermost one) that reads each.
 */
function namesReadIn(value: JsonValue, path: string, nameOf: (root: string, segments: readonly PathSegment[]) => string | null): Array<{ name: string; path: string; expression: string }> {
  const found: Array<{ name: string; path: string; expression: string }> = [];
  forEachTemplateString(value, path, (text, at) => {
    const seen = new Set<string>();
    for (const part of wellFormedParts(text)) {
      if (part.kind !== "expression") continue;
      const names = new Set<string>();
      collectNames(part.expression, nameOf, names);
      for (const name of names) {
        if (seen.has(name)) continue;
        seen.add(name);
        found.push({ name, path: at, expression: text.slice(part.start, part.end) });
      }
    }
  });
  return found;
}

/** The parts of template `text`, none when it is malformed (which {@link findTemplateErrors} reports). */
function wellFormedParts(text: string): readonly TemplatePart[] {
  try {
    return parseTemplate(text).parts;
  } catch (error) {
    if (error instanceof ExpressionSyntaxError) return [];
    throw error;
  }
}

/** Visits each string that could hold an expression, with its validation path. */
function forEachTemplateString(value: JsonValue, path: string, visit: (text: string, path: string) => void): void {
  if (typeof value === "string") {
    if (value.includes("${")) visit(value, path);
    return;
  }
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => forEachTemplateString(item, childPath(path, index), visit));
    return;
  }
  for (const key of Object.keys(value)) forEachTemplateString(value[key] as JsonValue, childPath(path, key), visit);
}

/** The names `nameOf` finds in `expression`'s paths, the written-out part of a spliced path included, and those below it. */
function collectNames(expression: Expression, nameOf: (root: string, segments: readonly PathSegment[]) => string | null, names: Set<string>): void {
  const read = expression.kind === "path" ? expression : expression.kind === "spliced" ? expression.fixed : null;
  const name = read === null ? null : nameOf(read.root, read.segments);
  if (name !== null) names.add(name);
  for (const child of childExpressions(expression)) collectNames(child, nameOf, names);
}
