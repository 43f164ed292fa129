/**
 * One problem found in user input, in the contract's `validationErrors` shape.
 * `path` uses dots for keys and `[n]` for array indexes, e.g. `tasks[1].inputParameters.uri`.
 */
export interface ValidationIssue {
  path: string;
  message: string;
}

/** Joins a parent path and a key the way {@link ValidationIssue.path} expects. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  return parent === "" ? key : `${parent}.${key}`;
}

/** Issues found by rules that only catch mistakes as a definition is registered (see {@link registrationOnly}). */
const REGISTRATION_ONLY = new WeakSet<ValidationIssue>();

/**
 * Marks `issue` as found by a rule that only catches a mistake at registration (a lint: the run meets the same value
 * and deals with it, as a task failing or a setting read leniently), not one protecting the run. A definition accepted
 * by an earlier registration is not refused for it when it runs (see `ValidationContext.accepted`): a rule added since
 * must not fail what was registered, and ran, before it. Kept out of the issue's fields, so the 400 shape is unchanged.
 */
export function registrationOnly(issue: ValidationIssue): ValidationIssue {
  REGISTRATION_ONLY.add(issue);
  return issue;
}

/** Whether `issue` was found by a registration-only rule (see {@link registrationOnly}). */
export function isRegistrationOnly(issue: ValidationIssue): boolean {
  return REGISTRATION_ONLY.has(issue);
}
