/**
 * Orkes' users API (the clients' AuthorizationClient: upsertUser, getUser, listUsers, deleteUser) over this service's
 * users: their assignment, keys and name. Through the real router and D1.
 */
import { describe, expect, it } from "vitest";
import { SecurityStore, type Role, type UserAssignment } from "../../src/worker/security/store";
import { call, createUser, orkes, tokenFor, whileGroupReadsWithoutRoles } from "./auth-helpers";
import { api, apiOk } from "./helpers";

interface ConductorUser {
  id: string;
  name: string;
  applicationUser: boolean;
  roles: Array<{ name: string; permissions: Array<{ name: string; scope: string }> }>;
  groups: unknown[];
}

describe("Orkes' users", () => {
  it("upserts a user with a name and roles, reads, lists and deletes them, keeping their direct permissions", async () => {
    await apiOk("PUT", "/api/security/users/jane@example.com/roles", { roles: [], directPermissions: [{ action: "TASK_READ", scope: "task:x" }], groups: [] });
    const upserted = await apiOk<ConductorUser>("PUT", "/api/users/jane@example.com", { name: " Jane Doe ", roles: ["USER_READ_ONLY"], groups: [] });
    expect(upserted).toMatchObject({ id: "jane@example.com", name: "Jane Doe", applicationUser: false, groups: [], roles: [{ name: "USER_READ_ONLY", permissions: [{ name: "WORKFLOW_READ", scope: "*" }, { name: "TASK_READ", scope: "*" }] }] });
    expect(await apiOk("GET", "/api/users/jane@example.com")).toEqual(upserted);
    expect(await apiOk("GET", "/api/security/users/jane@example.com")).toEqual({ userId: "jane@example.com", roles: ["USER_READ_ONLY"], directPermissions: [{ action: "TASK_READ", scope: "task:x" }], groups: [] });
    // Without roles, an upsert keeps those assigned and renames.
    expect(await apiOk<ConductorUser>("PUT", "/api/users/jane@example.com", { name: "Jane" })).toMatchObject({ name: "Jane", roles: [{ name: "USER_READ_ONLY" }] });
    expect((await apiOk<ConductorUser[]>("GET", "/api/users")).find((user) => user.id === "jane@example.com")).toMatchObject({ name: "Jane" });

    const key = await apiOk<{ keyId: string; keySecret: string }>("POST", "/api/security/users/jane@example.com/api-keys", undefined, 201);
    const session = await tokenFor(key.keyId, key.keySecret);
    expect((await call("GET", "/api/metadata/workflow", orkes(session.token))).status).toBe(200);
    // As https://orkes.io/content/reference-docs/api/users/delete-user answers it.
    expect(await apiOk("DELETE", "/api/users/jane@example.com")).toEqual({ message: "Deleted user 'jane@example.com'" });
    expect((await call("GET", "/api/metadata/workflow", orkes(session.token))).status).toBe(401);
    expect((await api("GET", "/api/users/jane@example.com")).status).toBe(404);
    expect((await api("DELETE", "/api/users/jane@example.com")).status).toBe(404);
  });

  it("refuses unknown roles and groups, roles the caller does not hold, and the admin's or an application's id, changing nothing", async () => {
    const refused = async (method: string, path: string, body?: unknown) => {
      const response = await api(method, path, body);
      expect(response.status, `${method} ${path}`).toBe(400);
      return ((await response.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path);
    };
    expect(await refused("PUT", "/api/users/bob", { name: "Bob", roles: ["USER", "NO_SUCH_ROLE"] })).toEqual(["roles[1]"]);
    expect(await refused("PUT", "/api/users/bob", { name: "Bob", groups: ["no-such-group"] })).toEqual(["groups[0]"]);
    expect(await refused("PUT", "/api/users/bob", { name: 7 })).toEqual(["name"]);
    expect(await refused("PUT", "/api/users/admin", { name: "Admin" })).toEqual(["id"]);
    expect(await refused("DELETE", `/api/users/app:${crypto.randomUUID()}`)).toEqual(["id"]);
    expect((await api("GET", "/api/users/bob")).status).toBe(404);

    const userAdmin = await createUser("orkes-user-admin", { directPermissions: [{ action: "USER_ADMIN", scope: "*" }] });
    const overreach = await call("PUT", "/api/users/bob", orkes(userAdmin.token), { name: "Bob", roles: ["ADMIN"] });
    expect(overreach.status).toBe(403);
    expect((await api("GET", "/api/users/bob")).status).toBe(404);
    const reader = await createUser("orkes-user-reader", { roles: ["USER_READ_ONLY"] });
    expect((await call("GET", "/api/users", orkes(reader.token))).status).toBe(403);
    // Not a user named "permissions": what bob was given directly (nothing: he was refused).
    expect(await apiOk("GET", "/api/users/bob/permissions")).toEqual({ grantedAccess: [] });
  });

  it("lists applications' users only when asked (apps=true)", async () => {
    const application = await apiOk<{ id: string }>("POST", "/api/applications", { name: "listed-app" });
    await api("POST", `/api/applications/${application.id}/roles/WORKER`);
    expect((await apiOk<ConductorUser[]>("GET", "/api/users")).some((user) => user.id === `app:${application.id}`)).toBe(false);
    expect((await apiOk<ConductorUser[]>("GET", "/api/users?apps=true")).find((user) => user.id === `app:${application.id}`)).toMatchObject({ applicationUser: true, roles: [{ name: "WORKER", permissions: [] }] });
  });

  it("writes the name and the groups with the roles, or nothing when the roles changed meanwhile (409)", async () => {
    await apiOk("PUT", "/api/groups/atomic-group", { description: "g", roles: [] });
    await apiOk("PUT", "/api/users/atomic-user", { name: "Before", roles: ["USER"], groups: [] });
    // Another change lands between this request's read of the roles and its write: the write's check fails.
    const read = SecurityStore.prototype.getNamedAssignment;
    SecurityStore.prototype.getNamedAssignment = async function (userId: string): Promise<{ assignment: UserAssignment | null; name: string | undefined }> {
      const stored = await read.call(this, userId);
      return stored.assignment && userId === "atomic-user" ? { ...stored, assignment: { ...stored.assignment, roles: ["SOMETHING_ELSE"] } } : stored;
    };
    try {
      const response = await api("PUT", "/api/users/atomic-user", { name: "After", roles: ["USER_READ_ONLY"], groups: ["atomic-group"] });
      expect(response.status).toBe(409);
    } finally {
      SecurityStore.prototype.getNamedAssignment = read;
    }
    expect(await apiOk("GET", "/api/users/atomic-user")).toMatchObject({ name: "Before", roles: [{ name: "USER" }], groups: [] });
  });

  it("writes nothing (409) when a group it joins was given more meanwhile than was checked: no unchecked hand-out", async () => {
    const userAdmin = await createUser("raced-user-admin", { directPermissions: [{ action: "USER_ADMIN", scope: "*" }] });
    await apiOk("PUT", "/api/groups/raced-group", { description: "g", roles: [] });
    // Already stored with the roles the request keeps: only the group and the name would change.
    await apiOk("PUT", "/api/users/raced-user", { name: "Raced", roles: [], groups: [] });
    // The group gains ADMIN between this request's read of it (as it was: nothing to hand out) and its write.
    await apiOk("PUT", "/api/groups/raced-group", { description: "g", roles: ["ADMIN"] });
    await whileGroupReadsWithoutRoles("raced-group", async () => {
      const response = await call("PUT", "/api/users/raced-user", orkes(userAdmin.token), { name: "Renamed", roles: [], groups: ["raced-group"] });
      expect(response.status).toBe(409);
    });
    expect(await apiOk("GET", "/api/users/raced-user")).toMatchObject({ name: "Raced", groups: [] });
    expect(await apiOk("GET", "/api/groups/raced-group/users")).toEqual([]);
  });

  it("writes nothing (409) when a role it hands out was given more meanwhile than was checked: users, groups, members, applications", async () => {
    const userAdmin = await createUser("role-raced-admin", { directPermissions: [{ action: "USER_ADMIN", scope: "*" }] });
    await apiOk("POST", "/api/security/roles", { name: "raced-role", description: "r", permissions: [] }, 201);
    await apiOk("PUT", "/api/groups/role-raced-group", { description: "g", roles: ["raced-role"] });
    const application = await apiOk<{ id: string }>("POST", "/api/applications", { name: "role-raced-app" });
    // The role gains SYSTEM_ADMIN between each request's read of it (as it was: nothing to hand out) and its write.
    await apiOk("PUT", "/api/security/roles/raced-role", { description: "r", permissions: [{ action: "SYSTEM_ADMIN", scope: "*" }] });
    const read = SecurityStore.prototype.rolesAsRead;
    SecurityStore.prototype.rolesAsRead = async function (names: readonly string[]): Promise<Role[]> {
      return (await read.call(this, names)).map((role) => (role.name === "raced-role" ? { ...role, permissions: [] } : role));
    };
    const as = orkes(userAdmin.token);
    try {
      expect((await call("PUT", "/api/security/users/role-raced-user/roles", as, { roles: ["raced-role"] })).status).toBe(409);
      expect((await call("PUT", "/api/users/role-raced-user", as, { name: "R", roles: ["raced-role"] })).status).toBe(409);
      expect((await call("PUT", "/api/groups/role-raced-other", as, { description: "o", roles: ["raced-role"] })).status).toBe(409);
      expect((await call("POST", "/api/groups/role-raced-group/users/role-raced-member", as)).status).toBe(409);
      expect((await call("POST", `/api/applications/${application.id}/roles/raced-role`, as)).status).toBe(409);
    } finally {
      SecurityStore.prototype.rolesAsRead = read;
    }
    expect(await apiOk("GET", "/api/security/users/role-raced-user")).toMatchObject({ roles: [] });
    expect((await api("GET", "/api/groups/role-raced-other")).status).toBe(404);
    expect(await apiOk("GET", "/api/groups/role-raced-group/users")).toEqual([]);
    expect(await apiOk("GET", `/api/security/users/app:${application.id}`)).toMatchObject({ roles: [] });
  });
});
