import type { IRequest, RouterType } from "itty-router";
import { version } from "../../../package.json";
import { textResponse } from "../http/body";

type Args = [Env, ExecutionContext];

/** The service's version, as its package gives it (one place to raise it). */
export const SERVICE_VERSION: string = version;

/**
 * `GET /api/version`: the server's version as plain text, as Conductor serves it (VersionResource at
 * RequestMappingConstants.VERSION in conductor-oss/conductor) and Orkes' server does (orkes-conductor-community
 * VersionResource). Clients generated from their specs call it (the Python SDK's `VersionResourceApi.get_version`,
 * the C# `VersionResourceApi.GetVersion`), and read a string; without the route they got a 404 'No route'.
 */
export function registerVersionRoute(router: RouterType<IRequest, Args>): void {
  router.get("/api/version", () => textResponse(SERVICE_VERSION));
  router.get("/api/health", () => Response.json(API_HEALTH));
}

/**
 * `GET /api/health`'s answer: Conductor's HealthCheckStatus of a healthy server with no checks configured, as its
 * HealthCheckResource answers at both `/health` and `/api/health` (`HealthCheckStatus.create(true, emptyList())`).
 * Clients whose base URL ends in `/api` reach it there (the Python SDK's `HealthCheckResourceApi.do_check` sends
 * `GET {host}/health` with the default host `…/api`); without the route they got a 404 'No route', read as a server
 * that is down. `GET /health` keeps the contract's `{"status":"ok"}` and stays the one open route: this one needs
 * credentials, as every other route does, and no permission.
 */
const API_HEALTH = { healthResults: [], suppressedHealthResults: [], healthy: true } as const;
