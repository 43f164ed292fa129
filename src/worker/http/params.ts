import type { IRequest } from "itty-router";
import { validationError } from "./errors";

/**
 * A path parameter, percent-decoded. A malformed escape (`%zz`) is the caller's mistake, so it is a 400
 * in the contract's shape rather than the URIError a bare decodeURIComponent would turn into a 500.
 */
export function decodedPathParam(request: IRequest, name: string): string {
  try {
    return decodeURIComponent(request.params[name] ?? "");
  } catch {
    throw validationError(`Malformed path parameter ${name}`, [{ path: name, message: "is not valid percent-encoding" }]);
  }
}
