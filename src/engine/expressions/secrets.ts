/**
 * The one rule for what counts as a secret reference, shared by evaluation and by
 * {@link referencedSecrets} so the two can never disagree.
 */
import type { PathExpression, PathSegment } from "./ast";

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

/**
 * Why a path reads below a secret's name (`workflow.secrets.creds.user`, `….creds['user']`, `….creds[0]`), or undefined.
 * Nothing is read inside a secret here, where Conductor OSS's ParametersUtils.resolveSecretRef reads the rest as a
 * JSONPath into a JSON secret: registration refuses such a path with these words, and evaluation with the same ones,
 * for a definition that reached an execution without that check (stored before it, by an older deploy).
 */
export function secretFieldReadReason(path: PathExpression): string | undefined {
  const { root, segments } = path;
  const name = segments[1];
  if (!isUnderSecrets(root, segments) || segments.length <= 2 || typeof name !== "string") return undefined;
  const whole = `\${workflow.secrets${pathText([name])}}`;
  return `a secret is read whole here: \`${whole}\` at position ${path.start}; reading a field inside one (\`${pathText(segments.slice(2))}\`) is not supported (Conductor OSS reads a JSON path into it): store each field as a secret of its own, or hand the whole secret to a worker`;
}

/** Path segments as written: `.name` for a plain name, `['a b']` for any other key, `[0]` for an index. */
function pathText(segments: readonly PathSegment[]): string {
  return segments
    .map((segment) => (typeof segment === "number" ? `[${segment}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(segment) ? `.${segment}` : `['${segment.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}']`))
    .join("");
}
