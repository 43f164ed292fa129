/**
 * Errors raised by the expression language. Kept apart from the parser and evaluator so
 * callers can catch them without pulling in either.
 */

/**
 * A template or expression that cannot be parsed. `position` is a 0-based offset into the
 * whole string handed to the parser (the full template, not just the `${...}` body), so a
 * validation message can point at the exact character an author has to fix.
 */
export class ExpressionSyntaxError extends Error {
  override readonly name = "ExpressionSyntaxError";
  /** 0-based character offset of the problem in the whole template string. */
  readonly position: number;
  /** The problem alone, without the position prefix the message carries. */
  readonly reason: string;

  /**
   * @param reason what is wrong, e.g. `expected '}' to close '${'`
   * @param position 0-based offset in the whole template string
   */
  constructor(reason: string, position: number) {
    super(`malformed expression at position ${position}: ${reason}`);
    this.reason = reason;
    this.position = position;
  }
}

/**
 * A `${workflow.secrets.<name>}` reference to a secret that does not exist. Thrown rather than
 * resolving to null so the task fails with a clear reason instead of calling a service with an
 * empty credential.
 */
export class MissingSecretError extends Error {
  override readonly name = "MissingSecretError";
  /** The name after `workflow.secrets.`. */
  readonly secretName: string;

  /** @param secretName the secret that was referenced but is not defined */
  constructor(secretName: string) {
    super(`secret '${secretName}' is not defined`);
    this.secretName = secretName;
  }
}

/**
 * An expression whose evaluation would take more than the engine bounds it to (a JSONPath query selecting more than
 * MAX_QUERY_VALUES values, text written past MAX_PAYLOAD_BYTES): raised instead of running the Durable Object out of
 * memory, so the task (or the workflow, for its output) fails with the reason, as a malformed expression does.
 */
export class ExpressionLimitError extends Error {
  override readonly name = "ExpressionLimitError";

  /** @param reason what is over which bound */
  constructor(reason: string) {
    super(`expression too costly to evaluate: ${reason}`);
  }
}

/**
 * A path read below a secret's name (`${workflow.secrets.creds.user}`) as it is evaluated: registration refuses it, so it
 * comes from a definition that reached an execution without that check (stored by an older deploy). Raised, with the
 * words registration uses, rather than evaluating to null and sending null where Conductor OSS would send the field.
 */
export class SecretFieldReadError extends Error {
  override readonly name = "SecretFieldReadError";

  /** @param reason why, as registration words it (see secretFieldReadReason in secrets.ts) */
  constructor(reason: string) {
    super(reason);
  }
}

/** What {@link isExpressionFailure} accepts. */
export type ExpressionFailure = ExpressionSyntaxError | ExpressionLimitError | SecretFieldReadError;

/**
 * Whether `error` is an expression failing against an execution's data (malformed, too costly to evaluate, or reading
 * inside a secret): the task or the workflow it was resolved for fails with it, as with any bad value. Any other error
 * is a bug, and is let through rather than passed off as the definition's fault.
 */
export function isExpressionFailure(error: unknown): error is ExpressionFailure {
  return error instanceof ExpressionSyntaxError || error instanceof ExpressionLimitError || error instanceof SecretFieldReadError;
}
