/**
 * The one rule for what counts as a reference to an environment variable (Orkes' `${workflow.env.<name>}`), shared by
 * evaluation and by `referencedEnvironmentVariables`, so that what a start looks up is what its expressions read.
 */
import type { PathSegment } from "./ast";

/**
 * What an environment variable's name may be: letters, digits, `_` and `-` (a `.` would read as a path step in
 * `${workflow.env.<name>}`), 1 to 128 of them.
 */
export const ENVIRONMENT_VARIABLE_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** The environment variable a path names (`workflow.env.<name>`, and anything below it), or null for any other path. */
export function environmentVariableNameOf(root: string, segments: readonly PathSegment[]): string | null {
  if (root !== "workflow" || segments.length < 2 || segments[0] !== "env") return null;
  const name = segments[1];
  return typeof name === "string" ? name : null;
}

/**
 * For a path below a variable (`workflow.env.<name>.<path>`, segments after `workflow`), the steps to walk in its text
 * read as JSON: Orkes' `.$` is that JSON's root, and a path straight after the name reads it too, as Conductor's
 * ParametersUtils.resolveEnvVariable reads the rest of `workflow.env.<name>.<path>` as a JSONPath into the parsed value.
 * Undefined for the variable itself (its text) and for any other path.
 */
export function environmentJsonSteps(segments: readonly PathSegment[]): readonly PathSegment[] | undefined {
  if (segments[0] !== "env" || segments.length < 3) return undefined;
  return segments[2] === "$" ? segments.slice(3) : segments.slice(2);
}
