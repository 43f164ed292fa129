import type { IRequest, RouterType } from "itty-router";
import type { JsonObject } from "../../engine/model";
import { serviceConfig } from "../config";
import { executionStub, unwrap } from "../executions";
import { readJsonBody, textResponse } from "../http/body";
import { ExternalStatus, JsonObjectBody, TaskResultRequest, parseOrThrow } from "../schemas";

type Args = [Env, ExecutionContext];

/** Routes that complete or update tasks from outside (asyncComplete HTTP tasks, waiting tasks). */
export function registerTaskRoutes(router: RouterType<IRequest, Args>): void {
  router.post("/api/tasks/:workflowId/:taskRefName/:status", async (request, env) => {
    const status = parseOrThrow(ExternalStatus, request.params["status"], "task status", "status");
    const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    const output: JsonObject = body.present ? parseOrThrow(JsonObjectBody, body.value, "task output") : {};
    const stub = executionStub(env, decodeURIComponent(request.params["workflowId"] ?? ""));
    const taskId = unwrap(await stub.updateTaskByRef(decodeURIComponent(request.params["taskRefName"] ?? ""), status, output));
    return textResponse(taskId);
  });

  router.post("/api/tasks", async (request, env) => {
    const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    const result = parseOrThrow(TaskResultRequest, body.present ? body.value : undefined, "task result");
    const stub = executionStub(env, result.workflowInstanceId);
    return textResponse(unwrap(await stub.updateTask(result.taskId, result.status, result.outputData ?? {}, result.reasonForIncompletion)));
  });
}
