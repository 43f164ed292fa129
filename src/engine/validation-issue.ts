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
