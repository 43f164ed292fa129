import { Router, type IRequest } from "itty-router";
import { authorize } from "./auth/access-rules";
import { authenticate } from "./auth/authenticate";
import { ApiError, responseForError } from "./http/errors";
import { registerMetadataRoutes } from "./routes/metadata";
import { WEBHOOK_CALLBACK_PATH, registerTaskRoutes } from "./routes/tasks";
import { registerWorkflowRoutes } from "./routes/workflows";

export { WorkflowExecution } from "../actors/workflow-execution";

type Args = [Env, ExecutionContext];

/**
 * Paths reachable without a token: the health check, and webhook callbacks, which are authenticated
 * by the waiting task's own headers and signature instead.
 */
function isPublic(request: IRequest): boolean {
  const path = new URL(request.url).pathname;
  if (request.method === "GET" && path === "/health") return true;
  return request.method === "POST" && WEBHOOK_CALLBACK_PATH.test(path);
}

/** Authenticates and authorizes every request before any route runs. */
async function guard(request: IRequest, env: Env): Promise<undefined> {
  if (isPublic(request)) return undefined;
  const principal = await authenticate(request as unknown as Request, env);
  authorize(principal, request.method, new URL(request.url).pathname);
  return undefined;
}

const router = Router<IRequest, Args>({ before: [guard] });
router.get("/health", () => Response.json({ status: "ok" }));
registerMetadataRoutes(router);
registerWorkflowRoutes(router);
registerTaskRoutes(router);
router.all("*", (request) => {
  throw new ApiError(404, "NOT_FOUND", `No route for ${request.method} ${new URL(request.url).pathname}`);
});

export default {
  async fetch(request, env, ctx): Promise<Response> {
    const requestId = crypto.randomUUID();
    try {
      const response: unknown = await router.fetch(request, env, ctx);
      if (response instanceof Response) return response;
      throw new Error("route returned no response");
    } catch (error) {
      return responseForError(error, requestId);
    }
  },
} satisfies ExportedHandler<Env>;
