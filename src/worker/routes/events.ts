import type { IRequest, RouterType } from "itty-router";
import { EventHandlerRepository, parseEventHandler, parseEventHandlers, type EventHandler } from "../event-handlers";
import { TagRepository, registeredTags, withTagOptions, type Tag } from "../tags";
import { validationError } from "../http/errors";
import { booleanQuery, decodedPathParam, integerQuery } from "../http/params";
import { EventRecordRepository } from "../event-executions";
import type { JsonObject } from "../../engine/model";
import { registrationTagStatements, requiredBody } from "./metadata";

type Args = [Env, ExecutionContext];

/** Orkes' paging cursor of the event records: an offset, 0 unless given. */
function fromQuery(request: IRequest): number {
  return integerQuery(request, "from", 0, 1_000_000) ?? 0;
}

/** Orkes' SearchResult of a whole list. */
function searchResult(results: readonly JsonObject[]): Response {
  return Response.json({ totalHits: results.length, results });
}

/** The statements storing the `tags` given with `handlers` (a body of one, or a list: see {@link parseEventHandlers}). */
function tagStatements(env: Env, body: unknown, handlers: readonly EventHandler[]): Promise<D1PreparedStatement[]> {
  if (Array.isArray(body)) return registrationTagStatements(env, "EVENT_HANDLER", body, handlers);
  return new TagRepository(env.DB).registrationStatements({ type: "EVENT_HANDLER", name: handlers[0]!.name }, registeredTags(body, ""));
}

/** `handlers` with their tags (Orkes' OrkesEventHandler). */
function withTags(env: Env, handlers: EventHandler[]): Promise<Array<EventHandler & { tags?: Tag[] }>> {
  return withTagOptions(env.DB, "EVENT_HANDLER", handlers, { metadata: true });
}

/**
 * Conductor's event handlers (`EventResource`): what to do when an EVENT task publishes an event. With no access rule
 * of their own they are for system admins: a handler's actions start workflows and complete tasks on anyone's behalf.
 */
export function registerEventRoutes(router: RouterType<IRequest, Args>): void {
  // Orkes' OrkesEventHandler carries `tags`: stored with the handler (replacing its tags unless `overwriteTags` is false),
  // and shown in every listing of handlers.
  router.post("/api/event", async (request, env) => {
    const body = await requiredBody(request, env);
    const handlers = parseEventHandlers(body);
    await new EventHandlerRepository(env.DB).add(handlers, await tagStatements(env, body, handlers));
    return new Response(null, { status: 200 });
  });

  router.put("/api/event", async (request, env) => {
    const body = await requiredBody(request, env);
    const handler = parseEventHandler(body);
    await new EventHandlerRepository(env.DB).update(handler, await tagStatements(env, body, [handler]));
    return new Response(null, { status: 200 });
  });

  router.get("/api/event", async (_request, env) => Response.json(await withTags(env, await new EventHandlerRepository(env.DB).list())));

  // Orkes' record of what handlers did (EventClient's getAllActiveEventHandlers, getEventExecutions,
  // getEventHandlersWithStats, getEventMessages): before the lookup by event, whose pattern they fit.
  router.get("/api/event/execution", async (_request, env) => searchResult(await new EventRecordRepository(env.DB).handlerStats()));
  router.get("/api/event/execution/:eventHandlerName", async (request, env) =>
    Response.json(await new EventRecordRepository(env.DB).executionsOf(decodedPathParam(request, "eventHandlerName"), fromQuery(request))),
  );
  // Orkes answers both with the same HandledEventResponse rows (the clients' getEventHandlersWithStats reads this one).
  router.get("/api/event/message", async (_request, env) => searchResult(await new EventRecordRepository(env.DB).handlerStats()));
  router.get("/api/event/message/:event", async (request, env) => Response.json(await new EventRecordRepository(env.DB).messagesOf(decodedPathParam(request, "event"), fromQuery(request))));

  // Orkes' lookup by name; before the lookup by event, whose pattern it fits.
  router.get("/api/event/handler/:name", async (request, env) => Response.json((await withTags(env, [await new EventHandlerRepository(env.DB).get(decodedPathParam(request, "name"))]))[0]));

  router.get("/api/event/:event", async (request, env) => {
    const activeOnly = booleanQuery(request, "activeOnly", true);
    return Response.json(await withTags(env, await new EventHandlerRepository(env.DB).forEvent(decodedPathParam(request, "event"), activeOnly)));
  });

  router.delete("/api/event/:name", async (request, env) => {
    await new EventHandlerRepository(env.DB).remove(decodedPathParam(request, "name"));
    return new Response(null, { status: 200 });
  });
}
