/**
 * What a secret may be called and hold: the same rules for the secrets API and for an UPDATE_SECRET task, which
 * writes one as a workflow runs.
 */

/** Allowed secret names: what fits in `${workflow.secrets.<name>}` and in a URL path segment without escaping. */
export const SECRET_NAME_PATTERN = /^(?!\.\.?$)[A-Za-z0-9_.-]{1,128}$/;

/** Largest value accepted (UTF-8 bytes). Credentials are small; the cap keeps rows and dispatch reads small. */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;

/** True for a name {@link SECRET_NAME_PATTERN} accepts. */
export function isValidSecretName(name: string): boolean {
  return SECRET_NAME_PATTERN.test(name);
}
