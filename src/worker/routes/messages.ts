/**
 * Conductor's Workflow Message Queue: `POST /api/workflow/{workflowId}/messages` pushes a message (any JSON object) to a
 * running workflow's queue, where its PULL_WORKFLOW_MESSAGES tasks take it (see `tasks/pull-workflow-messages`), and
 * answers the message's id as text, as Conductor's WorkflowMessageQueueResource does.
 */
import type { IRequest, RouterType } from "itty-router";
import { serviceConfig } from "../config";
import { executionStub, orOnOlderCode, refuseOnOlderCode } from "../executions";
import { readJsonBody, textResponse } from "../http/body";
import { ApiError, notFound } from "../http/errors";
import { decodedPathParam } from "../http/params";
import { JsonObjectBody, parseOrThrow } from "../schemas";

type Args = [Env, ExecutionContext];

/** The error code of each refusal of a push (see `PushAnswer`). */
const REFUSAL_CODES = { 409: "CONFLICT", 413: "PAYLOAD_TOO_LARGE", 429: "RATE_LIMITED" } as const;

/**
 * The `Retry-After` (seconds) of a push refused because the queue is full: every 429 of the service says when to try
 * again (its body says `retryable: true`), and clients that wait for it would otherwise retry at once. The queue
 * drains only as the workflow's PULL_WORKFLOW_MESSAGES tasks run, a pace nothing here foresees: a few seconds keeps
 * a client's retries from hammering a queue that may stay full.
 */
const FULL_QUEUE_RETRY_AFTER_SECONDS = 5;

/** Registers the push of a message. Before the single-id workflow routes, whose patterns it might fit. */
export function registerMessageRoutes(router: RouterType<IRequest, Args>): void {
  router.post("/api/workflow/:workflowId/messages", async (request, env) => {
    const workflowId = decodedPathParam(request, "workflowId");
    const body = await readJsonBody(request as unknown as Request, serviceConfig(env).maxRequestBytes);
    // Conductor's @RequestBody Map: a message is an object, and one is required.
    if (!body.present) throw new ApiError(400, "VALIDATION_ERROR", "Invalid message: the body must be a JSON object (the message's payload)");
    const payload = parseOrThrow(JsonObjectBody, body.value, "message");
    const stub = executionStub(env, workflowId);
    const answer = await orOnOlderCode("pushMessage", async () => await stub.pushMessage(payload), refuseOnOlderCode);
    if (answer.ok) return textResponse(answer.messageId);
    if (answer.status === 404) throw notFound(`Workflow ${workflowId} not found`);
    const headers = answer.status === 429 ? { "Retry-After": String(FULL_QUEUE_RETRY_AFTER_SECONDS) } : undefined;
    throw new ApiError(answer.status, REFUSAL_CODES[answer.status], answer.message, undefined, headers);
  });
}
