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
}
