/**
 * Orkes' groups (the clients' AuthorizationClient): users sharing roles, each member holding the group's roles as if
 * assigned them. Through the real router and D1.
 */
import { describe, expect, it } from "vitest";
import { call, createUser, orkes, whileGroupReadsWithoutRoles } from "./auth-helpers";
import { api, apiOk } from "./helpers";

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

  it("keeps and shows a group's defaultAccess, as the Java client's requests always send one (not applied: it gives nothing)", async () => {
    const defaultAccess = { WORKFLOW_DEF: ["CREATE", "READ", "UPDATE", "EXECUTE", "DELETE"], TASK_DEF: ["READ", "READ"] };
    const saved = await apiOk("PUT", "/api/groups/java-defaults", { description: "from the Java client", roles: [], defaultAccess });
    expect(saved["defaultAccess"]).toEqual({ ...defaultAccess, TASK_DEF: ["READ"] });
    expect((await apiOk("GET", "/api/groups/java-defaults"))["defaultAccess"]).toEqual({ ...defaultAccess, TASK_DEF: ["READ"] });
    // Saved again without it: none.
    expect((await apiOk("PUT", "/api/groups/java-defaults", { description: "again", roles: [], defaultAccess: null }))["defaultAccess"]).toEqual({});
    expect(await apiOk("GET", "/api/groups/java-defaults/permissions")).toEqual({ grantedAccess: [] });
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
