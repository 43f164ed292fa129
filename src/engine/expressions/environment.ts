/**
 * The one rule for what counts as a reference to an environment variable (Orkes' `${workflow.env.<name>}`), shared by
 * evaluation and by `referencedEnvironmentVariables`, so that what a start looks up is what its expressions read.
 */
import type { PathSegment } from "./ast";

/** The environment variable a path names (`workflow.env.<name>`, and anything below it), or null for any other path. */
export function environmentVariableNameOf(root: string, segments: readonly PathSegment[]): string | null {
  if (root !== "workflow" || segments.length < 2 || segments[0] !== "env") return null;
  const name = segments[1];
  return typeof name === "string" ? name : null;
}

/** True for `workflow.env.<name>.$…`: the variable's text read as JSON, and walked from there. */
export function readsEnvironmentJson(segments: readonly PathSegment[]): boolean {
  return segments[0] === "env" && segments[2] === "$";
}
