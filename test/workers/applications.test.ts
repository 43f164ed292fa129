/**
 * Orkes' applications (the clients' ApplicationClient): identities with access keys and roles, acting as the user
 * `app:<id>`. Through the real router and D1.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, createUser, orkes, tokenFor } from "./auth-helpers";
import { api, apiOk } from "./helpers";
import { SecurityStore } from "../../src/worker/security/store";
import { ApplicationRepository } from "../../src/worker/security/applications";

interface Application {
  id: string;
  name: string;
  tags: Array<{ key: string; value: string }>;
  createdBy: string;
  updatedBy: string;
  createTime: number;
  updateTime: number;
}

const definition = (name: string) => ({ name, version: 1, schemaVersion: 2, ownerEmail: "apps@example.com", tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP", inputParameters: {} }] });

async function newApplication(name: string): Promise<Application> {
  return apiOk<Application>("POST", "/api/applications", { name });
}

async function newKey(applicationId: string): Promise<{ id: string; secret: string }> {
  return apiOk("POST", `/api/applications/${applicationId}/accessKeys`);
}

/**
 * Runs `request` as if `application`, deleted already, were still there when its route reads it: the race of a request
 * that read the application just before a DELETE took it (and what it held) away.
 */
async function whileStillRead(application: Application, request: () => Promise<Response>): Promise<Response> {
  const read = ApplicationRepository.prototype.get;
  ApplicationRepository.prototype.get = async function (this: ApplicationRepository, id: string) {
    return id === application.id ? application : read.call(this, id);
  };
  try {
    return await request();
  } finally {
    ApplicationRepository.prototype.get = read;
  }
}

/** How many access keys user `userId` has. */
async function keysOf(userId: string): Promise<number> {
  return (await env.DB.prepare(`SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?`).bind(userId).first<{ n: number }>())!.n;
}

/** How many assignment rows (roles and direct permissions) user `userId` has: 0 or 1. */
async function assignmentsOf(userId: string): Promise<number> {
  return (await env.DB.prepare(`SELECT COUNT(*) AS n FROM user_assignments WHERE user_id = ?`).bind(userId).first<{ n: number }>())!.n;
}

/** The members of group `groupId`, by user id. */
async function membersOf(groupId: string): Promise<string[]> {
  const { results } = await env.DB.prepare(`SELECT user_id FROM group_members WHERE group_id = ? ORDER BY user_id`).bind(groupId).all<{ user_id: string }>();
  return results.map((row) => row.user_id);
}

