import type { IRequest, RouterType } from "itty-router";
import * as v from "valibot";
import { authorizeHandingOut } from "../auth/delegation";
import { grantsFor } from "../auth/grants";
import { forgetVerifiedTokens, keySessionRevocations, userKeySessionRevocations } from "../auth/tokens";
import { principalOf } from "../guard";
import { notFound, validationError } from "../http/errors";
import { decodedPathParam } from "../http/params";
import { parseOrThrow, requestObject, wellFormedText } from "../schemas";
import { APPLICATION_USER_PREFIX, ApplicationRepository, applicationExists, applicationUserId, type Application } from "../security/applications";
import { MAX_ASSIGNED_ROLES } from "../security/schemas";
import { ALWAYS, SecurityStore, type ApiKeyState, type WriteCondition } from "../security/store";
import { assignmentRefused, authorizeRoles, changedMeanwhile, whileApplicationExists } from "../security/users";
import { MAX_TAGS_PER_TARGET, TagListSchema, type Tag } from "../tags";
import { requiredBody } from "./metadata";
import { pathName } from "./security";

type Args = [Env, ExecutionContext];

/** Longest application name, in characters. */
const MAX_APPLICATION_NAME_LENGTH = 255;

/** Body of `POST /api/applications` and `PUT /api/applications/{id}` (Orkes' CreateOrUpdateApplicationRequest). */
const ApplicationBody = requestObject({
  name: v.pipe(
    v.string("must be a string"),
    v.trim(),
    v.minLength(1, "must not be empty"),
    v.maxLength(MAX_APPLICATION_NAME_LENGTH, `must be at most ${MAX_APPLICATION_NAME_LENGTH} characters`),
    wellFormedText,
  ),
});

/** Orkes' AccessKeyInfo: an access key as listed (its secret is never shown again). */
function accessKeyInfo(key: ApiKeyState): { id: string; createdAt: number; status: "ACTIVE" | "INACTIVE" } {
  return { id: key.keyId, createdAt: key.createTime, status: key.active ? "ACTIVE" : "INACTIVE" };
}

/** The application the path's `param` names; 404 when there is none. */
async function applicationAt(request: IRequest, env: Env, param: string): Promise<Application> {
  const id = decodedPathParam(request, param);
  const application = await new ApplicationRepository(env.DB).get(id);
  if (!application) throw notFound(`No application with id ${id}`);
  return application;
}

/** The access key `keyId` of `application`; 404 when it has none of that id. */
async function accessKeyOf(store: SecurityStore, application: Application, keyId: string): Promise<ApiKeyState> {
  const key = (await store.listApiKeyStates(applicationUserId(application.id))).find((candidate) => candidate.keyId === keyId);
  if (!key) throw notFound(`Application ${application.id} has no access key ${keyId}`);
  return key;
}

/**
 * Changes the role list of `application`'s user as `change` does, from its assignment now; `authorize` first sees the
 * roles it adds (to refuse handing out what the caller does not hold) and says what the write must still find true.
 * 409 when the assignment, or what `authorize` checked, changed meanwhile; 404 when the application was deleted meanwhile.
 */
async function changeRoles(env: Env, application: Application, change: (roles: string[]) => string[], authorize: (added: string[]) => Promise<WriteCondition> = async () => ALWAYS): Promise<void> {
  const store = new SecurityStore(env.DB);
  const userId = applicationUserId(application.id);
  const previous = await store.getAssignment(userId);
  const held = previous?.roles ?? [];
  const roles = change(held);
  if (roles.length === held.length && roles.every((role, index) => role === held[index])) return;
  // Only when it grows: an application given more before the bound can still give some up.
  if (roles.length > MAX_ASSIGNED_ROLES && roles.length > held.length) {
    throw validationError("Too many roles", [{ path: "role", message: `application ${application.id} would hold ${roles.length} roles; at most ${MAX_ASSIGNED_ROLES}` }]);
  }
  const added = roles.filter((role) => !held.includes(role));
  const checked = await authorize(added);
  // Roles added only while the application exists: one deleted meanwhile took its roles with it, and would not take these.
  const unchanged = added.length > 0 ? whileApplicationExists(userId, checked) : checked;
  if (!(await store.putAssignment({ userId, roles, directPermissions: previous?.directPermissions ?? [] }, previous, [], unchanged))) {
    throw await assignmentRefused(env.DB, userId, `the roles of application ${application.id}`);
  }
}

