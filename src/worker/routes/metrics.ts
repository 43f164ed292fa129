import type { IRequest, RouterType } from "itty-router";
import { principalOf } from "../guard";
import { collectMetrics } from "../metrics/collect";
import { EXPOSITION_CONTENT_TYPE, renderExposition } from "../metrics/exposition";

type Args = [Env, ExecutionContext];

/** `GET /api/metrics`: the service's metrics in the Prometheus text format, for a scraper holding a key or token. */
export function registerMetricsRoutes(router: RouterType<IRequest, Args>): void {
  router.get("/api/metrics", async (request, env) => {
    const text = renderExposition(await collectMetrics(env, principalOf(request).grants));
    return new Response(text, { headers: { "Content-Type": EXPOSITION_CONTENT_TYPE } });
  });
}
