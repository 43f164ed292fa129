import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, httpTask, register, startWorkflow, target } from "./helpers";

// Orkes' per-resource grants (POST/DELETE /api/auth/authorization and the reads around them) through the real router
// and D1: access to a definition is a permission at its scope, and the caller's requests then pass or not.

const grant = (subject: { type: string; id: string }, targetRef: { type: string; id: string }, access: string[]) => ({ subject, target: targetRef, access });

async function registerFlow(name: string): Promise<void> {
  await register({ name, tasks: [httpTask("call", { uri: target("/echo/grants"), method: "GET" })] });
}

describe("per-resource grants (/api/auth/authorization)", () => {
  it("checks a user's permissions on Orkes' other target types (it was a 400 for WORKFLOW, APPLICATION…): an execution as its workflow's routes decide, applications and users as USER_ADMIN, a form as read by anyone; the rest as nobody's", async () => {
    const flow = `checked-flow-${crypto.randomUUID().slice(0, 8)}`;
    await registerFlow(flow);
    const workflowId = await startWorkflow(flow);
    const userId = `checked-${crypto.randomUUID().slice(0, 8)}`;
    await createUser(userId, { directPermissions: [{ action: "WORKFLOW_READ", scope: `workflow:${flow}` }] });
    const check = (user: string, type: string, id: string) => apiOk<Record<string, boolean>>("GET", `/api/users/${user}/checkPermissions?type=${type}&id=${encodeURIComponent(id)}`);
    const each = (allowed: boolean) => ({ CREATE: allowed, READ: allowed, UPDATE: allowed, EXECUTE: allowed, DELETE: allowed });
    // The execution is read with WORKFLOW_READ at its workflow's name; acting on it takes WORKFLOW_ADMIN there.
    expect(await check(userId, "WORKFLOW", workflowId)).toEqual({ ...each(false), READ: true });
    expect(await check("admin", "WORKFLOW", workflowId)).toEqual(each(true));
    // An id naming no execution: only a grant on every workflow covers it, so the answer tells nothing of what exists.
    expect(await check(userId, "WORKFLOW", crypto.randomUUID())).toEqual(each(false));
    // A schedule as its workflow's schedules: read with WORKFLOW_READ, managed (and so run) with WORKFLOW_ADMIN there.
    const scheduleName = `${flow}-schedule`;
    await apiOk("POST", "/api/scheduler/schedules", { name: scheduleName, cronExpression: "0 0 0 1 1 ?", paused: true, startWorkflowRequest: { name: flow, version: 1 } });
    expect(await check(userId, "WORKFLOW_SCHEDULE", scheduleName)).toEqual({ ...each(false), READ: true });
    expect(await check(userId, "WORKFLOW_SCHEDULE", `${flow}-no-such-schedule`)).toEqual(each(false));
    // A USER_ADMIN who may not read the workflow learns neither that the schedule or execution exists nor which
    // workflow it belongs to: it is answered as one that does not exist.
    const userAdmin = await createUser(`checked-ua-${crypto.randomUUID().slice(0, 8)}`, { directPermissions: [{ action: "USER_ADMIN", scope: "*" }] });
    const checkAs = async (type: string, id: string) => {
      const response = await call("GET", `/api/users/${userId}/checkPermissions?type=${type}&id=${encodeURIComponent(id)}`, orkes(userAdmin.token));
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, boolean>;
    };
    expect(await checkAs("WORKFLOW_SCHEDULE", scheduleName)).toEqual(await checkAs("WORKFLOW_SCHEDULE", `${flow}-no-such-schedule`));
    expect(await checkAs("WORKFLOW", workflowId)).toEqual(await checkAs("WORKFLOW", crypto.randomUUID()));
    expect(await check(userId, "WORKFLOW_SCHEDULE", scheduleName)).toEqual({ ...each(false), READ: true });
    await apiOk("DELETE", `/api/scheduler/schedules/${scheduleName}`);
    expect(await check(userId, "APPLICATION", "some-app")).toEqual(each(false));
    expect(await check("admin", "APPLICATION", "some-app")).toEqual(each(true));
    expect(await check(userId, "USER", "someone")).toEqual(each(false));
    expect(await check(userId, "USER_FORM_TEMPLATE", "any form")).toEqual({ ...each(false), READ: true });
    // A user id naming nobody holds nothing, on a form as on every other type.
    expect(await check(`nobody-${crypto.randomUUID().slice(0, 8)}`, "USER_FORM_TEMPLATE", "any form")).toEqual(each(false));
    expect(await check("admin", "USER_FORM_TEMPLATE", "any form")).toEqual({ ...each(true), EXECUTE: false });
    for (const type of ["GROUP", "ROLE"]) {
      expect(await check(userId, type, "x"), type).toEqual(each(false));
      expect(await check("admin", type, "x"), type).toEqual(each(true));
    }
    // As their routes' access rules decide: read, save, delete; nothing executes one.
    for (const type of ["EVENT_HANDLER", "ENV_VARIABLE", "SCHEMA", "WEBHOOK"]) expect(await check("admin", type, "x"), type).toEqual({ ...each(true), EXECUTE: false });
    // Environment variables are read with WORKFLOW_READ at any scope; the rest take rights on every workflow or on metadata.
    expect(await check(userId, "ENV_VARIABLE", "x")).toEqual({ ...each(false), READ: true });
    for (const type of ["EVENT_HANDLER", "SCHEMA", "WEBHOOK"]) expect(await check(userId, type, "x"), type).toEqual(each(false));
    // A task by id: read as GET /api/tasks/{taskId}, updated and executed as its result is reported.
    const taskId = (await apiOk<{ tasks: Array<{ taskId: string }> }>("GET", `/api/workflow/${workflowId}`)).tasks[0]!.taskId;
    expect(await check(userId, "TASK_ID", taskId)).toEqual({ ...each(false), READ: true });
    expect(await check("admin", "TASK_ID", taskId)).toEqual({ ...each(true), CREATE: false, DELETE: false });
    expect(await check(userId, "TASK_ID", crypto.randomUUID())).toEqual(each(false));
    expect(await checkAs("TASK_ID", taskId)).toEqual(await checkAs("TASK_ID", crypto.randomUUID()));
    // Nothing of the kind here: nobody's, even the admin's.
    for (const type of ["DOMAIN", "PROMPT", "API_GATEWAY_SERVICE_ROUTE", "CLUSTER_CONFIG", "AUTH_CONFIG", "SERVICE_REGISTRY"]) expect(await check("admin", type, "x"), type).toEqual(each(false));
    // A user id naming nobody holds nothing, whatever the type (the rules' or a form's openness to anyone included).
    const nobody = `nobody-${crypto.randomUUID().slice(0, 8)}`;
    for (const type of ["WORKFLOW", "WORKFLOW_SCHEDULE", "EVENT_HANDLER", "TASK_ID", "APPLICATION", "USER", "ENV_VARIABLE", "USER_FORM_TEMPLATE", "SCHEMA", "WEBHOOK", "GROUP", "ROLE"]) {
      expect(await check(nobody, type, type === "WORKFLOW" ? workflowId : type === "TASK_ID" ? taskId : "x"), type).toEqual(each(false));
    }
    // A stored rule opening a route to every caller opens it to a user this service knows, not to an id naming nobody.
    const openVariable = `open_${crypto.randomUUID().slice(0, 8)}`;
    const openRule = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: `/api/environment/${openVariable}`, methods: ["GET"], requiredPermissions: [] }, 201);
    expect(await check(userId, "ENV_VARIABLE", openVariable)).toEqual({ ...each(false), READ: true });
    expect(await check(nobody, "ENV_VARIABLE", openVariable)).toEqual(each(false));
    await apiOk("DELETE", `/api/security/rules/${openRule.id}`);
    // Applications, users, groups, roles and forms likewise follow the rules in force for their routes.
    const userRule = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: `/api/users/seen-${openVariable}`, methods: ["GET"], requiredPermissions: [{ action: "WORKFLOW_READ", scope: `workflow:${flow}` }] }, 201);
    expect(await check(userId, "USER", `seen-${openVariable}`)).toEqual({ ...each(false), READ: true });
    await apiOk("DELETE", `/api/security/rules/${userRule.id}`);
    // Still refused: a type Orkes has not, or no id.
    const notAType = await api("GET", `/api/users/${userId}/checkPermissions?type=NOT_A_TYPE&id=x`);
    expect(notAType.status).toBe(400);
    // Its message names every type this route takes (those answered here included), not the five grantable ones alone.
    const [typeError] = ((await notAType.json()) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors;
    expect(typeError?.path).toBe("type");
    for (const type of ["WORKFLOW_DEF", "TAG", "WORKFLOW", "USER_FORM_TEMPLATE", "SERVICE_REGISTRY"]) expect(typeError?.message).toContain(type);
    expect(typeError?.message).not.toContain("no scope here");
    const noId = await api("GET", `/api/users/${userId}/checkPermissions?type=WORKFLOW`);
    expect(noId.status).toBe(400);
    expect(await noId.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ path: "id" }] });
  });

  it("gives a user READ and EXECUTE on one workflow definition: they can read and start it, and nothing else; removing EXECUTE stops the starts", async () => {
    await registerFlow("granted-flow");
    await registerFlow("other-flow");
    const userId = `grantee-${crypto.randomUUID().slice(0, 8)}`;
    const user = await createUser(userId);
    const start = (name: string) => call("POST", `/api/workflow/${name}`, orkes(user.token), {});
    expect((await start("granted-flow")).status).toBe(403);

    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: userId }, { type: "WORKFLOW_DEF", id: "granted-flow" }, ["READ", "EXECUTE"]));
    // No wait: a grant written in this isolate clears the grants it cached at once (another isolate sees it within the
    // cache's second). Waiting out that second hid a write that left them cached: the checks below found it only once
    // the wait was gone.
    expect((await start("granted-flow")).status).toBe(200);
    expect((await call("GET", "/api/metadata/workflow/granted-flow", orkes(user.token))).status).toBe(200);
    expect((await start("other-flow")).status).toBe(403);
    expect((await call("PUT", "/api/metadata/workflow", orkes(user.token), [{ name: "granted-flow", version: 1, tasks: [] }])).status).toBe(403);

    expect(await apiOk("GET", `/api/users/${userId}/permissions`)).toEqual({ grantedAccess: [{ target: { type: "WORKFLOW_DEF", id: "granted-flow" }, access: ["READ", "EXECUTE"] }] });
    expect(await apiOk("GET", `/api/users/${userId}/checkPermissions?type=WORKFLOW_DEF&id=granted-flow`)).toEqual({ CREATE: false, READ: true, UPDATE: false, EXECUTE: true, DELETE: false });
    expect(await apiOk("GET", "/api/auth/authorization/WORKFLOW_DEF/granted-flow")).toEqual({ CREATE: [], READ: [{ type: "USER", id: userId }], UPDATE: [], EXECUTE: [{ type: "USER", id: userId }], DELETE: [] });

    await apiOk("DELETE", "/api/auth/authorization", grant({ type: "USER", id: userId }, { type: "WORKFLOW_DEF", id: "granted-flow" }, ["EXECUTE"]));
    expect((await start("granted-flow")).status).toBe(403);
    expect((await call("GET", "/api/metadata/workflow/granted-flow", orkes(user.token))).status).toBe(200);
    // EXECUTE removed: its list is empty, still there for a client reading it.
    expect(await apiOk("GET", "/api/auth/authorization/WORKFLOW_DEF/granted-flow")).toEqual({ CREATE: [], READ: [{ type: "USER", id: userId }], UPDATE: [], EXECUTE: [], DELETE: [] });
  });

  // The examples of https://orkes.io/content/reference-docs/api/authorization/grant-access, .../revoke-access and
  // .../get-access-grants-for-resource, step by step: a lower-case subject type, Orkes' confirmation messages, and the
  // holders grouped by access (the default) or by subject.
  it("follows Orkes' grant, revoke and get-grants pages: their answers' messages, and the holders grouped by access or by subject", async () => {
    const flow = `rate_limit_test_${crypto.randomUUID().slice(0, 8)}`;
    const [jane, john] = [`jane.doe.${flow}@acme.com`, `john.doe.${flow}@acme.com`];
    const granted = await api("POST", "/api/auth/authorization", grant({ type: "user", id: jane }, { type: "WORKFLOW_DEF", id: flow }, ["READ", "EXECUTE"]));
    expect(granted.status).toBe(200);
    expect(await granted.json()).toEqual({ message: "Granted permission" });
    await apiOk("POST", "/api/auth/authorization", grant({ type: "user", id: john }, { type: "WORKFLOW_DEF", id: flow }, ["READ", "EXECUTE", "CREATE", "UPDATE", "DELETE"]));

    const byAccess = { CREATE: [{ type: "USER", id: john }], READ: [{ type: "USER", id: jane }, { type: "USER", id: john }], UPDATE: [{ type: "USER", id: john }], EXECUTE: [{ type: "USER", id: jane }, { type: "USER", id: john }], DELETE: [{ type: "USER", id: john }] };
    const sorted = (holders: Record<string, Array<{ id: string }>>) => Object.fromEntries(Object.entries(holders).map(([kind, list]) => [kind, [...list].sort((a, b) => a.id.localeCompare(b.id))]));
    expect(sorted(await apiOk("GET", `/api/auth/authorization/WORKFLOW_DEF/${flow}?groupBy=access`))).toEqual(byAccess);
    expect(sorted(await apiOk("GET", `/api/auth/authorization/WORKFLOW_DEF/${flow}`))).toEqual(byAccess);
    const bySubject = await apiOk<Record<string, string[]>>("GET", `/api/auth/authorization/WORKFLOW_DEF/${flow}?groupBy=subject`);
    expect(Object.fromEntries(Object.entries(bySubject).map(([subject, access]) => [subject, [...access].sort()]))).toEqual({
      [`USER:${jane}`]: ["EXECUTE", "READ"],
      [`USER:${john}`]: ["CREATE", "DELETE", "EXECUTE", "READ", "UPDATE"],
    });
    expect(await apiOk("GET", "/api/auth/authorization/APPLICATION/x?groupBy=subject")).toEqual({});
    const badGrouping = await api("GET", `/api/auth/authorization/WORKFLOW_DEF/${flow}?groupBy=target`);
    expect(badGrouping.status).toBe(400);
    expect(await badGrouping.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ path: "groupBy" }] });

    const revoked = await api("DELETE", "/api/auth/authorization", grant({ type: "user", id: jane }, { type: "WORKFLOW_DEF", id: flow }, ["READ", "EXECUTE"]));
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toEqual({ message: "Removed permission" });
    expect(Object.keys(await apiOk("GET", `/api/auth/authorization/WORKFLOW_DEF/${flow}?groupBy=subject`))).toEqual([`USER:${john}`]);
  });

  // https://orkes.io/content/reference-docs/api/authorization/list-grants-for-subject (v5.4.2), its example and more.
  it("lists a subject's grants (GET /api/auth/subjects/{subjectType}/{subjectId}/grants), of one resourceType when asked; USER_ADMIN's only", async () => {
    const suffix = crypto.randomUUID().slice(0, 8);
    const jane = `jane.doe.${suffix}@acme.com`;
    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: jane }, { type: "SECRET_NAME", id: "API_KEY_NEURO" }, ["READ", "EXECUTE"]));
    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: jane }, { type: "WORKFLOW_DEF", id: `flow_${suffix}` }, ["READ"]));
    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: jane }, { type: "TASK_REF_NAME", id: `ref_${suffix}` }, ["EXECUTE"]));
    const secretGrant = { target: { type: "SECRET_NAME", id: "API_KEY_NEURO" }, access: ["READ", "EXECUTE"] };
    expect(await apiOk("GET", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants?resourceType=SECRET_NAME`)).toEqual([secretGrant]);
    expect(await apiOk("GET", `/api/auth/subjects/user/${encodeURIComponent(jane)}/grants`)).toEqual(await apiOk("GET", `/api/users/${encodeURIComponent(jane)}/permissions`).then((body) => body["grantedAccess"]));
    expect(await apiOk<unknown[]>("GET", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants`)).toHaveLength(3);
    // A task reference name's grant is a task definition's scope, shown as one; a type given nothing here lists nothing.
    expect(await apiOk("GET", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants?resourceType=TASK_REF_NAME`)).toEqual([{ target: { type: "TASK_DEF", id: `ref_${suffix}` }, access: ["EXECUTE"] }]);
    expect(await apiOk("GET", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants?resourceType=APPLICATION`)).toEqual([]);
    // Every type checkPermissions takes is one Orkes names: a filter on it lists nothing given here, never a 400.
    for (const resourceType of ["GROUP", "ROLE", "API_GATEWAY_SERVICE", "API_GATEWAY_SERVICE_ROUTE", "AUTH_CONFIG", "SERVICE_REGISTRY"]) {
      expect(await apiOk("GET", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants?resourceType=${resourceType}`), resourceType).toEqual([]);
    }
    expect(await apiOk("GET", `/api/auth/subjects/USER/never-seen-${suffix}/grants`)).toEqual([]);

    await apiOk("PUT", `/api/groups/grants-of-${suffix}`, { description: "g", roles: [] });
    await apiOk("POST", "/api/auth/authorization", grant({ type: "GROUP", id: `grants-of-${suffix}` }, { type: "TASK_DEF", id: `task_${suffix}` }, ["READ"]));
    expect(await apiOk("GET", `/api/auth/subjects/GROUP/grants-of-${suffix}/grants`)).toEqual([{ target: { type: "TASK_DEF", id: `task_${suffix}` }, access: ["READ"] }]);
    await apiOk("POST", "/api/security/roles", { name: `grants-role-${suffix}`, permissions: [{ action: "WORKFLOW_WRITE", scope: `workflow:flow_${suffix}` }] }, 201);
    expect(await apiOk("GET", `/api/auth/subjects/ROLE/grants-role-${suffix}/grants`)).toEqual([{ target: { type: "WORKFLOW_DEF", id: `flow_${suffix}` }, access: ["CREATE", "UPDATE", "DELETE"] }]);

    expect((await api("GET", `/api/auth/subjects/ROLE/no-such-role-${suffix}/grants`)).status).toBe(404);
    expect((await api("GET", `/api/auth/subjects/GROUP/no-such-group-${suffix}/grants`)).status).toBe(404);
    const badSubject = await api("GET", `/api/auth/subjects/APPLICATION/x/grants`);
    expect(badSubject.status).toBe(400);
    expect(await badSubject.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ path: "subjectType" }] });
    for (const resourceType of ["not-a-type", "BOGUS", "WORKFLOW_DEFS"]) {
      const refused = await api("GET", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants?resourceType=${resourceType}`);
      expect(refused.status, resourceType).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ path: "resourceType" }] });
    }
    // One's own, as Orkes lets a caller list theirs; nobody else's, nor a role's or a group's, without USER_ADMIN.
    const self = await createUser(`grants-self-${suffix}`, { directPermissions: [{ action: "WORKFLOW_READ", scope: `workflow:flow_${suffix}` }] });
    expect(await (await call("GET", `/api/auth/subjects/user/grants-self-${suffix}/grants`, orkes(self.token))).json()).toEqual([{ target: { type: "WORKFLOW_DEF", id: `flow_${suffix}` }, access: ["READ"] }]);
    for (const path of [`USER/${encodeURIComponent(jane)}`, `GROUP/grants-of-${suffix}`, `ROLE/grants-role-${suffix}`, `ROLE/grants-self-${suffix}`, `GROUP/no-such-group-${suffix}`, "APPLICATION/x", "USER/bad%20id"]) {
      const refused = await call("GET", `/api/auth/subjects/${path}/grants`, orkes(self.token));
      expect(refused.status, path).toBe(403);
      expect(await refused.json()).toMatchObject({ error: "PERMISSION_DENIED" });
    }
    const userAdmin = await createUser(`grants-user-admin-${suffix}`, { directPermissions: [{ action: "USER_ADMIN", scope: "*" }] });
    expect(await (await call("GET", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants?resourceType=SECRET_NAME`, orkes(userAdmin.token))).json()).toEqual([secretGrant]);
  });

  // https://orkes.io/content/reference-docs/api/authorization/revoke-grants-for-subject (v5.4.2), its example and more.
  it("revokes a subject's grants (DELETE /api/auth/subjects/{subjectType}/{subjectId}/grants), of one resourceType when asked, leaving the rest", async () => {
    const suffix = crypto.randomUUID().slice(0, 8);
    const jane = `jane.doe.${suffix}@acme.com`;
    await apiOk("PUT", `/api/security/users/${encodeURIComponent(jane)}/roles`, { roles: ["USER_READ_ONLY"], directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:prefix_*" }] });
    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: jane }, { type: "WORKFLOW_DEF", id: `flow_${suffix}` }, ["READ", "EXECUTE", "UPDATE"]));
    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: jane }, { type: "TASK_DEF", id: `task_${suffix}` }, ["EXECUTE"]));
    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: jane }, { type: "TAG", id: `team:${suffix}` }, ["READ"]));
    const revoked = await api("DELETE", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants?resourceType=WORKFLOW_DEF`);
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toEqual({ message: "Revoked grants" });
    expect((await apiOk<Array<{ target: { type: string } }>>("GET", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants`)).map((granted) => granted.target.type)).toEqual(["TAG", "TASK_DEF"]);
    // Without a type every per-target grant goes, the use of the tag's secrets with its READ; roles and grants at * or a prefix stay.
    await apiOk("DELETE", `/api/auth/subjects/user/${encodeURIComponent(jane)}/grants`);
    expect(await apiOk("GET", `/api/security/users/${encodeURIComponent(jane)}`)).toMatchObject({ roles: ["USER_READ_ONLY"], directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:prefix_*" }] });
    // Revoking again takes nothing, so writes nothing: the user's stored row keeps its update time.
    await env.DB.prepare(`UPDATE user_assignments SET update_time = 0 WHERE user_id = ?`).bind(jane).run();
    await apiOk("DELETE", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants`);
    expect(await env.DB.prepare(`SELECT update_time FROM user_assignments WHERE user_id = ?`).bind(jane).first("update_time")).toBe(0);

    await apiOk("PUT", `/api/groups/revoked-${suffix}`, { description: "g", roles: ["USER_READ_ONLY"] });
    await apiOk("POST", "/api/auth/authorization", grant({ type: "GROUP", id: `revoked-${suffix}` }, { type: "SECRET_NAME", id: `secret_${suffix}` }, ["READ"]));
    await apiOk("DELETE", `/api/auth/subjects/GROUP/revoked-${suffix}/grants?resourceType=SECRET_NAME`);
    expect(await apiOk("GET", `/api/groups/revoked-${suffix}`)).toMatchObject({ roles: [{ name: "USER_READ_ONLY" }] });
    expect(await apiOk("GET", `/api/groups/revoked-${suffix}/permissions`)).toEqual({ grantedAccess: [] });
    // The revoked user is refused at once what the grants allowed (no wait: the write clears this isolate's cached grants).
    await registerFlow(`revoked_flow_${suffix}`);
    const revokedUser = await createUser(`revoked-user-${suffix}`);
    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: `revoked-user-${suffix}` }, { type: "WORKFLOW_DEF", id: `revoked_flow_${suffix}` }, ["READ"]));
    const read = () => call("GET", `/api/metadata/workflow/revoked_flow_${suffix}`, orkes(revokedUser.token));
    expect((await read()).status).toBe(200);
    await apiOk("DELETE", `/api/auth/subjects/USER/revoked-user-${suffix}/grants`);
    expect((await read()).status).toBe(403);

    // A role's too, exactly what its list shows: a tag's workflow permission without its task one shows nothing, and stays.
    const tagReadAlone = { action: "WORKFLOW_READ", scope: `tag:team:${suffix}` };
    const prefixRead = { action: "WORKFLOW_READ", scope: "workflow:prefix_*" };
    await apiOk("POST", "/api/security/roles", { name: `revoked-role-${suffix}`, permissions: [tagReadAlone, { action: "WORKFLOW_WRITE", scope: `workflow:flow_${suffix}` }, prefixRead] }, 201);
    expect(await apiOk("GET", `/api/auth/subjects/ROLE/revoked-role-${suffix}/grants`)).toEqual([{ target: { type: "WORKFLOW_DEF", id: `flow_${suffix}` }, access: ["CREATE", "UPDATE", "DELETE"] }]);
    expect(await apiOk("DELETE", `/api/auth/subjects/role/revoked-role-${suffix}/grants`)).toEqual({ message: "Revoked grants" });
    expect(await apiOk("GET", `/api/security/roles/revoked-role-${suffix}`)).toMatchObject({ permissions: [tagReadAlone, prefixRead] });

    // Nobody to take from: nothing to do, nothing created; a bad type a 400; a caller without USER_ADMIN a 403, the grant kept.
    expect((await api("DELETE", `/api/auth/subjects/USER/never-seen-${suffix}/grants`)).status).toBe(200);
    // Nor from the bootstrap admin (everything at *, nothing per target) or an identity provider's id no grant can be
    // given to (Auth0's auth0|abc): their lists are [], and their revocation is Orkes' 200, not a 400.
    for (const user of ["admin", "auth0|abc"]) {
      expect(await apiOk("GET", `/api/auth/subjects/USER/${encodeURIComponent(user)}/grants`)).toEqual([]);
      const nothingTaken = await api("DELETE", `/api/auth/subjects/USER/${encodeURIComponent(user)}/grants`);
      expect(nothingTaken.status, user).toBe(200);
      expect(await nothingTaken.json()).toEqual({ message: "Revoked grants" });
    }
    expect((await api("GET", `/api/users/never-seen-${suffix}`)).status).toBe(404);
    expect((await api("DELETE", `/api/auth/subjects/APPLICATION/x/grants`)).status).toBe(400);
    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: jane }, { type: "WORKFLOW_DEF", id: `flow_${suffix}` }, ["READ"]));
    const reader = await createUser(`revoker-${suffix}`, { roles: ["USER_READ_ONLY"] });
    expect((await call("DELETE", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants`, orkes(reader.token))).status).toBe(403);
    // A resourceType Orkes does not name (a typo) is a 400, not a revocation that took nothing; the grant is kept.
    for (const resourceType of ["BOGUS", "WORKFLOW_DEFS"]) {
      const refused = await api("DELETE", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants?resourceType=${resourceType}`);
      expect(refused.status, resourceType).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ path: "resourceType" }] });
    }
    // A type checkPermissions takes (GROUP, AUTH_CONFIG…) revokes what it names: nothing given here, the grant kept.
    for (const resourceType of ["GROUP", "AUTH_CONFIG"]) {
      expect(await apiOk("DELETE", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants?resourceType=${resourceType}`), resourceType).toEqual({ message: "Revoked grants" });
    }
    expect(await apiOk("GET", `/api/auth/subjects/USER/${encodeURIComponent(jane)}/grants`)).toEqual([{ target: { type: "WORKFLOW_DEF", id: `flow_${suffix}` }, access: ["READ"] }]);
  });

  it("taking access from a user never seen writes nothing: they do not appear as a user", async () => {
    const users = await apiOk<unknown[]>("GET", "/api/users");
    await apiOk("DELETE", "/api/auth/authorization", grant({ type: "USER", id: "grant-ghost" }, { type: "WORKFLOW_DEF", id: "granted-flow" }, ["READ"]));
    expect((await api("GET", "/api/users/grant-ghost")).status).toBe(404);
    expect(await apiOk<unknown[]>("GET", "/api/users")).toEqual(users);
  });

  it("gives a group and a role access, which their members and holders get; CREATE, UPDATE and DELETE go together", async () => {
    const member = `member-${crypto.randomUUID().slice(0, 8)}`;
    await apiOk("PUT", "/api/groups/grant-group", { description: "g", roles: [] });
    await apiOk("POST", `/api/groups/grant-group/users/${member}`);
    await apiOk("POST", "/api/security/roles", { name: "grant-role", description: "r", permissions: [] }, 201);
    await apiOk("POST", "/api/auth/authorization", grant({ type: "GROUP", id: "grant-group" }, { type: "TASK_DEF", id: "resize" }, ["EXECUTE"]));
    await apiOk("POST", "/api/auth/authorization", grant({ type: "ROLE", id: "grant-role" }, { type: "WORKFLOW_DEF", id: "some-flow" }, ["UPDATE"]));

    expect(await apiOk("GET", "/api/groups/grant-group/permissions")).toEqual({ grantedAccess: [{ target: { type: "TASK_DEF", id: "resize" }, access: ["EXECUTE"] }] });
    expect(await apiOk("GET", `/api/users/${member}/checkPermissions?type=TASK_DEF&id=resize`)).toMatchObject({ EXECUTE: true, READ: false });
    expect(await apiOk("GET", `/api/users/${member}/checkPermissions?type=TASK_REF_NAME&id=resize`)).toMatchObject({ EXECUTE: true });
    expect(await apiOk("GET", "/api/security/roles/grant-role")).toMatchObject({ permissions: [{ action: "WORKFLOW_WRITE", scope: "workflow:some-flow" }] });
    expect(await apiOk("GET", "/api/auth/authorization/WORKFLOW_DEF/some-flow")).toEqual({
      CREATE: [{ type: "ROLE", id: "grant-role" }],
      READ: [],
      UPDATE: [{ type: "ROLE", id: "grant-role" }],
      EXECUTE: [],
      DELETE: [{ type: "ROLE", id: "grant-role" }],
    });
    // A second grant of the same access changes nothing; removing DELETE removes the write permission.
    await apiOk("POST", "/api/auth/authorization", grant({ type: "ROLE", id: "grant-role" }, { type: "WORKFLOW_DEF", id: "some-flow" }, ["CREATE"]));
    expect((await apiOk<{ permissions: unknown[] }>("GET", "/api/security/roles/grant-role")).permissions).toHaveLength(1);
    await apiOk("DELETE", "/api/auth/authorization", grant({ type: "ROLE", id: "grant-role" }, { type: "WORKFLOW_DEF", id: "some-flow" }, ["DELETE"]));
    expect(await apiOk("GET", "/api/security/roles/grant-role")).toMatchObject({ permissions: [] });
  });

  it("gives a user READ on a secret (SECRET_NAME): they may register a definition that uses it, not manage it; removing it takes that back", async () => {
    const userId = `secret-grantee-${crypto.randomUUID().slice(0, 8)}`;
    const user = await createUser(userId, { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }] });
    const usingSecret = (name: string) => ({ name, version: 1, tasks: [httpTask("call", { uri: target("/echo/secret-grant"), method: "GET", headers: { Authorization: "Bearer ${workflow.secrets.billing_token}" } })] });
    const registerAs = (name: string) => call("POST", "/api/metadata/workflow?overwrite=true", orkes(user.token), usingSecret(name));
    expect((await registerAs("secret-granted-flow")).status).toBe(403);

    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: userId }, { type: "SECRET_NAME", id: "billing_token" }, ["READ"]));
    expect((await registerAs("secret-granted-flow")).status).toBe(200);
    // The grant is the right to use it (SYSTEM_ADMIN at secret:billing_token), shown as Orkes shows it; the secrets API stays shut.
    expect(await apiOk("GET", `/api/users/${userId}/permissions`)).toEqual({ grantedAccess: [{ target: { type: "SECRET_NAME", id: "billing_token" }, access: ["READ", "EXECUTE"] }] });
    expect(await apiOk("GET", `/api/users/${userId}/checkPermissions?type=SECRET_NAME&id=billing_token`)).toEqual({ CREATE: false, READ: true, UPDATE: false, EXECUTE: true, DELETE: false });
    expect(await apiOk("GET", `/api/users/admin/checkPermissions?type=SECRET_NAME&id=billing_token`)).toEqual({ CREATE: true, READ: true, UPDATE: true, EXECUTE: true, DELETE: true });
    expect(await apiOk("GET", "/api/auth/authorization/SECRET_NAME/billing_token")).toEqual({ CREATE: [], READ: [{ type: "USER", id: userId }], UPDATE: [], EXECUTE: [{ type: "USER", id: userId }], DELETE: [] });
    // Orkes' Gson-based Java client names the target type SECRET (its enum constant), and Orkes' docs write the subject in lower case.
    expect(await apiOk("GET", "/api/auth/authorization/SECRET/billing_token")).toEqual(await apiOk("GET", "/api/auth/authorization/SECRET_NAME/billing_token"));
    expect(await apiOk("GET", `/api/users/${userId}/checkPermissions?type=SECRET&id=billing_token`)).toEqual({ CREATE: false, READ: true, UPDATE: false, EXECUTE: true, DELETE: false });
    expect((await call("PUT", "/api/secrets/billing_token", orkes(user.token), "value")).status).toBe(403);
    expect((await call("GET", "/api/secrets", orkes(user.token))).status).toBe(403);

    await apiOk("DELETE", "/api/auth/authorization", grant({ type: "user", id: userId }, { type: "SECRET", id: "billing_token" }, ["EXECUTE"]));
    expect(await apiOk("GET", `/api/users/${userId}/permissions`)).toEqual({ grantedAccess: [] });
    expect((await registerAs("secret-granted-flow")).status).toBe(403);
  });

  it("gives a user access on a TAG (key:value): the workflow and task definitions holding it, as their tags change", async () => {
    await registerFlow("tagflow-billing");
    await registerFlow("tagflow-other");
    await apiOk("PUT", "/api/metadata/workflow/tagflow-billing/tags", [{ key: "team", value: "billing" }]);
    await apiOk("PUT", "/api/metadata/workflow/tagflow-other/tags", [{ key: "team", value: "shipping" }]);
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "tagtask-billing" }, { name: "tagtask-other" }]);
    await apiOk("PUT", "/api/metadata/task/tagtask-billing/tags", [{ key: "team", value: "billing" }]);
    const userId = `tag-grantee-${crypto.randomUUID().slice(0, 8)}`;
    const user = await createUser(userId);
    const as = (method: string, path: string, body?: unknown) => call(method, path, orkes(user.token), body);
    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: userId }, { type: "TAG", id: "team:billing" }, ["READ", "EXECUTE"]));

    expect((await as("GET", "/api/metadata/workflow/tagflow-billing")).status).toBe(200);
    expect((await as("POST", "/api/workflow/tagflow-billing", {})).status).toBe(200);
    expect((await as("GET", "/api/metadata/workflow/tagflow-other")).status).toBe(403);
    expect((await as("POST", "/api/workflow/tagflow-other", {})).status).toBe(403);
    const listed = (await (await as("GET", "/api/metadata/workflow")).json()) as Array<{ name: string }>;
    expect([...new Set(listed.map((definition) => definition.name))]).toEqual(["tagflow-billing"]);
    expect((await as("GET", "/api/metadata/taskdefs/tagtask-billing")).status).toBe(200);
    expect((await as("GET", "/api/metadata/taskdefs/tagtask-other")).status).toBe(403);
    // READ and EXECUTE only: no writing.
    expect((await as("PUT", "/api/metadata/workflow", [{ name: "tagflow-billing", version: 1, tasks: [httpTask("call", { uri: target("/echo/x"), method: "GET" })] }])).status).toBe(403);

    expect(await apiOk("GET", `/api/users/${userId}/permissions`)).toEqual({ grantedAccess: [{ target: { type: "TAG", id: "team:billing" }, access: ["READ", "EXECUTE"] }] });
    expect(await apiOk("GET", `/api/users/${userId}/checkPermissions?type=TAG&id=team:billing`)).toEqual({ CREATE: false, READ: true, UPDATE: false, EXECUTE: true, DELETE: false });
    expect(await apiOk("GET", "/api/auth/authorization/TAG/team:billing")).toEqual({ CREATE: [], READ: [{ type: "USER", id: userId }], UPDATE: [], EXECUTE: [{ type: "USER", id: userId }], DELETE: [] });

    // A tagged definition whose name ends in * is that one definition, not a prefix of others.
    await registerFlow("tagflow-star*");
    await registerFlow("tagflow-star-other");
    await apiOk("PUT", `/api/metadata/workflow/${encodeURIComponent("tagflow-star*")}/tags`, [{ key: "team", value: "billing" }]);
    expect((await as("GET", "/api/metadata/workflow/tagflow-star-other")).status).toBe(403);
    // A tag's scope names one tag: a wildcard there is refused.
    expect((await api("PUT", `/api/security/users/${userId}/roles`, { roles: [], directPermissions: [{ action: "WORKFLOW_READ", scope: "tag:team:*" }] })).status).toBe(400);
    // Nor a wildcard whose head could begin one (it would cover every tag when handing grants out, yet hold none).
    for (const scope of ["tag*", "ta*", "t*", "*x"]) {
      expect((await api("PUT", `/api/security/users/${userId}/roles`, { roles: [], directPermissions: [{ action: "WORKFLOW_READ", scope }] })).status, scope).toBe(400);
    }
    // A definition tagged later is covered at once in this isolate, and no longer once the tag is gone.
    await apiOk("PUT", "/api/metadata/workflow/tagflow-other/tags", [{ key: "team", value: "billing" }]);
    expect((await as("GET", "/api/metadata/workflow/tagflow-other")).status).toBe(200);
    await apiOk("PUT", "/api/metadata/workflow/tagflow-other/tags", []);
    expect((await as("GET", "/api/metadata/workflow/tagflow-other")).status).toBe(403);

    await apiOk("DELETE", "/api/auth/authorization", grant({ type: "USER", id: userId }, { type: "TAG", id: "team:billing" }, ["READ", "EXECUTE"]));
    expect((await as("GET", "/api/metadata/workflow/tagflow-billing")).status).toBe(403);
    expect(await apiOk("GET", `/api/users/${userId}/permissions`)).toEqual({ grantedAccess: [] });
  });

  it("gives a TAG's READ or EXECUTE the use of the secrets holding it, which only a holder of that use hands out; the secrets API stays shut", async () => {
    // Orkes' tags share every resource carrying them, secrets too (orkes.io/content/access-control-and-security/tags).
    await apiOk("PUT", "/api/secrets/vault_token", "token-value");
    await apiOk("PUT", "/api/secrets/other_token", "other-value");
    await apiOk("PUT", "/api/secrets/vault_token/tags", [{ key: "team", value: "vault" }]);
    const userId = `vault-user-${crypto.randomUUID().slice(0, 8)}`;
    const user = await createUser(userId, { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }] });
    const usingSecret = (secret: string) => ({ name: `vault-flow-${secret}`, version: 1, tasks: [httpTask("call", { uri: target("/echo/vault"), method: "GET", headers: { Authorization: `Bearer \${workflow.secrets.${secret}}` } })] });
    const registerAs = (who: { token: string }, secret: string) => call("POST", "/api/metadata/workflow?overwrite=true", orkes(who.token), usingSecret(secret));
    expect((await registerAs(user, "vault_token")).status).toBe(403);

    await apiOk("POST", "/api/auth/authorization", grant({ type: "USER", id: userId }, { type: "TAG", id: "team:vault" }, ["READ"]));
    expect((await registerAs(user, "vault_token")).status).toBe(200);
    expect((await registerAs(user, "other_token")).status).toBe(403);
    expect(await apiOk("GET", `/api/users/${userId}/checkPermissions?type=SECRET_NAME&id=vault_token`)).toEqual({ CREATE: false, READ: true, UPDATE: false, EXECUTE: true, DELETE: false });
    expect(await apiOk("GET", `/api/users/${userId}/permissions`)).toEqual({ grantedAccess: [{ target: { type: "TAG", id: "team:vault" }, access: ["READ"] }] });
    // The use only: the secrets API (and its value) stays shut.
    for (const [method, path] of [["GET", "/api/secrets/vault_token"], ["GET", "/api/secrets/vault_token/tags"], ["DELETE", "/api/secrets/vault_token"]] as const) {
      expect((await call(method, path, orkes(user.token))).status, `${method} ${path}`).toBe(403);
    }
    // A secret tagged later is covered at once in this isolate, and no longer once the tag is gone.
    await apiOk("PUT", "/api/secrets/other_token/tags", [{ key: "team", value: "vault" }]);
    expect((await registerAs(user, "other_token")).status).toBe(200);
    await apiOk("DELETE", "/api/secrets/other_token/tags", [{ key: "team", value: "vault" }]);
    expect((await registerAs(user, "other_token")).status).toBe(403);

    // A USER_ADMIN holding every workflow and task permission, but not the use of secrets, hands out neither the tag's
    // READ nor that use: the tag's workflow and task permissions it may give reach no secret.
    const userAdmin = await createUser(`vault-admin-${crypto.randomUUID().slice(0, 8)}`, {
      directPermissions: ["USER_ADMIN", "WORKFLOW_READ", "WORKFLOW_ADMIN", "TASK_READ", "TASK_EXECUTE", "METADATA_ADMIN"].map((action) => ({ action, scope: "*" })),
    });
    const helperId = `vault-helper-${crypto.randomUUID().slice(0, 8)}`;
    const denied = await call("POST", "/api/auth/authorization", orkes(userAdmin.token), grant({ type: "USER", id: helperId }, { type: "TAG", id: "team:vault" }, ["EXECUTE"]));
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { message: string }).message).toContain("SYSTEM_ADMIN on tag:team:vault");
    const toSelf = await call("PUT", `/api/security/users/vault-admin-self/roles`, orkes(userAdmin.token), {
      roles: [],
      directPermissions: [{ action: "WORKFLOW_READ", scope: "tag:team:vault" }, { action: "TASK_READ", scope: "tag:team:vault" }, { action: "METADATA_ADMIN", scope: "*" }],
    });
    expect(toSelf.status).toBe(200);
    const partial = await createUser("vault-admin-self", { directPermissions: [{ action: "WORKFLOW_READ", scope: "tag:team:vault" }, { action: "TASK_READ", scope: "tag:team:vault" }, { action: "METADATA_ADMIN", scope: "*" }] });
    expect(await apiOk("GET", "/api/users/vault-admin-self/permissions")).toEqual({ grantedAccess: [{ target: { type: "TAG", id: "team:vault" }, access: ["READ"] }] });
    expect((await registerAs(partial, "vault_token")).status).toBe(403);
    expect((await call("PUT", `/api/security/users/${helperId}/roles`, orkes(userAdmin.token), { roles: [], directPermissions: [{ action: "SYSTEM_ADMIN", scope: "tag:team:vault" }] })).status).toBe(403);

    // Taking READ away takes the use.
    await apiOk("DELETE", "/api/auth/authorization", grant({ type: "USER", id: userId }, { type: "TAG", id: "team:vault" }, ["READ"]));
    expect((await registerAs(user, "vault_token")).status).toBe(403);
    expect(await apiOk("GET", `/api/users/${userId}/permissions`)).toEqual({ grantedAccess: [] });
  });

  it("refuses, changing nothing: access the caller does not hold, unknown subjects, unmapped targets, bad bodies, non-admins", async () => {
    const userAdmin = await createUser(`grant-admin-${crypto.randomUUID().slice(0, 8)}`, { directPermissions: [{ action: "USER_ADMIN", scope: "*" }] });
    const someone = `someone-${crypto.randomUUID().slice(0, 8)}`;
    const overreach = await call("POST", "/api/auth/authorization", orkes(userAdmin.token), grant({ type: "USER", id: someone }, { type: "WORKFLOW_DEF", id: "x" }, ["EXECUTE"]));
    expect(overreach.status).toBe(403);
    expect(((await overreach.json()) as { message: string }).message).toContain("WORKFLOW_ADMIN on workflow:x");
    expect(await apiOk("GET", `/api/users/${someone}/permissions`)).toEqual({ grantedAccess: [] });
    // A group's own permissions reach its members: adding one hands them out too.
    await apiOk("PUT", "/api/groups/executors", { description: "e", roles: [] });
    await apiOk("POST", "/api/auth/authorization", grant({ type: "GROUP", id: "executors" }, { type: "TASK_DEF", id: "deploy" }, ["EXECUTE"]));
    expect((await call("POST", `/api/groups/executors/users/${someone}`, orkes(userAdmin.token))).status).toBe(403);
    expect((await call("PUT", `/api/users/${someone}`, orkes(userAdmin.token), { name: "S", groups: ["executors"] })).status).toBe(403);
    expect(await apiOk("GET", "/api/groups/executors/users")).toEqual([]);

    const refusals: Array<[unknown, number]> = [
      [grant({ type: "ROLE", id: "no-such-role" }, { type: "WORKFLOW_DEF", id: "x" }, ["READ"]), 404],
      [grant({ type: "GROUP", id: "no-such-group" }, { type: "WORKFLOW_DEF", id: "x" }, ["READ"]), 404],
      [grant({ type: "USER", id: "admin" }, { type: "WORKFLOW_DEF", id: "x" }, ["READ"]), 400],
      [grant({ type: "USER", id: someone }, { type: "TAG", id: "x" }, ["READ"]), 400],
      [grant({ type: "USER", id: someone }, { type: "APPLICATION", id: "x" }, ["READ"]), 400],
      [grant({ type: "USER", id: someone }, { type: "SECRET_NAME", id: "x" }, ["READ", "UPDATE"]), 400],
      [grant({ type: "USER", id: someone }, { type: "WORKFLOW_DEF", id: "x*" }, ["READ"]), 400],
      [grant({ type: "USER", id: someone }, { type: "WORKFLOW_DEF", id: "x" }, []), 400],
      [grant({ type: "USER", id: someone }, { type: "WORKFLOW_DEF", id: "x" }, ["ADMIN"]), 400],
      [grant({ type: "USER", id: "bad id" }, { type: "WORKFLOW_DEF", id: "x" }, ["READ"]), 400],
      [{}, 400],
    ];
    for (const [body, status] of refusals) expect((await api("POST", "/api/auth/authorization", body)).status, JSON.stringify(body)).toBe(status);
    // Taking access from a role or group that does not exist takes nothing (as from a user holding none), creating neither.
    for (const subject of [{ type: "ROLE", id: "no-such-role" }, { type: "GROUP", id: "no-such-group" }]) {
      expect((await api("DELETE", "/api/auth/authorization", grant(subject, { type: "WORKFLOW_DEF", id: "x" }, ["READ"]))).status, subject.type).toBe(200);
    }
    expect((await api("GET", "/api/security/roles/no-such-role")).status).toBe(404);
    expect((await api("GET", "/api/groups/no-such-group")).status).toBe(404);
    expect(await apiOk("GET", `/api/users/${someone}/permissions`)).toEqual({ grantedAccess: [] });
    // Every access kind, an empty list when nobody holds it (the clients index the map by kind), on any of Orkes'
    // target types: one this service gives no access on per target has no holders.
    const none = { CREATE: [], READ: [], UPDATE: [], EXECUTE: [], DELETE: [] };
    expect(await apiOk("GET", "/api/auth/authorization/WORKFLOW_DEF/x")).toEqual(none);
    expect(await apiOk("GET", "/api/auth/authorization/APPLICATION/x")).toEqual(none);
    expect((await api("GET", "/api/auth/authorization/not-a-type/x")).status).toBe(400);

    const reader = await createUser(`grant-reader-${crypto.randomUUID().slice(0, 8)}`, { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    expect((await call("GET", "/api/auth/authorization/WORKFLOW_DEF/x", orkes(reader.token))).status).toBe(403);
    expect((await call("GET", `/api/users/${someone}/checkPermissions?type=APPLICATION&id=x`, orkes(reader.token))).status).toBe(403);
    expect((await call("POST", "/api/auth/authorization", orkes(reader.token), grant({ type: "USER", id: someone }, { type: "WORKFLOW_DEF", id: "x" }, ["READ"]))).status).toBe(403);
    expect(await apiOk("GET", `/api/users/${someone}/permissions`)).toEqual({ grantedAccess: [] });
  });
});
