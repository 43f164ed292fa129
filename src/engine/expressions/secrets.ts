/**
 * The one rule for what counts as a secret reference, shared by evaluation and by
 * {@link referencedSecrets} so the two can never disagree.
 */
import type { PathSegment } from "./ast";

/**
 * The secret named by a path, or null when the path is not exactly `workflow.secrets.<name>`.
 * Bracketed keys count too (`workflow['secrets']['api key']`), numeric indexes do not.
 */
export function secretNameOf(root: string, segments: readonly PathSegment[]): string | null {
  if (root !== "workflow" || segments.length !== 2 || segments[0] !== "secrets") return null;
  const name = segments[1];
  return typeof name === "string" ? name : null;
}

/** True for `workflow.secrets` and everything below it, which must never read workflow data. */
export function isUnderSecrets(root: string, segments: readonly PathSegment[]): boolean {
  return root === "workflow" && segments[0] === "secrets";
}
