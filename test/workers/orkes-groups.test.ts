/**
 * Orkes' groups (the clients' AuthorizationClient): users sharing roles, each member holding the group's roles as if
 * assigned them. Through the real router and D1.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, createUser, orkes, whileGroupReadsWithoutRoles } from "./auth-helpers";
import { api, apiOk, waitTask } from "./helpers";
import { defaultAccessStatements, MAX_DEFAULT_GIVEN_CHARS } from "../../src/worker/security/default-access";

interface ConductorGroup {
  id: string;
  description: string;
  roles: Array<{ name: string; permissions: Array<{ name: string; scope: string }> }>;
  defaultAccess: Record<string, unknown>;
}

const readDefinitions = (token: string) => call("GET", "/api/metadata/workflow", orkes(token));

describe("Orkes' groups", () => {
  it("a member holding 100 roles of their own and others through groups signs in and is authorized (the roles are read as one parameter)", async () => {
    const names = Array.from({ length: 130 }, (_, index) => `many-${index}`);
    for (const name of names) await apiOk("POST", "/api/security/roles", { name, permissions: [{ action: "WORKFLOW_READ", scope: `workflow:${name}` }] }, 201);
    const member = await createUser("many-roles-member", { roles: names.slice(0, 100) });
    await apiOk("PUT", "/api/groups/many-roles", { description: "", roles: names.slice(70), defaultAccess: {} });
    expect((await api("POST", "/api/groups/many-roles/users/many-roles-member")).status).toBe(200);
    // No wait for the grants cache: the member made no request before joining, so nothing of theirs is cached (and a
    // change of a group forgets the isolate's cached grants at once).
    const info = (await (await call("GET", "/api/token/userInfo", orkes(member.token))).json()) as { permissions: Array<{ scope: string }> };
    expect(info.permissions.map((grant) => grant.scope).sort()).toEqual(names.map((name) => `workflow:${name}`).sort());
    // Joining more groups at once than one statement could name their roles: checked as one list too.
    await apiOk("PUT", "/api/groups/many-roles-2", { description: "", roles: names.slice(0, 60), defaultAccess: {} });
    await apiOk("PUT", "/api/groups/many-roles-3", { description: "", roles: names.slice(60, 120), defaultAccess: {} });
    expect((await api("PUT", "/api/users/many-roles-joiner", { name: "Joiner", roles: [], groups: ["many-roles-2", "many-roles-3"] })).status).toBe(200);
  });


  it("gives each member the group's roles: added, they may; removed, or the group deleted, they may not", async () => {
    const member = await createUser("group-member");
    expect((await readDefinitions(member.token)).status).toBe(403);
    const group = await apiOk<ConductorGroup>("PUT", "/api/groups/readers", { description: "read everything", roles: ["USER_READ_ONLY"], defaultAccess: {} });
    expect(group).toEqual({ id: "readers", description: "read everything", defaultAccess: {}, roles: [{ name: "USER_READ_ONLY", permissions: [{ name: "WORKFLOW_READ", scope: "*" }, { name: "TASK_READ", scope: "*" }] }] });
    expect(await apiOk("GET", "/api/groups/readers")).toEqual(group);
    expect((await apiOk<ConductorGroup[]>("GET", "/api/groups")).map((listed) => listed.id)).toContain("readers");

    expect((await api("POST", "/api/groups/readers/users/group-member")).status).toBe(200);
    expect((await readDefinitions(member.token)).status).toBe(200);
    expect(await apiOk("GET", "/api/users/group-member")).toMatchObject({ groups: [{ id: "readers", roles: [{ name: "USER_READ_ONLY" }] }] });
    expect((await apiOk<Array<{ id: string }>>("GET", "/api/groups/readers/users")).map((user) => user.id)).toEqual(["group-member"]);
    expect(await (await call("GET", "/api/token/userInfo", orkes(member.token))).json()).toMatchObject({ groups: [{ id: "readers" }], permissions: [{ action: "WORKFLOW_READ", scope: "*" }, { action: "TASK_READ", scope: "*" }] });

    expect((await api("DELETE", "/api/groups/readers/users/group-member")).status).toBe(200);
    expect((await readDefinitions(member.token)).status).toBe(403);
    expect((await api("POST", "/api/groups/readers/users", ["group-member", "group-other"])).status).toBe(200);
    expect((await readDefinitions(member.token)).status).toBe(200);
    // As https://orkes.io/content/reference-docs/api/groups/delete-group answers it.
    expect(await apiOk("DELETE", "/api/groups/readers")).toEqual({ message: "Deleted group 'readers'" });
    expect((await readDefinitions(member.token)).status).toBe(403);
    expect((await api("GET", "/api/groups/readers")).status).toBe(404);
    expect((await api("POST", "/api/groups/readers/users/group-member")).status).toBe(404);
  });

  it("refuses . and .. as a member's, group's or role's name: a client's URL for it would reach another route (DELETE /api/groups/ops/users/.. deleted the group)", async () => {
    await apiOk("PUT", "/api/groups/dots", { description: "dots", roles: [] });
    for (const id of [".", ".."]) {
      expect((await api("POST", "/api/groups/dots/users", [id])).status, id).toBe(400);
      expect((await api("PUT", `/api/users/${encodeURIComponent(id === "." ? "%2E" : "%2E%2E")}`, { name: "x", roles: [] })).status, id).toBe(400);
      expect((await api("POST", "/api/security/roles", { name: id, permissions: [] })).status, id).toBe(400);
    }
    expect(await apiOk("GET", "/api/groups/dots/users")).toEqual([]);
    const roles = await apiOk<Array<{ name: string }>>("GET", "/api/security/roles");
    expect(roles.map((role) => role.name).filter((name) => name === "." || name === "..")).toEqual([]);
  });

  it("joins a user to exactly the groups upsertUser names", async () => {
    // One role given as a string (as the JavaScript client's types declare it) is a list of one.
    expect((await apiOk<ConductorGroup>("PUT", "/api/groups/joined-a", { description: "a", roles: "USER" })).roles).toEqual([{ name: "USER", permissions: [] }]);
    await apiOk("PUT", "/api/groups/joined-b", { description: "b", roles: [] });
    expect((await apiOk<{ groups: Array<{ id: string }> }>("PUT", "/api/users/joiner", { name: "Joiner", groups: ["joined-a", "joined-b"] })).groups.map((group) => group.id)).toEqual(["joined-a", "joined-b"]);
    expect((await apiOk<{ groups: Array<{ id: string }> }>("PUT", "/api/users/joiner", { name: "Joiner", groups: ["joined-b"] })).groups.map((group) => group.id)).toEqual(["joined-b"]);
    expect((await apiOk<Array<{ id: string }>>("GET", "/api/groups/joined-a/users"))).toEqual([]);
    // Without groups, an upsert keeps them.
    expect((await apiOk<{ groups: Array<{ id: string }> }>("PUT", "/api/users/joiner", { name: "J" })).groups.map((group) => group.id)).toEqual(["joined-b"]);
    // Orkes' Gson-based Java client sends what it was not given as null: null is absent, for users and groups alike.
    const nulls = await apiOk<{ name: string; groups: Array<{ id: string }>; roles: Array<{ name: string }> }>("PUT", "/api/users/joiner", { name: null, roles: ["USER"], groups: null });
    expect([nulls.name, nulls.groups.map((group) => group.id), nulls.roles.map((role) => role.name)]).toEqual(["J", ["joined-b"], ["USER"]]);
    expect(await apiOk<ConductorGroup>("PUT", "/api/groups/joined-c", { description: null, roles: null, defaultAccess: null })).toMatchObject({ id: "joined-c", description: "", roles: [] });
  });

  it("hands out only what the caller holds, refuses unknown roles and per-resource grants, changing nothing", async () => {
    const userAdmin = await createUser("group-user-admin", { directPermissions: [{ action: "USER_ADMIN", scope: "*" }] });
    expect((await call("PUT", "/api/groups/admins", orkes(userAdmin.token), { description: "x", roles: ["ADMIN"] })).status).toBe(403);
    expect((await api("GET", "/api/groups/admins")).status).toBe(404);
    await apiOk("PUT", "/api/groups/admins", { description: "x", roles: ["ADMIN"] });
    expect((await call("POST", "/api/groups/admins/users/sneaky", orkes(userAdmin.token))).status).toBe(403);
    expect((await call("PUT", "/api/users/sneaky", orkes(userAdmin.token), { name: "S", groups: ["admins"] })).status).toBe(403);
    expect(await apiOk("GET", "/api/groups/admins/users")).toEqual([]);
    expect((await api("GET", "/api/users/sneaky")).status).toBe(404);
    // Taking away is not handing out.
    await apiOk("POST", "/api/groups/admins/users/leaver");
    expect((await call("DELETE", "/api/groups/admins/users/leaver", orkes(userAdmin.token))).status).toBe(200);

    const invalid = async (body: unknown) => {
      const response = await api("PUT", "/api/groups/invalid", body);
      expect(response.status).toBe(400);
      return ((await response.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path);
    };
    expect(await invalid({ description: "x", roles: ["NO_SUCH_ROLE"] })).toEqual(["roles[0]"]);
    expect(await invalid({ description: "x", defaultAccess: { WORKFLOW_DEF: ["ADMIN"] } })).toEqual(["defaultAccess.WORKFLOW_DEF[0]"]);
    expect(await invalid({ description: "x", defaultAccess: ["READ"] })).toEqual(["defaultAccess"]);
    expect((await api("GET", "/api/groups/invalid")).status).toBe(404);
    expect((await api("POST", "/api/groups/admins/users/admin")).status).toBe(400);
    expect(await apiOk("GET", "/api/groups/admins/users")).toEqual([]);
    expect(await apiOk("GET", "/api/groups/admins/permissions")).toEqual({ grantedAccess: [] });
  });

  it("keeps and shows a group's defaultAccess, as the Java client's requests always send one (set alone, it gives the group nothing)", async () => {
    const defaultAccess = { WORKFLOW_DEF: ["CREATE", "READ", "UPDATE", "EXECUTE", "DELETE"], TASK_DEF: ["READ", "READ"] };
    const saved = await apiOk("PUT", "/api/groups/java-defaults", { description: "from the Java client", roles: [], defaultAccess });
    expect(saved["defaultAccess"]).toEqual({ ...defaultAccess, TASK_DEF: ["READ"] });
    expect((await apiOk("GET", "/api/groups/java-defaults"))["defaultAccess"]).toEqual({ ...defaultAccess, TASK_DEF: ["READ"] });
    // Saved again without it: none.
    expect((await apiOk("PUT", "/api/groups/java-defaults", { description: "again", roles: [], defaultAccess: null }))["defaultAccess"]).toEqual({});
    expect(await apiOk("GET", "/api/groups/java-defaults/permissions")).toEqual({ grantedAccess: [] });
  });

  it("gives the group defaultAccess to the definitions its members create, as Orkes does: exactly that, to members only, from the creation on", async () => {
    const writer = [{ action: "WORKFLOW_WRITE", scope: "workflow:da_*" }, { action: "TASK_WRITE", scope: "task:da_*" }];
    const creator = await createUser("da-creator", { directPermissions: writer });
    const peer = await createUser("da-peer");
    const outsider = await createUser("da-outsider", { directPermissions: writer });
    const as = (user: { token: string }) => (method: string, path: string, body?: unknown) => call(method, path, orkes(user.token), body);
    const workflow = (name: string) => ({ name, version: 1, schemaVersion: 2, ownerEmail: "da@example.com", tasks: [waitTask("w")] });
    const create = async (user: { token: string }, name: string) => {
      expect((await as(user)("POST", "/api/metadata/workflow", workflow(name))).status).toBe(200);
      expect((await as(user)("POST", "/api/metadata/taskdefs", [{ name, ownerEmail: "da@example.com" }])).status).toBe(200);
    };
    const checked = async (user: string, type: string, id: string) => apiOk<Record<string, boolean>>("GET", `/api/users/${user}/checkPermissions?type=${type}&id=${id}`);
    const none = { CREATE: false, READ: false, UPDATE: false, EXECUTE: false, DELETE: false };

    await apiOk("PUT", "/api/groups/da-team", { description: "shares", roles: [], defaultAccess: { WORKFLOW_DEF: ["READ", "EXECUTE"], TASK_DEF: ["READ"] } });
    // Created before its creator joined: not the group's.
    await create(creator, "da_before");
    await apiOk("POST", "/api/groups/da-team/users", ["da-creator", "da-peer"]);
    await create(creator, "da_flow");
    // By a non-member: not the group's either.
    await create(outsider, "da_solo");

    // The other member: READ and EXECUTE on the workflow, READ on the task definition, nothing else.
    expect((await as(peer)("GET", "/api/metadata/workflow/da_flow")).status).toBe(200);
    expect((await as(peer)("POST", "/api/workflow/da_flow", {})).status).toBe(200);
    expect((await as(peer)("PUT", "/api/metadata/workflow", [{ ...workflow("da_flow"), description: "changed" }])).status).toBe(403);
    expect((await as(peer)("DELETE", "/api/metadata/workflow/da_flow/1")).status).toBe(403);
    expect((await as(peer)("GET", "/api/metadata/taskdefs/da_flow")).status).toBe(200);
    expect((await as(peer)("PUT", "/api/metadata/taskdefs", { name: "da_flow", ownerEmail: "da@example.com", description: "changed" })).status).toBe(403);
    for (const name of ["da_before", "da_solo"]) expect((await as(peer)("GET", `/api/metadata/workflow/${name}`)).status, name).toBe(403);
    // A non-member: nothing.
    expect((await as(outsider)("GET", "/api/metadata/workflow/da_flow")).status).toBe(403);
    expect((await as(outsider)("POST", "/api/workflow/da_flow", {})).status).toBe(403);

    // Shown as the group's grants, wherever grants are shown and checked.
    expect(await checked("da-peer", "WORKFLOW_DEF", "da_flow")).toEqual({ ...none, READ: true, EXECUTE: true });
    expect(await checked("da-peer", "TASK_DEF", "da_flow")).toEqual({ ...none, READ: true });
    expect(await checked("da-peer", "WORKFLOW_DEF", "da_before")).toEqual(none);
    expect(await checked("da-outsider", "WORKFLOW_DEF", "da_flow")).toEqual({ ...none, CREATE: true, UPDATE: true, DELETE: true });
    expect(await apiOk("GET", "/api/groups/da-team/permissions")).toEqual({
      grantedAccess: [
        { target: { type: "TASK_DEF", id: "da_flow" }, access: ["READ"] },
        { target: { type: "WORKFLOW_DEF", id: "da_flow" }, access: ["READ", "EXECUTE"] },
      ],
    });
    expect(await apiOk("GET", "/api/auth/authorization/WORKFLOW_DEF/da_flow?groupBy=subject")).toEqual({ "GROUP:da-team": ["READ", "EXECUTE"] });
    // A new version, or a definition saved again, is no creation: one created before its creator joined stays unshared.
    expect((await as(creator)("POST", "/api/metadata/workflow?newVersion=true", workflow("da_before"))).status).toBe(200);
    expect((await as(creator)("PUT", "/api/metadata/taskdefs", { name: "da_before", ownerEmail: "da@example.com", description: "again" })).status).toBe(200);
    expect(await checked("da-peer", "WORKFLOW_DEF", "da_before")).toEqual(none);
    expect(await checked("da-peer", "TASK_DEF", "da_before")).toEqual(none);

    // Changed, the group's defaultAccess applies to what is created after; what it gave stays the group's grant.
    await apiOk("PUT", "/api/groups/da-team", { description: "shares", roles: [], defaultAccess: { WORKFLOW_DEF: ["READ"] } });
    await create(creator, "da_after");
    expect(await checked("da-peer", "WORKFLOW_DEF", "da_after")).toEqual({ ...none, READ: true });
    expect(await checked("da-peer", "TASK_DEF", "da_after")).toEqual(none);
    expect(await checked("da-peer", "WORKFLOW_DEF", "da_flow")).toEqual({ ...none, READ: true, EXECUTE: true });

    // Leaving the group, the member loses it; the group deleted, every member does.
    await apiOk("DELETE", "/api/groups/da-team/users/da-peer");
    expect((await as(peer)("GET", "/api/metadata/workflow/da_flow")).status).toBe(403);
    expect(await checked("da-peer", "WORKFLOW_DEF", "da_flow")).toEqual(none);
    // The creator held its writes of its own; its READ was the group's.
    const written = { ...none, CREATE: true, UPDATE: true, DELETE: true };
    expect(await checked("da-creator", "WORKFLOW_DEF", "da_after")).toEqual({ ...written, READ: true });
    await apiOk("DELETE", "/api/groups/da-team");
    expect(await checked("da-creator", "WORKFLOW_DEF", "da_after")).toEqual(written);
  });

  it("takes grants from a group its members' creations took past the 200 a subject may be given (not refused as too many)", async () => {
    await apiOk("PUT", "/api/groups/da-many", { description: "many", roles: [], defaultAccess: { WORKFLOW_DEF: ["READ"] } });
    const many = Array.from({ length: 202 }, (_, index) => ({ action: "WORKFLOW_READ", scope: `workflow:da_many_${index}` }));
    // As 202 creations by members would have left it.
    await env.DB.prepare(`UPDATE groups SET permissions = ? WHERE id = 'da-many'`).bind(JSON.stringify(many)).run();
    const revoke = { subject: { type: "GROUP", id: "da-many" }, target: { type: "WORKFLOW_DEF", id: "da_many_0" }, access: ["READ"] };
    expect(await apiOk("DELETE", "/api/auth/authorization", revoke)).toEqual({ message: "Removed permission" });
    expect((await apiOk<{ grantedAccess: unknown[] }>("GET", "/api/groups/da-many/permissions")).grantedAccess).toHaveLength(201);
    // Giving one more is still refused.
    expect((await api("POST", "/api/auth/authorization", { ...revoke, target: { type: "WORKFLOW_DEF", id: "da_many_x" } })).status).toBe(400);
  });

  it("refuses a defaultAccess of unknown target types or access kinds, or one giving what the caller does not hold, changing nothing", async () => {
    const saved = await apiOk("PUT", "/api/groups/da-strict", { description: "s", roles: [], defaultAccess: { TASK_DEF: ["READ"] } });
    const refused = async (defaultAccess: unknown, token?: string) => {
      const body = { description: "changed", roles: [], defaultAccess };
      const response = token === undefined ? await api("PUT", "/api/groups/da-strict", body) : await call("PUT", "/api/groups/da-strict", orkes(token), body);
      const answer = (await response.json()) as { status: number; validationErrors?: Array<{ path: string }> };
      expect(await apiOk("GET", "/api/groups/da-strict")).toEqual(saved);
      return [response.status, answer.validationErrors?.map((issue) => issue.path)];
    };
    expect(await refused({ WORKFLOW_DEFS: ["READ"] })).toEqual([400, ["defaultAccess.WORKFLOW_DEFS"]]);
    expect(await refused({ WORKFLOW_SCHEDULE: ["READ", "ADMIN"] })).toEqual([400, ["defaultAccess.WORKFLOW_SCHEDULE[1]"]]);
    expect(await refused({ TASK_DEF: ["READ", "ADMIN"] })).toEqual([400, ["defaultAccess.TASK_DEF[1]"]]);
    // Setting it hands that access out on every definition members create: a USER_ADMIN not holding it is refused.
    const userAdmin = await createUser("da-user-admin", { directPermissions: [{ action: "USER_ADMIN", scope: "*" }, { action: "WORKFLOW_READ", scope: "workflow:*" }] });
    expect(await refused({ TASK_DEF: ["READ"], WORKFLOW_DEF: ["EXECUTE"] }, userAdmin.token)).toEqual([403, undefined]);
    // What it holds, and what the group already had, it may set.
    expect((await call("PUT", "/api/groups/da-strict", orkes(userAdmin.token), { description: "s", roles: [], defaultAccess: { TASK_DEF: ["READ"], WORKFLOW_DEF: ["READ"] } })).status).toBe(200);
  });

  it("accepts Orkes' WORKFLOW_SCHEDULE in defaultAccess (as a UI sends all three types), kept and answered back, giving nothing", async () => {
    const defaultAccess = { WORKFLOW_DEF: [], TASK_DEF: [], WORKFLOW_SCHEDULE: [] };
    expect((await apiOk("PUT", "/api/groups/da-ui", { description: "ui", roles: [], defaultAccess }))["defaultAccess"]).toEqual(defaultAccess);
    const scheduled = { WORKFLOW_SCHEDULE: ["READ", "EXECUTE"] };
    expect((await apiOk("PUT", "/api/groups/da-ui", { description: "ui", roles: [], defaultAccess: scheduled }))["defaultAccess"]).toEqual(scheduled);
    expect((await apiOk("GET", "/api/groups/da-ui"))["defaultAccess"]).toEqual(scheduled);
    // Not applied: a member's workflow gives the group nothing through it.
    const creator = await createUser("da-ui-creator", { directPermissions: [{ action: "WORKFLOW_WRITE", scope: "workflow:da_ui_*" }] });
    await apiOk("POST", "/api/groups/da-ui/users/da-ui-creator");
    const workflow = { name: "da_ui_flow", version: 1, schemaVersion: 2, ownerEmail: "da@example.com", tasks: [waitTask("w")] };
    expect((await call("POST", "/api/metadata/workflow", orkes(creator.token), workflow)).status).toBe(200);
    expect(await apiOk("GET", "/api/groups/da-ui/permissions")).toEqual({ grantedAccess: [] });
  });

  it("gives nothing on a definition named with a * (its grant would be a wildcard over every definition it matches) or too long to name in a grant", async () => {
    const creator = await createUser("dw-creator", { directPermissions: [{ action: "WORKFLOW_WRITE", scope: "workflow:*" }, { action: "TASK_WRITE", scope: "task:*" }] });
    const peer = await createUser("dw-peer");
    await apiOk("PUT", "/api/groups/dw-team", { description: "s", roles: [], defaultAccess: { WORKFLOW_DEF: ["READ", "EXECUTE"], TASK_DEF: ["READ"] } });
    await apiOk("POST", "/api/groups/dw-team/users", ["dw-creator", "dw-peer"]);
    const workflow = (name: string) => ({ name, version: 1, schemaVersion: 2, ownerEmail: "dw@example.com", tasks: [waitTask("w")] });
    await apiOk("POST", "/api/metadata/workflow", workflow("dw_admins_only"));
    // And one longer than the 250 characters the authorization routes take as a target id (a name may have 255): its
    // grant could be neither looked up nor taken away.
    for (const name of ["*", "dw_*", `dw_${"x".repeat(250)}`]) {
      expect((await call("POST", "/api/metadata/workflow", orkes(creator.token), workflow(name))).status, name).toBe(200);
      expect((await call("POST", "/api/metadata/taskdefs", orkes(creator.token), [{ name, ownerEmail: "dw@example.com" }])).status, name).toBe(200);
    }
    const stored = await env.DB.prepare("SELECT permissions FROM groups WHERE id = 'dw-team'").first<{ permissions: string }>();
    expect(JSON.parse(stored!.permissions)).toEqual([]);
    expect((await call("POST", "/api/workflow/dw_admins_only", orkes(peer.token), {})).status).toBe(403);
    expect((await call("GET", "/api/metadata/workflow/dw_admins_only", orkes(peer.token))).status).toBe(403);
    // A plain name still gives.
    expect((await call("POST", "/api/metadata/workflow", orkes(creator.token), workflow("dw_plain"))).status).toBe(200);
    expect(await apiOk("GET", "/api/groups/dw-team/permissions")).toEqual({ grantedAccess: [{ target: { type: "WORKFLOW_DEF", id: "dw_plain" }, access: ["READ", "EXECUTE"] }] });
  });

  it("refuses adding a member to a group whose defaultAccess gives what the caller does not hold (403, nobody added)", async () => {
    const userAdmin = await createUser("dj-ua", { directPermissions: [{ action: "USER_ADMIN", scope: "*" }] });
    await createUser("dj-dev", { directPermissions: [{ action: "WORKFLOW_WRITE", scope: "workflow:dj_*" }] });
    await apiOk("PUT", "/api/groups/dj-team", { description: "s", roles: [], defaultAccess: { WORKFLOW_DEF: ["EXECUTE"] } });
    expect((await call("POST", "/api/groups/dj-team/users/dj-dev", orkes(userAdmin.token))).status).toBe(403);
    expect((await call("POST", "/api/groups/dj-team/users", orkes(userAdmin.token), ["dj-dev"])).status).toBe(403);
    expect((await call("PUT", "/api/users/dj-dev", orkes(userAdmin.token), { name: "dev", roles: [], groups: ["dj-team"] })).status).toBe(403);
    expect(await apiOk("GET", "/api/groups/dj-team/users")).toEqual([]);
    // One holding it may.
    const holder = await createUser("dj-holder", { directPermissions: [{ action: "USER_ADMIN", scope: "*" }, { action: "WORKFLOW_ADMIN", scope: "workflow:*" }, { action: "WORKFLOW_READ", scope: "workflow:*" }] });
    expect((await call("POST", "/api/groups/dj-team/users/dj-dev", orkes(holder.token))).status).toBe(200);
  });

  it("gives what the group's defaultAccess lists when the write runs, to a member only (a change meanwhile is not lost)", async () => {
    await createUser("dr-creator");
    await apiOk("PUT", "/api/groups/dr-team", { description: "s", roles: [], defaultAccess: { WORKFLOW_DEF: ["READ"] } });
    await apiOk("POST", "/api/groups/dr-team/users/dr-creator");
    const creator = { userId: "dr-creator", grants: [], method: "api-key" as const };
    const statements = (name: string) => defaultAccessStatements(env.DB, creator, "WORKFLOW_DEF", [name], async () => new Map());
    const permissions = async () => JSON.parse((await env.DB.prepare("SELECT permissions FROM groups WHERE id = 'dr-team'").first<{ permissions: string }>())!.permissions) as unknown[];
    // Read with READ listed; EXECUTE is listed by the time the batch runs: both are given.
    const read = await statements("dr_a");
    await env.DB.prepare(`UPDATE groups SET default_access = '{"WORKFLOW_DEF":["READ","EXECUTE"]}' WHERE id = 'dr-team'`).run();
    await env.DB.batch(read);
    expect(await apiOk("GET", "/api/groups/dr-team/permissions")).toEqual({ grantedAccess: [{ target: { type: "WORKFLOW_DEF", id: "dr_a" }, access: ["READ", "EXECUTE"] }] });
    // Emptied meanwhile: nothing.
    const emptied = await statements("dr_b");
    await env.DB.prepare(`UPDATE groups SET default_access = '{}' WHERE id = 'dr-team'`).run();
    await env.DB.batch(emptied);
    expect(await permissions()).toHaveLength(2);
    // The creator left meanwhile: nothing.
    await env.DB.prepare(`UPDATE groups SET default_access = '{"WORKFLOW_DEF":["READ"]}' WHERE id = 'dr-team'`).run();
    const left = await statements("dr_c");
    await apiOk("DELETE", "/api/groups/dr-team/users/dr-creator");
    await env.DB.batch(left);
    expect(await permissions()).toHaveLength(2);
  });

  it("stops giving a group defaultAccess grants at its bound, the member's registration still succeeding", async () => {
    const creator = await createUser("dc-creator", { directPermissions: [{ action: "WORKFLOW_WRITE", scope: "workflow:dc_*" }] });
    await apiOk("PUT", "/api/groups/dc-team", { description: "s", roles: [], defaultAccess: { WORKFLOW_DEF: ["READ"] } });
    await apiOk("POST", "/api/groups/dc-team/users/dc-creator");
    const grant = (index: number) => ({ action: "WORKFLOW_READ", scope: `workflow:dc_given_${String(index).padStart(200, "0")}` });
    const full = Array.from({ length: Math.ceil(MAX_DEFAULT_GIVEN_CHARS / JSON.stringify(grant(0)).length) }, (_, index) => grant(index));
    await env.DB.prepare("UPDATE groups SET permissions = ? WHERE id = 'dc-team'").bind(JSON.stringify(full)).run();
    const workflow = { name: "dc_more", version: 1, schemaVersion: 2, ownerEmail: "dc@example.com", tasks: [waitTask("w")] };
    expect((await call("POST", "/api/metadata/workflow", orkes(creator.token), workflow)).status).toBe(200);
    const stored = await env.DB.prepare("SELECT permissions FROM groups WHERE id = 'dc-team'").first<{ permissions: string }>();
    expect(JSON.parse(stored!.permissions)).toHaveLength(full.length);
    expect((await apiOk("GET", "/api/metadata/workflow/dc_more"))["name"]).toBe("dc_more");
  });

  it("changes no member when the group changed while the change was checked (409): not even a removal", async () => {
    await apiOk("PUT", "/api/groups/moving", { description: "m", roles: [] });
    await apiOk("POST", "/api/groups/moving/users/stays");
    await apiOk("PUT", "/api/groups/moving", { description: "m", roles: ["USER_READ_ONLY"] });
    await whileGroupReadsWithoutRoles("moving", async () => {
      expect((await api("DELETE", "/api/groups/moving/users/stays")).status).toBe(409);
      expect((await api("DELETE", "/api/groups/moving/users", ["stays"])).status).toBe(409);
    });
    expect((await apiOk<Array<{ id: string }>>("GET", "/api/groups/moving/users")).map((member) => member.id)).toEqual(["stays"]);
  });
});
