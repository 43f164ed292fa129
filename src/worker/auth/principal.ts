import type { Grant } from "./permissions";

/** Who a request acts for, once authenticated, and everything they may do. */
export interface Principal {
  userId: string;
  /** Effective grants: those of the user's roles plus direct permissions. */
  grants: Grant[];
  /** How the request proved who it is. */
  method: "api-key" | "jwt" | "oauth" | "custom";
}

/** The user id the bootstrap admin (from `BOOTSTRAP_ADMIN_KEY`) acts as. */
export const BOOTSTRAP_ADMIN_USER = "admin";
