import { referencedEnvironmentVariables } from "./expressions";
import { ENVIRONMENT_VARIABLE_NAME } from "./expressions/environment";
import type { JsonValue, WorkflowDef } from "./model";

// The rule lives beside the expressions that name variables, which registration checks against it.
export { ENVIRONMENT_VARIABLE_NAME };

/** Longest value an environment variable may hold, in UTF-8 bytes: each execution that names it keeps a copy. */
export const MAX_ENVIRONMENT_VALUE_BYTES = 16 * 1024;

const namesByDefinition = new WeakMap<WorkflowDef, readonly string[]>();

/**
 * The environment variables a definition's expressions name (anywhere in it: tasks, branches, loops, inline children,
 * outputs), valid names only, computed once per definition object: a start looks these up.
 */
export function environmentVariablesOf(definition: WorkflowDef): readonly string[] {
  let names = namesByDefinition.get(definition);
  if (names === undefined) {
    names = referencedEnvironmentVariables(definition as unknown as JsonValue).filter((name) => ENVIRONMENT_VARIABLE_NAME.test(name));
    namesByDefinition.set(definition, names);
  }
  return names;
}

/**
 * The commands that run tasks again (retry, restart, rerun, upgrade, jump): each takes the variables as they are when it
 * is asked, for the definition it runs (see `EnvironmentRead` in `decider.ts`), as a start does.
 */
export const ENVIRONMENT_READING_COMMANDS: ReadonlySet<string> = new Set(["retry", "restart", "rerun", "upgrade", "jump"]);
