import type { Principal } from "./principal";

/**
 * One way of proving who a request is. A provider answers undefined when the request carries none
 * of its credentials (so the next provider may try), and throws a 401 ApiError when it carries them
 * but they are wrong.
 */
export interface AuthProvider {
  readonly name: string;
  authenticate(request: Request, env: Env): Promise<Principal | undefined>;
}
