/**
 * Why the engine refused a command. The worker maps each kind to one HTTP status
 * (CONFLICT → 409, NOT_FOUND → 404, INVALID → 400, FORBIDDEN → 403) so state rules live here, not in
 * the router. FORBIDDEN is the actor's: a command the caller's recorded rights do not cover.
 */
export type EngineErrorKind = "CONFLICT" | "NOT_FOUND" | "INVALID" | "FORBIDDEN";

/** A refused command: nothing was changed. */
export class EngineError extends Error {
  /** Which rule refused the command. */
  readonly kind: EngineErrorKind;

  constructor(kind: EngineErrorKind, message: string) {
    super(message);
    this.name = "EngineError";
    this.kind = kind;
  }
}