/** Changes `application`'s tags as `change` does; 409 when they changed meanwhile. */
async function changeTags(env: Env, application: Application, change: (tags: Tag[]) => Tag[]): Promise<void> {
  const next = change(application.tags);
  if (next.length > MAX_TAGS_PER_TARGET) throw validationError("Too many tags", [{ path: "(body)", message: `an application holds at most ${MAX_TAGS_PER_TARGET} tags; this would make ${next.length}` }]);
  if (!(await new ApplicationRepository(env.DB).replaceTags(application.id, next, application.tags))) throw changedMeanwhile(`the tags of application ${application.id}`);
}

/**
 * Orkes' applications API (the clients' ApplicationClient): applications, their access keys and their roles. An
 * application acts as the user `app:<id>`, so its keys authenticate as any API key does (`X-API-Key`, `POST /api/token`)
 * and its roles are that user's assignment; handing out follows the security API's rule (a caller gives only what it
 * holds). Authorized as the security API is (`USER_ADMIN`).
 */
export function registerApplicationRoutes(router: RouterType<IRequest, Args>): void {
  router.get("/api/applications", async (_request, env) => Response.json(await new ApplicationRepository(env.DB).list()));

  router.post("/api/applications", async (request, env) => {
    const body = parseOrThrow(ApplicationBody, await requiredBody(request, env), "application");
    return Response.json(await new ApplicationRepository(env.DB).create(body.name, principalOf(request).userId));
  });

  // Before the application by id, whose pattern it fits.
  router.get("/api/applications/key/:accessKeyId", async (request, env) => {
    const keyId = decodedPathParam(request, "accessKeyId");
    const owner = await new SecurityStore(env.DB).apiKeyOwner(keyId);
    const application = owner?.startsWith(APPLICATION_USER_PREFIX) ? await new ApplicationRepository(env.DB).get(owner.slice(APPLICATION_USER_PREFIX.length)) : null;
    if (!application) throw notFound(`No application has the access key ${keyId}`);
    return Response.json(application);
  });

  router.get("/api/applications/:id", async (request, env) => Response.json(await applicationAt(request, env, "id")));

  router.put("/api/applications/:id", async (request, env) => {
    const body = parseOrThrow(ApplicationBody, await requiredBody(request, env), "application");
    const renamed = await new ApplicationRepository(env.DB).rename(decodedPathParam(request, "id"), body.name, principalOf(request).userId);
    if (!renamed) throw notFound(`No application with id ${decodedPathParam(request, "id")}`);
    return Response.json(renamed);
  });

  // Its keys (and every session obtained with them) and its roles go with it.
  router.delete("/api/applications/:id", async (request, env) => {
    const application = await applicationAt(request, env, "id");
    const store = new SecurityStore(env.DB);
    const userId = applicationUserId(application.id);
    await store.deleteUser(userId, [...userKeySessionRevocations(env, userId), new ApplicationRepository(env.DB).deleteStatement(application.id)]);
    forgetVerifiedTokens();
    // Orkes' answer, word for word (its docs' example): a client reading the answer as JSON needs a body.
    return Response.json({ message: `Deleted Application '${application.id}'` });
  });

  router.get("/api/applications/:id/accessKeys", async (request, env) => {
    const application = await applicationAt(request, env, "id");
    return Response.json((await new SecurityStore(env.DB).listApiKeyStates(applicationUserId(application.id))).map(accessKeyInfo));
  });

  router.post("/api/applications/:id/accessKeys", async (request, env) => {
    const application = await applicationAt(request, env, "id");
    const userId = applicationUserId(application.id);
    // A key acts as its application: handing one out hands out everything the application holds.
    authorizeHandingOut(principalOf(request).grants, await grantsFor(env, userId), `a key for application ${application.id}`);
    // Made only while the application exists: one deleted meanwhile took its keys with it, and would not take this one.
    const key = await new SecurityStore(env.DB).createApiKey(userId, applicationExists(userId));
    if (!key) throw notFound(`No application with id ${application.id}`);
    return Response.json({ id: key.keyId, secret: key.keySecret }, { headers: { "cache-control": "no-store" } });
  });

  router.delete("/api/applications/:applicationId/accessKeys/:keyId", async (request, env) => {
    const application = await applicationAt(request, env, "applicationId");
    const keyId = decodedPathParam(request, "keyId");
    const deleted = await new SecurityStore(env.DB).deleteApiKey(applicationUserId(application.id), keyId, keySessionRevocations(env, keyId));
    forgetVerifiedTokens();
    if (!deleted) throw notFound(`Application ${application.id} has no access key ${keyId}`);
    return new Response(null, { status: 200 });
  });

  // Orkes' toggle: an ACTIVE key becomes INACTIVE (it authenticates nothing, and its sessions end), an INACTIVE one ACTIVE.
  router.post("/api/applications/:applicationId/accessKeys/:keyId/status", async (request, env) => {
    const application = await applicationAt(request, env, "applicationId");
    const store = new SecurityStore(env.DB);
    const userId = applicationUserId(application.id);
    const key = await accessKeyOf(store, application, decodedPathParam(request, "keyId"));
    const active = !key.active;
    // Activating a key hands out again everything the application holds.
    if (active) authorizeHandingOut(principalOf(request).grants, await grantsFor(env, userId), `activating a key of application ${application.id}`);
    if (!(await store.setApiKeyActive(userId, key.keyId, active, active ? [] : keySessionRevocations(env, key.keyId)))) throw changedMeanwhile(`access key ${key.keyId}`);
    forgetVerifiedTokens();
    return Response.json(accessKeyInfo({ ...key, active }));
  });

  router.post("/api/applications/:applicationId/roles/:role", async (request, env) => {
    const application = await applicationAt(request, env, "applicationId");
    const role = pathName(request, "role");
    const store = new SecurityStore(env.DB);
    if ((await store.unknownRoles([role])).length > 0) {
      throw validationError("Unknown role", [{ path: "role", message: `no role named ${role}; define it first (POST /api/security/roles)` }]);
    }
    await changeRoles(
      env,
      application,
      (roles) => (roles.includes(role) ? roles : [...roles, role]),
      (added) => authorizeRoles(principalOf(request).grants, store, added, `assigning ${role} to application ${application.id}`),
    );
    return new Response(null, { status: 200 });
  });

  router.delete("/api/applications/:applicationId/roles/:role", async (request, env) => {
    const application = await applicationAt(request, env, "applicationId");
    const role = pathName(request, "role");
    await changeRoles(env, application, (roles) => roles.filter((held) => held !== role));
    return new Response(null, { status: 200 });
  });

  router.get("/api/applications/:id/tags", async (request, env) => Response.json((await applicationAt(request, env, "id")).tags));

  // Orkes' putTagForApplication adds the tags (a key it holds takes the new value); DELETE removes those given.
  router.put("/api/applications/:id/tags", async (request, env) => {
    const application = await applicationAt(request, env, "id");
    const added = parseOrThrow(TagListSchema, await requiredBody(request, env), "tags");
    await changeTags(env, application, (tags) => [...tags.filter((tag) => !added.some((next) => next.key === tag.key)), ...added]);
    return new Response(null, { status: 200 });
  });

  router.delete("/api/applications/:id/tags", async (request, env) => {
    const application = await applicationAt(request, env, "id");
    const removed = parseOrThrow(TagListSchema, await requiredBody(request, env), "tags");
    await changeTags(env, application, (tags) => tags.filter((tag) => !removed.some((gone) => gone.key === tag.key && gone.value === tag.value)));
    return new Response(null, { status: 200 });
  });
}