describe("applications", () => {
  it("creates, reads, lists, renames and deletes an application, recording who did it", async () => {
    const created = await newApplication("  billing-worker  ");
    expect(created).toMatchObject({ name: "billing-worker", tags: [], createdBy: "admin", updatedBy: "admin" });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await apiOk("GET", `/api/applications/${created.id}`)).toEqual(created);
    expect(await apiOk<Application[]>("GET", "/api/applications")).toContainEqual(created);

    const renamed = await apiOk<Application>("PUT", `/api/applications/${created.id}`, { name: "billing" });
    expect(renamed).toMatchObject({ id: created.id, name: "billing", createTime: created.createTime });
    expect(renamed.updateTime).toBeGreaterThanOrEqual(created.updateTime);

    // As https://orkes.io/content/reference-docs/api/applications/delete-application answers it.
    expect(await apiOk("DELETE", `/api/applications/${created.id}`)).toEqual({ message: `Deleted Application '${created.id}'` });
    expect((await api("GET", `/api/applications/${created.id}`)).status).toBe(404);
    expect((await api("PUT", `/api/applications/${created.id}`, { name: "x" })).status).toBe(404);
    expect((await api("DELETE", `/api/applications/${created.id}`)).status).toBe(404);
  });

  it("refuses a body without a usable name, creating nothing", async () => {
    const before = (await apiOk<Application[]>("GET", "/api/applications")).length;
    for (const body of [{}, { name: "" }, { name: "   " }, { name: 7 }, { name: "x".repeat(256) }, ["name"]]) {
      const response = await api("POST", "/api/applications", body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect((await response.json<{ error: string }>()).error).toBe("VALIDATION_ERROR");
    }
    expect(await apiOk<Application[]>("GET", "/api/applications")).toHaveLength(before);
  });

  it("gives an application access keys that authenticate as it, with the roles it was given, and finds it by key", async () => {
    const application = await newApplication("metadata-ci");
    const key = await newKey(application.id);
    expect(key.secret.length).toBeGreaterThan(20);
    // Without a role it can sign in but do nothing.
    const tokens = await tokenFor(key.id, key.secret);
    expect((await call("POST", "/api/metadata/workflow", orkes(tokens.token), definition("app_defined"))).status).toBe(403);

    expect((await api("POST", `/api/applications/${application.id}/roles/METADATA_MANAGER`)).status).toBe(200);
    expect(await apiOk("GET", `/api/security/users/app:${application.id}`)).toEqual({ userId: `app:${application.id}`, roles: ["METADATA_MANAGER"], directPermissions: [], groups: [] });
    expect((await call("POST", "/api/metadata/workflow", { "x-api-key": `${key.id}:${key.secret}` }, definition("app_defined"))).status).toBe(200);
    // It manages definitions, and runs nothing.
    expect((await call("POST", "/api/workflow/app_defined", { "x-api-key": `${key.id}:${key.secret}` }, {})).status).toBe(403);
    expect(await (await call("GET", "/api/token/userInfo", { "x-api-key": `${key.id}:${key.secret}` })).json()).toMatchObject({
      id: `app:${application.id}`,
      name: "metadata-ci",
      applicationUser: true,
      roles: [{ name: "METADATA_MANAGER" }],
    });

    expect(await apiOk("GET", `/api/applications/key/${key.id}`)).toMatchObject({ id: application.id, name: "metadata-ci" });
    expect((await api("GET", `/api/applications/key/${crypto.randomUUID()}`)).status).toBe(404);
    // A user's key is no application's.
    const user = await createUser("not-an-app");
    expect((await api("GET", `/api/applications/key/${user.keyId}`)).status).toBe(404);

    expect((await api("DELETE", `/api/applications/${application.id}/roles/METADATA_MANAGER`)).status).toBe(200);
    expect((await call("POST", "/api/metadata/workflow", { "x-api-key": `${key.id}:${key.secret}` }, definition("app_defined_again"))).status).toBe(403);
  });

  it("holds at most 100 roles, as a user's assignment does: the 101st is a 400 that changes nothing", async () => {
    const application = await newApplication("many-roles");
    const names = Array.from({ length: 101 }, (_, index) => `app-role-${index}`);
    for (const name of names) await apiOk("POST", "/api/security/roles", { name, permissions: [] }, 201);
    for (const name of names.slice(0, 100)) expect((await api("POST", `/api/applications/${application.id}/roles/${name}`)).status).toBe(200);
    const refused = await api("POST", `/api/applications/${application.id}/roles/${names[100]}`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ path: "role", message: expect.stringContaining("at most 100") }] });
    expect((await apiOk<{ roles: string[] }>("GET", `/api/security/users/app:${application.id}`)).roles).toEqual(names.slice(0, 100));
    // One given more before the bound can still give some up.
    const store = new SecurityStore(env.DB);
    const previous = await store.getAssignment(`app:${application.id}`);
    expect(await store.putAssignment({ userId: `app:${application.id}`, roles: names, directPermissions: [] }, previous)).toBe(true);
    expect((await api("DELETE", `/api/applications/${application.id}/roles/${names[0]}`)).status).toBe(200);
    expect((await apiOk<{ roles: string[] }>("GET", `/api/security/users/app:${application.id}`)).roles).toEqual(names.slice(1));
  });

  it("refuses a role that is not defined, and one the caller does not hold, changing nothing", async () => {
    const application = await newApplication("overreaching");
    const unknown = await api("POST", `/api/applications/${application.id}/roles/NO_SUCH_ROLE`);
    expect(unknown.status).toBe(400);
    expect((await unknown.json<{ validationErrors: Array<{ path: string; message: string }> }>()).validationErrors).toEqual([
      { path: "role", message: "no role named NO_SUCH_ROLE; define it first (POST /api/security/roles)" },
    ]);
    const userAdmin = await createUser("apps-user-admin", { directPermissions: [{ action: "USER_ADMIN", scope: "*" }] });
    const refused = await call("POST", `/api/applications/${application.id}/roles/ADMIN`, orkes(userAdmin.token));
    expect(refused.status).toBe(403);
    expect((await refused.json<{ message: string }>()).message).toMatch(/assigning ADMIN to application .* would give .*SYSTEM_ADMIN on \*/);
    expect(await apiOk("GET", `/api/security/users/app:${application.id}`)).toEqual({ userId: `app:${application.id}`, roles: [], directPermissions: [], groups: [] });
    // Nor a key for an application holding more than the caller.
    expect((await api("POST", `/api/applications/${application.id}/roles/ADMIN`)).status).toBe(200);
    expect((await call("POST", `/api/applications/${application.id}/accessKeys`, orkes(userAdmin.token))).status).toBe(403);
    expect(await apiOk("GET", `/api/applications/${application.id}/accessKeys`)).toEqual([]);
    // A caller without USER_ADMIN reaches none of it.
    const worker = await createUser("apps-worker", { roles: ["UNRESTRICTED_WORKER"] });
    expect((await call("GET", "/api/applications", orkes(worker.token))).status).toBe(403);
  });

  it("lists keys with their status; an inactive key authenticates nothing and ends its sessions, until activated again", async () => {
    const application = await newApplication("toggled");
    expect((await api("POST", `/api/applications/${application.id}/roles/USER_READ_ONLY`)).status).toBe(200);
    const key = await newKey(application.id);
    const tokens = await tokenFor(key.id, key.secret);
    expect((await call("GET", "/api/metadata/workflow", orkes(tokens.token))).status).toBe(200);
    const [listed] = await apiOk<Array<{ id: string; createdAt: number; status: string }>>("GET", `/api/applications/${application.id}/accessKeys`);
    expect(listed).toMatchObject({ id: key.id, status: "ACTIVE" });

    expect(await apiOk("POST", `/api/applications/${application.id}/accessKeys/${key.id}/status`)).toEqual({ id: key.id, createdAt: listed!.createdAt, status: "INACTIVE" });
    expect((await call("POST", "/api/token", {}, { keyId: key.id, keySecret: key.secret })).status).toBe(401);
    expect((await call("GET", "/api/metadata/workflow", { "x-api-key": `${key.id}:${key.secret}` })).status).toBe(401);
    expect((await call("GET", "/api/metadata/workflow", orkes(tokens.token))).status).toBe(401);
    expect((await call("POST", "/api/security/token/refresh", {}, { refreshToken: tokens.refresh_token })).status).toBe(401);

    expect(await apiOk("POST", `/api/applications/${application.id}/accessKeys/${key.id}/status`)).toMatchObject({ status: "ACTIVE" });
    const again = await tokenFor(key.id, key.secret);
    expect((await call("GET", "/api/metadata/workflow", orkes(again.token))).status).toBe(200);
    expect((await api("POST", `/api/applications/${application.id}/accessKeys/${crypto.randomUUID()}/status`)).status).toBe(404);

    // A token request that checked the key just before it was made inactive (here: this isolate's key cache, up to a
    // second old, still says active) starts no session the deactivation's revocation would not end.
    expect((await call("GET", "/api/metadata/workflow", { "x-api-key": `${key.id}:${key.secret}` })).status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET active = 0 WHERE key_id = ?").bind(key.id).run();
    const late = await call("POST", "/api/token", {}, { keyId: key.id, keySecret: key.secret });
    expect(late.status, await late.clone().text()).toBe(401);
  });

  it("deletes a key, and with the application every key, session and role it had", async () => {
    const application = await newApplication("short-lived");
    expect((await api("POST", `/api/applications/${application.id}/roles/USER_READ_ONLY`)).status).toBe(200);
    const [first, second] = [await newKey(application.id), await newKey(application.id)];
    expect((await api("DELETE", `/api/applications/${application.id}/accessKeys/${first.id}`)).status).toBe(200);
    expect((await api("DELETE", `/api/applications/${application.id}/accessKeys/${first.id}`)).status).toBe(404);
    expect((await call("POST", "/api/token", {}, { keyId: first.id, keySecret: first.secret })).status).toBe(401);
    expect((await apiOk<Array<{ id: string }>>("GET", `/api/applications/${application.id}/accessKeys`)).map((key) => key.id)).toEqual([second.id]);

    const session = await tokenFor(second.id, second.secret);
    expect((await api("DELETE", `/api/applications/${application.id}`)).status).toBe(200);
    expect((await call("GET", "/api/metadata/workflow", orkes(session.token))).status).toBe(401);
    expect((await call("POST", "/api/token", {}, { keyId: second.id, keySecret: second.secret })).status).toBe(401);
    expect(await keysOf(`app:${application.id}`)).toBe(0);
    expect(await apiOk("GET", `/api/security/users/app:${application.id}`)).toEqual({ userId: `app:${application.id}`, roles: [], directPermissions: [], groups: [] });
  });

  it("gives no key to an application deleted while the key was being made, nor to an application's user with no application: 404, nothing written", async () => {
    const application = await newApplication("deleted-meanwhile");
    // The route read the application, then it was deleted (with its keys) before the key was written.
    expect((await api("DELETE", `/api/applications/${application.id}`)).status).toBe(200);
    const late = await whileStillRead(application, () => api("POST", `/api/applications/${application.id}/accessKeys`));
    expect(late.status, await late.clone().text()).toBe(404);
    expect(await keysOf(`app:${application.id}`)).toBe(0);

    // Nor through the security API, which gives an application's user keys while the application exists.
    const missing = await api("POST", `/api/security/users/app:${application.id}/api-keys`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: "NOT_FOUND", message: expect.stringContaining(application.id) });
    expect(await keysOf(`app:${application.id}`)).toBe(0);
    const living = await newApplication("still-here");
    const key = await apiOk<{ keyId: string; keySecret: string }>("POST", `/api/security/users/app:${living.id}/api-keys`, undefined, 201);
    expect((await call("GET", "/api/token/userInfo", { "x-api-key": `${key.keyId}:${key.keySecret}` })).status).toBe(200);
  });

  it("gives no role to an application deleted while the role was being assigned: 404, nothing written", async () => {
    const application = await newApplication("roled-while-deleted");
    // The route read the application, then it was deleted (with its roles) before the role was written.
    expect((await api("DELETE", `/api/applications/${application.id}`)).status).toBe(200);
    const late = await whileStillRead(application, () => api("POST", `/api/applications/${application.id}/roles/METADATA_MANAGER`));
    expect(late.status, await late.clone().text()).toBe(404);
    expect(await late.json()).toMatchObject({ error: "NOT_FOUND", message: expect.stringContaining(application.id) });
    expect(await assignmentsOf(`app:${application.id}`)).toBe(0);
  });

  it("assigns no roles through the security API to an application's user with no application: 404, nothing written; others unchanged", async () => {
    const application = await newApplication("gone-before-roles");
    expect((await api("DELETE", `/api/applications/${application.id}`)).status).toBe(200);
    for (const userId of [`app:${application.id}`, `app:never-${crypto.randomUUID()}`]) {
      const refused = await api("PUT", `/api/security/users/${userId}/roles`, { roles: ["METADATA_MANAGER"], directPermissions: [] });
      expect(refused.status, await refused.clone().text()).toBe(404);
      expect(await refused.json()).toMatchObject({ error: "NOT_FOUND", message: expect.stringContaining(userId) });
      expect(await assignmentsOf(userId)).toBe(0);
    }
    const living = await newApplication("roled-here");
    expect((await api("PUT", `/api/security/users/app:${living.id}/roles`, { roles: ["METADATA_MANAGER"], directPermissions: [] })).status).toBe(200);
    expect((await apiOk<{ roles: string[] }>("GET", `/api/security/users/app:${living.id}`)).roles).toEqual(["METADATA_MANAGER"]);
    const person = `person-${crypto.randomUUID().slice(0, 8)}`;
    expect((await api("PUT", `/api/security/users/${person}/roles`, { roles: ["METADATA_MANAGER"], directPermissions: [] })).status).toBe(200);
  });

  it("gives no per-resource access to an application's user with no application: 404, nothing written; an application's user with one gets it", async () => {
    const access = (id: string) => ({ subject: { type: "USER", id }, target: { type: "WORKFLOW_DEF", id: "some-flow" }, access: ["READ"] });
    const application = await newApplication("gone-before-access");
    expect((await api("DELETE", `/api/applications/${application.id}`)).status).toBe(200);
    for (const userId of [`app:${application.id}`, `app:never-${crypto.randomUUID()}`]) {
      const refused = await api("POST", "/api/auth/authorization", access(userId));
      expect(refused.status, await refused.clone().text()).toBe(404);
      expect(await refused.json()).toMatchObject({ error: "NOT_FOUND", message: expect.stringContaining(userId) });
      expect(await assignmentsOf(userId)).toBe(0);
    }
    const living = await newApplication("granted-here");
    expect((await api("POST", "/api/auth/authorization", access(`app:${living.id}`))).status).toBe(200);
    expect(await assignmentsOf(`app:${living.id}`)).toBe(1);
  });

  it("still takes roles away from an application's user whose application is gone (leftovers trimmed), while giving one is a 404", async () => {
    const userId = `app:gone-${crypto.randomUUID()}`;
    // A leftover from before roles needed the application: written as the old code did.
    const previous = await new SecurityStore(env.DB).getAssignment(userId);
    expect(await new SecurityStore(env.DB).putAssignment({ userId, roles: ["METADATA_MANAGER"], directPermissions: [] }, previous)).toBe(true);
    expect((await api("PUT", `/api/security/users/${userId}/roles`, { roles: ["METADATA_MANAGER", "USER_READ_ONLY"], directPermissions: [] })).status).toBe(404);
    const trimmed = await api("PUT", `/api/security/users/${userId}/roles`, { roles: [], directPermissions: [] });
    expect(trimmed.status, await trimmed.clone().text()).toBe(200);
    expect((await new SecurityStore(env.DB).getAssignment(userId))?.roles ?? []).toEqual([]);
  });

  it("makes no application's user with no application a group member, alone or in a bulk add: 404, nothing written; leftovers still removed", async () => {
    const groupId = `app-members-${crypto.randomUUID().slice(0, 8)}`;
    await apiOk("PUT", `/api/groups/${groupId}`, { description: "", roles: ["METADATA_MANAGER"], defaultAccess: {} });
    const gone = await newApplication("gone-before-joining");
    expect((await api("DELETE", `/api/applications/${gone.id}`)).status).toBe(200);
    const never = `app:never-${crypto.randomUUID()}`;
    const person = `person-${crypto.randomUUID().slice(0, 8)}`;
    for (const userId of [`app:${gone.id}`, never]) {
      const refused = await api("POST", `/api/groups/${groupId}/users/${userId}`);
      expect(refused.status, await refused.clone().text()).toBe(404);
      expect(await refused.json()).toMatchObject({ error: "NOT_FOUND", message: expect.stringContaining(userId) });
    }
    // The bulk form: one missing application refuses the whole list, the person in it included.
    const bulk = await api("POST", `/api/groups/${groupId}/users`, [person, never]);
    expect(bulk.status, await bulk.clone().text()).toBe(404);
    expect(await membersOf(groupId)).toEqual([]);
    const living = await newApplication("joining-here");
    expect((await api("POST", `/api/groups/${groupId}/users`, [person, `app:${living.id}`])).status).toBe(200);
    expect(await membersOf(groupId)).toEqual([`app:${living.id}`, person].sort());
    // A leftover membership (written as before the check) is still taken away.
    await env.DB.prepare(`INSERT INTO group_members (group_id, user_id) VALUES (?, ?)`).bind(groupId, never).run();
    expect((await api("DELETE", `/api/groups/${groupId}/users/${never}`)).status).toBe(200);
    expect(await membersOf(groupId)).not.toContain(never);
  });

  it("names the missing applications of a refused bulk addition in one query, not one per user (Workers Free allows an invocation 50 D1 queries)", async () => {
    const groupId = `app-bulk-${crypto.randomUUID().slice(0, 8)}`;
    await apiOk("PUT", `/api/groups/${groupId}`, { description: "", roles: [], defaultAccess: {} });
    const living = await newApplication("bulk-joining");
    const missing = Array.from({ length: 30 }, (_, i) => `app:bulk-missing-${i}-${crypto.randomUUID().slice(0, 8)}`);
    // Counted where the queries are made: the D1 binding's prepare, whose class the router's binding shares.
    const database = Object.getPrototypeOf(env.DB) as { prepare: (this: unknown, query: string) => unknown };
    const { prepare } = database;
    let queries = 0;
    database.prepare = function (this: unknown, query: string) {
      queries++;
      return prepare.call(this, query);
    };
    let refused: Response;
    try {
      refused = await api("POST", `/api/groups/${groupId}/users`, [`app:${living.id}`, ...missing]);
    } finally {
      database.prepare = prepare;
    }
    expect(refused.status, await refused.clone().text()).toBe(404);
    const { message } = (await refused.json()) as { message: string };
    for (const userId of missing) expect(message).toContain(userId);
    expect(message).not.toContain(`app:${living.id}`);
    // The write is one statement per user added (and its check); reading the answer adds a few, whatever the count.
    expect(queries).toBeLessThan(missing.length + 1 + 10);
    expect(await membersOf(groupId)).toEqual([]);
  });

  it("a key made as its application is being deleted, and used meanwhile in this isolate, stops with the deletion", async () => {
    const application = await newApplication("keyed-while-deleted");
    const userId = `app:${application.id}`;
    const store = new SecurityStore(env.DB);
    const remove = SecurityStore.prototype.deleteUser;
    let late: { keyId: string; keySecret: string } | undefined;
    // Made (before the deletion's transaction, so the application still existed) and signed in with here, where the
    // deletion then runs: nothing listed it beforehand.
    SecurityStore.prototype.deleteUser = async function (this: SecurityStore, ...args: Parameters<typeof remove>) {
      late = await store.createApiKey(userId);
      expect(await store.verifyApiKey(late!.keyId, late!.keySecret)).toBe(userId);
      return remove.apply(this, args);
    };
    try {
      expect((await api("DELETE", `/api/applications/${application.id}`)).status).toBe(200);
    } finally {
      SecurityStore.prototype.deleteUser = remove;
    }
    expect(await store.verifyApiKey(late!.keyId, late!.keySecret)).toBeUndefined();
    expect((await call("GET", "/api/token/userInfo", { "x-api-key": `${late!.keyId}:${late!.keySecret}` })).status).toBe(401);
  });

  it("adds, lists and removes tags, a key given again taking its new value", async () => {
    const application = await newApplication("tagged");
    expect((await api("PUT", `/api/applications/${application.id}/tags`, [{ key: "team", value: "billing" }, { key: "env", value: "prod" }])).status).toBe(200);
    expect((await api("PUT", `/api/applications/${application.id}/tags`, [{ key: "team", value: "payments" }])).status).toBe(200);
    expect(await apiOk("GET", `/api/applications/${application.id}/tags`)).toEqual([{ key: "env", value: "prod" }, { key: "team", value: "payments" }]);
    expect((await api("DELETE", `/api/applications/${application.id}/tags`, [{ key: "team", value: "payments" }, { key: "env", value: "dev" }])).status).toBe(200);
    expect((await apiOk<Application>("GET", `/api/applications/${application.id}`)).tags).toEqual([{ key: "env", value: "prod" }]);
    expect((await api("PUT", `/api/applications/${application.id}/tags`, [{ key: "", value: "x" }])).status).toBe(400);
    expect(await apiOk("GET", `/api/applications/${application.id}/tags`)).toEqual([{ key: "env", value: "prod" }]);
    expect((await api("PUT", `/api/applications/${crypto.randomUUID()}/tags`, [])).status).toBe(404);
  });

  it("comes with Orkes' standard roles, which are roles like any other", async () => {
    const roles = await apiOk<Array<{ name: string; permissions: Array<{ action: string; scope: string }> }>>("GET", "/api/security/roles");
    const byName = new Map(roles.map((role) => [role.name, role.permissions]));
    expect(byName.get("ADMIN")).toHaveLength(9);
    expect(byName.get("UNRESTRICTED_WORKER")).toEqual([{ action: "TASK_EXECUTE", scope: "task:*" }]);
    expect(byName.get("WORKER")).toEqual([]);
    for (const name of ["METADATA_MANAGER", "WORKFLOW_MANAGER", "USER_READ_ONLY", "USER"]) expect(byName.has(name), name).toBe(true);
    expect(byName.get("METADATA_API")).toEqual([{ action: "METADATA_ADMIN", scope: "*" }]);
    // Every role name the JavaScript client's ApplicationRole offers can be given to an application.
    const application = await apiOk<Application>("POST", "/api/applications", { name: "apps-every-role" });
    const clientRoles = ["ADMIN", "UNRESTRICTED_WORKER", "METADATA_MANAGER", "WORKFLOW_MANAGER", "APPLICATION_MANAGER", "USER", "USER_READ_ONLY", "WORKER", "APPLICATION_CREATOR", "METADATA_API", "PROMPT_MANAGER"];
    for (const role of clientRoles) expect((await api("POST", `/api/applications/${application.id}/roles/${role}`)).status, role).toBe(200);
    expect((await api("POST", `/api/applications/${application.id}/roles/NO_SUCH_ROLE`)).status).toBe(400);
  });
});
