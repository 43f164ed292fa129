/**
 * Where `${workflow.secrets.<name>}` values come from at dispatch time.
 *
 * The secrets store (encrypted at rest in D1, managed through `/api/secrets`) belongs to the
 * security work; until it exists no secret is defined, so a task referencing one fails with a
 * clear "secret '<name>' is not defined" instead of calling a service with an empty credential.
 */
export async function secretLookup(_env: Env, _names: string[]): Promise<(name: string) => string | undefined> {
  return () => undefined;
}
