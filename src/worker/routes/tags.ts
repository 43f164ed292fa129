import type { IRequest, RouterType } from "itty-router";
import { notFound } from "../http/errors";
import { decodedPathParam } from "../http/params";
import { parseOrThrow } from "../schemas";
import { TagListSchema, TagRepository, TagSchema, tagView, type TagTarget } from "../tags";
import { requiredBody } from "./metadata";

type Args = [Env, ExecutionContext];

/** The definition a tags route names, by its path: a workflow definition's name or a task definition's. */
type TargetOf = (request: IRequest) => TagTarget;

const workflowDef: TargetOf = (request) => ({ type: "WORKFLOW_DEF", name: decodedPathParam(request, "name") });
const taskDef: TargetOf = (request) => ({ type: "TASK_DEF", name: decodedPathParam(request, "taskName") });

function missing(target: TagTarget) {
  return notFound(target.type === "WORKFLOW_DEF" ? `No workflow definition named ${target.name}` : `No task definition named ${target.name}`);
}

/** Serves the four tag routes of one kind of definition at `path`. */
function registerTargetRoutes(router: RouterType<IRequest, Args>, path: string, targetOf: TargetOf): void {
  router.get(path, async (request, env) => {
    const target = targetOf(request);
    const repository = new TagRepository(env.DB);
    if (!(await repository.exists(target))) throw missing(target);
    return Response.json((await repository.list(target)).map(tagView));
  });
  const write = (act: (repository: TagRepository, target: TagTarget, body: unknown) => Promise<boolean>) => async (request: IRequest, env: Env) => {
    const target = targetOf(request);
    if (!(await act(new TagRepository(env.DB), target, await requiredBody(request, env)))) throw missing(target);
    return new Response(null, { status: 200 });
  };
  router.post(path, write((repository, target, body) => repository.add(target, [parseOrThrow(TagSchema, body, "tag")])));
  router.put(path, write((repository, target, body) => repository.set(target, parseOrThrow(TagListSchema, body, "tags"))));
  router.delete(path, write((repository, target, body) => repository.remove(target, parseOrThrow(TagSchema, body, "tag"))));
}

/**
 * Orkes' metadata tags (MetadataClient's `addWorkflowTag`, `setWorkflowTags`, `getTaskTags`, …): `{key, value}` pairs on
 * a workflow definition (every version of its name) or a task definition, and the list of every tag in use.
 * Registered before the definition routes, whose `/{name}/{version}` would take `…/{name}/tags`.
 */
export function registerTagRoutes(router: RouterType<IRequest, Args>): void {
  registerTargetRoutes(router, "/api/metadata/workflow/:name/tags", workflowDef);
  registerTargetRoutes(router, "/api/metadata/task/:taskName/tags", taskDef);
  router.get("/api/metadata/tags", async (_request, env) => Response.json((await new TagRepository(env.DB).all()).map(tagView)));
}
