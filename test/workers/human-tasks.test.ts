import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, boundStatementsOf, eventually, expectCountStopsAt10000, getWorkflow, queryPlan, register, rowCount, startWorkflow, statementsOf, waitFor, waitForIndexRow } from "./helpers";

// Orkes' human task API (/api/human/...) through the real router, execution objects and D1: who sees, claims and
// fills in a HUMAN task, its user form, and what refused requests leave behind (nothing).

type Entry = JsonObject & { taskId: string; state: string; assignee?: { user: string; userType: string }; claimant?: { user: string; userType: string } };
const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

async function group(id: string, members: string[]): Promise<void> {
  await apiOk("PUT", `/api/groups/${id}`, { description: "approvers", roles: [] });
  for (const member of members) await apiOk("POST", `/api/groups/${id}/users/${member}`);
}

/** A definition named `name` whose one task is a HUMAN `approve` with `settings`, then a NOOP. */
async function registerApproval(name: string, settings: JsonObject): Promise<void> {
  await register({
    name,
    tasks: [
      { name: "approve", taskReferenceName: "approve", type: "HUMAN", inputParameters: { amount: "${workflow.input.amount}", __humanTaskDefinition: settings } },
      { name: "after", taskReferenceName: "after", type: "NOOP" },
    ],
  });
}

/** The HUMAN task of execution `workflowId`, once it runs and can be found by id (its execution is searchable). */
async function humanTaskOf(workflowId: string): Promise<string> {
  const workflow = await waitFor(workflowId, (wf) => wf.tasks.some((task) => task.referenceTaskName === "approve" && task.status === "IN_PROGRESS"));
  await waitForIndexRow(workflowId, "RUNNING");
  return workflow.tasks.find((task) => task.referenceTaskName === "approve")!.taskId;
}

/** A started HUMAN task assigned, without a time limit, to a new group of two new users, ada and bob. */
async function taskOfTwoMembers() {
  const groupId = unique("approvers");
  const [adaId, bobId] = [unique("ada"), unique("bob")];
  const [ada, bob] = [await createUser(adaId), await createUser(bobId)];
  await group(groupId, [adaId, bobId]);
  const name = unique("refund");
  await registerApproval(name, { assignments: [{ assignee: { user: groupId, userType: "CONDUCTOR_GROUP" }, slaMinutes: 0 }] });
  const workflowId = await startWorkflow(name, { amount: 4 });
  return { groupId, adaId, bobId, ada, bob, name, workflowId, taskId: await humanTaskOf(workflowId) };
}

const as = (token: string) => ({
  get: (path: string) => call("GET", path, orkes(token)),
  post: (path: string, body?: unknown) => call("POST", path, orkes(token), body),
  search: async (search: JsonObject) => {
    const response = await call("POST", "/api/human/tasks/search", orkes(token), search);
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as { totalHits: number; results: Entry[]; start: number; hits: number; pageSizeLimit: number };
  },
});

describe("a HUMAN task assigned to a group", () => {
  it("shows in its members' inbox only; a member claims it, saves and submits the form, and the workflow goes on", async () => {
    const groupId = unique("approvers");
    const [adaId, eveId] = [unique("ada"), unique("eve")];
    const [ada, eve] = [await createUser(adaId), await createUser(eveId)];
    await group(groupId, [adaId]);
    const name = unique("refund");
    await registerApproval(name, { displayName: "Approve the refund", assignments: [{ assignee: { user: groupId, userType: "CONDUCTOR_GROUP" }, slaMinutes: 60 }] });
    const workflowId = await startWorkflow(name, { amount: 120 });
    const taskId = await humanTaskOf(workflowId);

    const inbox = await eventually(() => as(ada.token).search({ searchType: "INBOX", states: ["ASSIGNED"] }), (page) => page.results.some((entry) => entry.taskId === taskId), "the task in ada's inbox");
    const listed = inbox.results.find((entry) => entry.taskId === taskId)!;
    expect(listed).toMatchObject({ workflowId, workflowName: name, taskRefName: "approve", displayName: "Approve the refund", state: "ASSIGNED", assignee: { user: groupId, userType: "CONDUCTOR_GROUP" }, input: { amount: 120 } });
    expect((await as(eve.token).search({ searchType: "INBOX" })).results.map((entry) => entry.taskId)).not.toContain(taskId);
    expect((await as(eve.token).get(`/api/human/tasks/${taskId}`)).status).toBe(403);

    // An outsider's claim is refused and changes nothing.
    const refused = await as(eve.token).post(`/api/human/tasks/${taskId}/claim`);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: "PERMISSION_DENIED" });
    expect(await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`)).toMatchObject({ state: "ASSIGNED" });
    expect((await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`)).claimant).toBeUndefined();

    const claimed = await as(ada.token).post(`/api/human/tasks/${taskId}/claim`);
    expect(claimed.status, await claimed.clone().text()).toBe(200);
    // Orkes' audit fields, as its entries show them: who started the workflow, who acted last (bare ids).
    const startedBy = (await getWorkflow(workflowId))["createdBy"];
    expect(startedBy).toEqual(expect.any(String));
    expect(await claimed.json()).toMatchObject({ taskId, state: "IN_PROGRESS", claimant: { user: adaId, userType: "CONDUCTOR_USER" }, createdBy: startedBy, updatedBy: adaId });
    expect((await as(ada.token).post(`/api/human/tasks/${taskId}/claim`)).status).toBe(409);

    expect((await as(ada.token).post(`/api/human/tasks/${taskId}/update`, { note: "checked the receipt" })).status).toBe(200);
    let workflow = await getWorkflow(workflowId);
    expect(workflow.tasks[0]).toMatchObject({ status: "IN_PROGRESS", outputData: { note: "checked the receipt" } });
    expect((await as(ada.token).post(`/api/human/tasks/${taskId}/update?complete=true`, { approved: true })).status).toBe(200);
    workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(workflow.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { note: "checked the receipt", approved: true } });
    expect(await as(ada.token).get(`/api/human/tasks/${taskId}`).then((response) => response.json())).toMatchObject({ state: "COMPLETED" });
    await eventually(() => apiOk<{ results: Entry[] }>("POST", "/api/human/tasks/search", { searchType: "ADMIN", workflowIds: [workflowId], states: ["COMPLETED"] }), (page) => page.results.length === 1, "the completed task in the list");
  });

  it("with autoClaim, is left ASSIGNED to the group (a member claims it); a user first assignee claims it as it starts (IN_PROGRESS, in their inbox) and submits the form without claiming it", async () => {
    const groupId = unique("approvers");
    const [adaId, bobId, eveId] = [unique("ada"), unique("bob"), unique("eve")];
    const [ada, bob, eve] = [await createUser(adaId), await createUser(bobId), await createUser(eveId)];
    await group(groupId, [bobId]);
    const toGroup = unique("refund");
    await registerApproval(toGroup, { autoClaim: true, assignments: [{ assignee: { user: groupId, userType: "CONDUCTOR_GROUP" }, slaMinutes: 60 }] });
    const groupTaskId = await humanTaskOf(await startWorkflow(toGroup, { amount: 40 }));
    const groupTask = await apiOk<Entry>("GET", `/api/human/tasks/${groupTaskId}`);
    expect(groupTask).toMatchObject({ state: "ASSIGNED", assignee: { user: groupId, userType: "CONDUCTOR_GROUP" } });
    expect(groupTask.claimant).toBeUndefined();
    expect((await as(bob.token).post(`/api/human/tasks/${groupTaskId}/update?complete=true`, { approved: true })).status).toBe(409);
    expect(await (await as(bob.token).post(`/api/human/tasks/${groupTaskId}/claim`)).json()).toMatchObject({ state: "IN_PROGRESS", claimant: { user: bobId, userType: "CONDUCTOR_USER" } });

    const toAda = unique("refund");
    await registerApproval(toAda, { autoClaim: true, assignments: [{ assignee: { user: adaId, userType: "CONDUCTOR_USER" }, slaMinutes: 60 }] });
    const workflowId = await startWorkflow(toAda, { amount: 40 });
    const taskId = await humanTaskOf(workflowId);
    const claimedBy = { user: adaId, userType: "CONDUCTOR_USER" };
    expect(await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`)).toMatchObject({ state: "IN_PROGRESS", assignee: claimedBy, claimant: claimedBy });
    const inbox = await eventually(() => as(ada.token).search({ searchType: "INBOX", states: ["IN_PROGRESS"] }), (page) => page.results.some((entry) => entry.taskId === taskId), "the claimed task in ada's inbox");
    expect(inbox.results.find((entry) => entry.taskId === taskId)).toMatchObject({ state: "IN_PROGRESS", claimant: claimedBy });
    // Claimed already: ada's own claim is a conflict; an outsider may not fill it in.
    expect((await as(ada.token).post(`/api/human/tasks/${taskId}/claim`)).status).toBe(409);
    expect((await as(eve.token).post(`/api/human/tasks/${taskId}/update?complete=true`, { approved: true })).status).toBe(403);

    const submitted = await as(ada.token).post(`/api/human/tasks/${taskId}/update?complete=true`, { approved: true });
    expect(submitted.status, await submitted.clone().text()).toBe(200);
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(workflow.tasks[0]).toMatchObject({ status: "COMPLETED", outputData: { approved: true } });
  });

  it("lists a task whose row was written when updatedBy read CONDUCTOR_USER:<id> with the id alone, as reading the task shows it", async () => {
    const adaId = unique("ada");
    const ada = await createUser(adaId);
    const name = unique("refund");
    await registerApproval(name, { assignments: [{ assignee: { user: adaId, userType: "CONDUCTOR_USER" }, slaMinutes: 60 }] });
    const workflowId = await startWorkflow(name, { amount: 3 });
    const taskId = await humanTaskOf(workflowId);
    expect((await as(ada.token).post(`/api/human/tasks/${taskId}/claim`)).status).toBe(200);
    const listed = () => as(ada.token).search({ searchType: "INBOX", workflowIds: [workflowId] });
    await eventually(listed, (page) => page.results[0]?.state === "IN_PROGRESS", "the claim in the list");
    // The row as code before the bare id wrote it; nothing changes the workflow after, so it stays so.
    await env.DB.prepare("UPDATE human_tasks SET entry = json_set(entry, '$.updatedBy', ?) WHERE task_id = ?").bind(`CONDUCTOR_USER:${adaId}`, taskId).run();
    expect((await listed()).results[0]).toMatchObject({ taskId, updatedBy: adaId });
    expect(await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`)).toMatchObject({ updatedBy: adaId });
  });

  it("lets one who may complete the task act on it whoever it is assigned to, and claim it for a user of another system", async () => {
    const name = unique("refund");
    const bossId = unique("boss");
    const boss = await createUser(bossId, { directPermissions: [{ action: "TASK_EXECUTE", scope: `workflow:${name}` }] });
    await registerApproval(name, { assignments: [{ assignee: { user: "reviewers", userType: "EXTERNAL_GROUP" }, slaMinutes: 0 }] });
    const workflowId = await startWorkflow(name, { amount: 5 });
    const taskId = await humanTaskOf(workflowId);
    expect((await as(boss.token).post(`/api/human/tasks/${taskId}/claim`)).status).toBe(403);
    const forUser = await as(boss.token).post(`/api/human/tasks/${taskId}/externalUser/x%40corp.example`);
    expect(forUser.status, await forUser.clone().text()).toBe(200);
    expect(await forUser.json()).toMatchObject({ state: "IN_PROGRESS", claimant: { user: "x@corp.example", userType: "EXTERNAL_USER" }, assignee: { user: "reviewers" } });
    expect((await as(boss.token).post(`/api/human/tasks/${taskId}/release`)).status).toBe(200);
    expect((await as(boss.token).post(`/api/human/tasks/${taskId}/reassign`, [{ assignee: { user: bossId, userType: "CONDUCTOR_USER" }, slaMinutes: 0 }])).status).toBe(200);
    expect(await as(boss.token).get(`/api/human/tasks/${taskId}`).then((response) => response.json())).toMatchObject({
      state: "ASSIGNED",
      assignee: { user: bossId, userType: "CONDUCTOR_USER" },
      humanTaskDef: { assignments: [{ assignee: { user: bossId, userType: "CONDUCTOR_USER" }, slaMinutes: 0 }] },
    });
    const conductorTask = (await as(boss.token).get(`/api/human/tasks/${taskId}/conductorTask`).then((response) => response.json())) as JsonObject;
    expect(conductorTask).toMatchObject({ taskId, taskType: "HUMAN", status: "IN_PROGRESS", workflowInstanceId: workflowId });

    // Completed by reference name, by one who may complete it without a claim.
    const byRef = await as(boss.token).post(`/api/human/tasks/update/taskRef?workflowId=${workflowId}&taskRefName=approve&complete=true`, { approved: false });
    expect(byRef.status, await byRef.clone().text()).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ approved: false });
    // A reference name the workflow lacks is a 404 to one who may complete its tasks, and to no one else: a stranger
    // learns nothing of what the workflow holds, nor whether the workflow exists.
    const missing = (id: string) => `/api/human/tasks/update/taskRef?workflowId=${id}&taskRefName=nope`;
    expect((await as(boss.token).post(missing(workflowId), {})).status).toBe(404);
    const stranger = await createUser(unique("stranger"), { directPermissions: [{ action: "TASK_EXECUTE", scope: `workflow:${unique("other")}` }] });
    for (const id of [workflowId, crypto.randomUUID()]) expect((await as(stranger.token).post(missing(id), {})).status).toBe(403);
    expect((await api("POST", missing(crypto.randomUUID()), {})).status).toBe(404);
  });

  it("shows the task to one who may read tasks of its name (TASK_READ), as GET /api/tasks/{taskId} does, and lists it in their ADMIN search, but not to claim even an open one", async () => {
    const name = unique("refund");
    await registerApproval(name, { assignments: [{ assignee: { user: unique("nobody"), userType: "CONDUCTOR_USER" }, slaMinutes: 0 }] });
    const workflowId = await startWorkflow(name, { amount: 7 });
    const taskId = await humanTaskOf(workflowId);
    const byName = await createUser(unique("task-reader"), { directPermissions: [{ action: "TASK_READ", scope: "task:approve" }] });
    const other = await createUser(unique("other-reader"), { directPermissions: [{ action: "TASK_READ", scope: "task:after" }] });
    expect((await as(byName.token).get(`/api/tasks/${taskId}`)).status).toBe(200);
    expect(await (await as(byName.token).get(`/api/human/tasks/${taskId}`)).json()).toMatchObject({ taskId, workflowId, state: "ASSIGNED" });
    expect((await as(byName.token).get(`/api/human/tasks/${taskId}/conductorTask`)).status).toBe(200);
    expect((await as(other.token).get(`/api/human/tasks/${taskId}`)).status).toBe(403);
    const listed = await eventually(
      () => as(byName.token).search({ searchType: "ADMIN", workflowIds: [workflowId] }),
      (page) => page.results.length === 1,
      "the task in the reader's search",
    );
    expect(listed.results[0]).toMatchObject({ taskId });
    expect((await as(other.token).search({ searchType: "ADMIN", workflowIds: [workflowId] })).results).toEqual([]);
    // Reading is not acting: the reader may not claim it, nor a task open to the readers of its workflow.
    expect((await as(byName.token).post(`/api/human/tasks/${taskId}/claim`)).status).toBe(403);
    expect((await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`)).claimant).toBeUndefined();
    const openName = unique("refund-open");
    await registerApproval(openName, {});
    const openId = await startWorkflow(openName, { amount: 8 });
    const openTask = await humanTaskOf(openId);
    expect(await (await as(byName.token).get(`/api/human/tasks/${openTask}`)).json()).toMatchObject({ taskId: openTask, state: "ASSIGNED" });
    expect((await as(byName.token).post(`/api/human/tasks/${openTask}/claim`)).status).toBe(403);
    expect((await apiOk<Entry>("GET", `/api/human/tasks/${openTask}`)).claimant).toBeUndefined();
    await eventually(() => apiOk<{ results: Entry[] }>("POST", "/api/human/tasks/search", { searchType: "ADMIN", workflowIds: [openId] }), (page) => page.results.length === 1, "the open task indexed");
    expect((await as(byName.token).search({ searchType: "INBOX", workflowIds: [openId] })).results).toEqual([]);
    expect((await as(byName.token).search({ searchType: "ADMIN", workflowIds: [openId] })).results.map((entry) => entry.taskId)).toEqual([openTask]);
  });

  it("tells a stranger nothing of what an id names: a HUMAN task of another's, a task that is no HUMAN one and an unknown id answer the same 403; one who may read every workflow is told the last two are not HUMAN tasks (404)", async () => {
    const name = unique("refund");
    await registerApproval(name, { assignments: [{ assignee: { user: unique("owner"), userType: "CONDUCTOR_USER" }, slaMinutes: 0 }] });
    const humanTask = await humanTaskOf(await startWorkflow(name, { amount: 3 }));
    const plainName = unique("plain");
    await register({ name: plainName, tasks: [{ name: "ht_plain_task", taskReferenceName: "plain", type: "SIMPLE" }] });
    const plainId = await startWorkflow(plainName);
    await waitForIndexRow(plainId, "RUNNING");
    const plainTask = (await getWorkflow(plainId)).tasks[0]!.taskId;
    const unknown = crypto.randomUUID();
    const stranger = await createUser(unique("stranger"), { directPermissions: [{ action: "WORKFLOW_READ", scope: `workflow:${unique("elsewhere")}` }] });
    const allReader = await createUser(unique("all-reader"), { directPermissions: [{ action: "WORKFLOW_READ", scope: "*" }] });
    const answer = async (token: string, path: string) => {
      const response = await call("GET", path, orkes(token));
      return { status: response.status, body: (await response.json()) as { message: string } };
    };
    for (const [taskId, suffix] of [humanTask, plainTask, unknown].flatMap((id) => [[id, ""], [id, "/conductorTask"]])) {
      expect(await answer(stranger.token, `/api/human/tasks/${taskId}${suffix}`)).toEqual({
        status: 403,
        body: { status: 403, error: "PERMISSION_DENIED", retryable: false, message: `Human task ${taskId} is not assigned to or claimed by you or a group of yours, and you may not read its workflow` },
      });
    }
    expect((await call("POST", `/api/human/tasks/${unknown}/claim`, orkes(stranger.token))).status).toBe(403);
    for (const taskId of [plainTask, unknown]) expect((await answer(allReader.token, `/api/human/tasks/${taskId}`)).status).toBe(404);
    expect((await answer(allReader.token, `/api/human/tasks/${humanTask}`)).status).toBe(200);
    expect((await getWorkflow(plainId)).tasks[0]!.status).toBe("SCHEDULED");
  });

  it("refuses each action to one who may see a task claimed by another but not act on it with a 403, as on the task unclaimed: the right is checked before the claim", async () => {
    const { ada, bob, name, taskId } = await taskOfTwoMembers();
    // A reader of the workflow sees the task and may claim only a task open to anyone: this one is the group's.
    const reader = await createUser(unique("reader"), { directPermissions: [{ action: "WORKFLOW_READ", scope: `workflow:${name}` }] });
    const chain = [{ assignee: { user: unique("other"), userType: "CONDUCTOR_USER" }, slaMinutes: 0 }];
    const actions: Array<[string, string, unknown?]> = [
      ["claim", `/api/human/tasks/${taskId}/claim`],
      ["release", `/api/human/tasks/${taskId}/release`],
      ["update", `/api/human/tasks/${taskId}/update`, { note: "x" }],
      ["complete", `/api/human/tasks/${taskId}/update?complete=true`, { approved: true }],
      ["skip", `/api/human/tasks/${taskId}/skip`],
      ["reassign", `/api/human/tasks/${taskId}/reassign`, chain],
    ];
    const statusOf = async (token: string, [, path, body]: [string, string, unknown?]) => (await call("POST", path, orkes(token), body)).status;
    const refusedAll = async (token: string) => {
      const statuses: Record<string, number> = {};
      for (const action of actions) statuses[action[0]] = await statusOf(token, action);
      statuses["delete"] = (await call("DELETE", `/api/human/tasks/delete/${taskId}`, orkes(token))).status;
      return statuses;
    };
    const before = await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`);
    // Unclaimed too: one who could not claim it is not told to claim it first (release, update, complete were 409s).
    expect(await refusedAll(reader.token)).toEqual({ claim: 403, release: 403, update: 403, complete: 403, skip: 403, reassign: 403, delete: 403 });
    expect(await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`)).toEqual(before);
    // A member of the group could claim it, so learns it is not claimed yet.
    const waitingForClaim = actions.filter(([kind]) => ["release", "update", "complete"].includes(kind));
    expect(await Promise.all(waitingForClaim.map((action) => statusOf(bob.token, action)))).toEqual([409, 409, 409]);
    expect(await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`)).toEqual(before);
    expect((await as(ada.token).post(`/api/human/tasks/${taskId}/claim`)).status).toBe(200);
    const claimed = await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`);
    expect(await refusedAll(reader.token)).toEqual({ claim: 403, release: 403, update: 403, complete: 403, skip: 403, reassign: 403, delete: 403 });
    // A member of the group may skip or reassign it, so learns it is claimed (release it first); filling it in is ada's.
    expect(await refusedAll(bob.token)).toEqual({ claim: 409, release: 403, update: 403, complete: 403, skip: 409, reassign: 409, delete: 403 });
    expect(await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`)).toEqual(claimed);
  });

  it("refuses malformed requests with the contract's error and leaves the task as it was", async () => {
    const name = unique("refund");
    await registerApproval(name, { assignments: [{ assignee: { user: "someone", userType: "CONDUCTOR_USER" }, slaMinutes: 30 }] });
    const workflowId = await startWorkflow(name, { amount: 5 });
    const taskId = await humanTaskOf(workflowId);
    const before = await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`);

    const badChain = await api("POST", `/api/human/tasks/${taskId}/reassign`, [{ assignee: { user: "x", userType: "ROBOT" }, slaMinutes: -5 }]);
    expect(badChain.status).toBe(400);
    expect(await badChain.json()).toMatchObject({
      error: "VALIDATION_ERROR",
      validationErrors: [
        { path: "(body)[0].assignee.userType", message: expect.stringContaining("CONDUCTOR_USER") },
        { path: "(body)[0].slaMinutes", message: expect.stringContaining("whole number of minutes") },
      ],
    });
    expect((await api("POST", `/api/human/tasks/${taskId}/update?complete=maybe`, {})).status).toBe(400);
    expect((await api("POST", `/api/human/tasks/${taskId}/update`, [1, 2])).status).toBe(400);
    expect((await api("POST", `/api/human/tasks/${taskId}/update`, "null")).status).toBe(400);
    expect((await api("POST", "/api/human/tasks/search", { states: ["WAITING"] })).status).toBe(400);
    expect((await api("POST", "/api/human/tasks/search", { searchType: "ADMIN", taskInputQuery: "amount > 3" })).status).toBe(400);
    expect((await api("POST", `/api/human/tasks/${crypto.randomUUID()}/claim`)).status).toBe(404);
    expect(await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`)).toEqual(before);
  });

  it("searches by state, assignee pattern, display name and input; lists display names; deletes from the list", async () => {
    const name = unique("refund");
    const owner = unique("owner");
    await registerApproval(name, { displayName: `Review ${name}`, assignments: [{ assignee: { user: owner, userType: "CONDUCTOR_USER" }, slaMinutes: 0 }] });
    const [small, large] = [await startWorkflow(name, { amount: 5 }), await startWorkflow(name, { amount: 500 })];
    const [smallTask, largeTask] = [await humanTaskOf(small), await humanTaskOf(large)];
    const admin = (search: JsonObject) => apiOk<{ totalHits: number; results: Entry[] }>("POST", "/api/human/tasks/search", { searchType: "ADMIN", workflowNames: [name], ...search });
    await eventually(() => admin({}), (page) => page.totalHits === 2, "both tasks listed");
    expect((await admin({ taskInputQuery: "amount = 500" })).results.map((entry) => entry.taskId)).toEqual([largeTask]);
    expect((await admin({ taskInputQuery: "amount IN (5, 7)" })).results.map((entry) => entry.taskId)).toEqual([smallTask]);
    expect((await admin({ assignees: [{ user: `${owner.slice(0, 6)}*`, userType: "CONDUCTOR_USER" }] })).totalHits).toBe(2);
    expect((await admin({ assignees: [{ user: owner, userType: "CONDUCTOR_GROUP" }] })).totalHits).toBe(0);
    // Without a kind (as the JavaScript client sends an assignee unless told its type), one of any kind.
    expect((await admin({ assignees: [{ user: owner }] })).totalHits).toBe(2);
    expect((await admin({ assignees: [{ user: unique("nobody") }, { user: owner, userType: null }] })).totalHits).toBe(2);
    expect((await api("POST", "/api/human/tasks/search", { searchType: "ADMIN", assignees: [{ user: owner, userType: "ROBOT" }] })).status).toBe(400);
    // As long lists as a search takes (100 each; D1 binds at most 100 parameters a statement): they were a 500.
    const others = (prefix: string) => Array.from({ length: 99 }, (_, index) => `${prefix}-${index}`);
    const longLists = {
      assignees: [...others("someone").map((user) => ({ user, userType: "CONDUCTOR_USER" })), { user: owner, userType: "CONDUCTOR_USER" }],
      claimants: others("claimer").map((user) => ({ user })),
      taskRefNames: [...others("step"), "approve"],
      taskInputQuery: `amount IN (${[...Array.from({ length: 99 }, (_, index) => index + 1), 500].join(", ")}) AND amount IN (500, 501) AND amount = 500`,
    };
    expect((await admin({ ...longLists, claimants: [] })).results.map((entry) => entry.taskId)).toEqual([largeTask]);
    expect((await admin(longLists)).totalHits).toBe(0);
    // Texts longer than a LIKE or GLOB pattern D1 takes (50 bytes): matched exactly, or as a substring; a pattern (with
    // a *) that long is the caller's 400.
    const long = "l".repeat(60);
    expect((await admin({ assignees: [{ user: `${long}-nobody` }, { user: owner }], taskRefNames: [`${long}-step`, "approve"], taskInputQuery: `amount IN (${long}, 5)` })).results.map((entry) => entry.taskId)).toEqual([smallTask]);
    const longText = `"WORKFLOWID":"${small.toUpperCase()}"`;
    expect(longText.length).toBeGreaterThan(48);
    expect((await admin({ fullTextQuery: longText })).results.map((entry) => entry.taskId)).toEqual([smallTask]);
    const tooLong = await api("POST", "/api/human/tasks/search", { searchType: "ADMIN", assignees: [{ user: `${long}*` }] });
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ path: "assignees[0].user", message: expect.stringContaining("at most 50 bytes") }] });
    expect((await api("POST", "/api/human/tasks/search", { searchType: "ADMIN", fullTextQuery: `${long}*x` })).status).toBe(400);
    expect((await admin({ displayNames: [`Review ${name}`], size: 1 })).results).toHaveLength(1);
    // Full text, as the other searches' freeText: a substring of the entry, whatever its case, `*` matching anything;
    // % and _ are themselves.
    expect((await admin({ fullTextQuery: `REVIEW ${name.toUpperCase()}` })).totalHits).toBe(2);
    expect((await admin({ fullTextQuery: "review%" })).totalHits).toBe(0);
    expect((await admin({ fullTextQuery: "*" })).totalHits).toBe(2);
    expect((await admin({ fullTextQuery: `review*${name.slice(-8)}` })).totalHits).toBe(2);
    // Texts joined by AND and OR (AND first), the operations Orkes' fullTextQuery takes; a quoted text is one text.
    expect((await admin({ fullTextQuery: `${small.toUpperCase()} OR ${large}` })).totalHits).toBe(2);
    expect((await admin({ fullTextQuery: `review AND ${small}` })).results.map((entry) => entry.taskId)).toEqual([smallTask]);
    expect((await admin({ fullTextQuery: `${unique("nothing")} AND review OR ${large} AND ${name}` })).results.map((entry) => entry.taskId)).toEqual([largeTask]);
    expect((await admin({ fullTextQuery: `review AND ${unique("nothing")}` })).totalHits).toBe(0);
    expect((await admin({ fullTextQuery: `"review AND ${name}"` })).totalHits).toBe(0);
    expect((await admin({ fullTextQuery: `* OR ${unique("nothing")}` })).totalHits).toBe(2);
    // Lower-case words are text: "and" or "or" in a phrase is no operator ("or" read as OR would find both).
    expect((await admin({ fullTextQuery: `${small} and ${large}` })).totalHits).toBe(0);
    expect((await admin({ fullTextQuery: `${small} or ${large}` })).totalHits).toBe(0);
    // At most 10 texts: the 11th is a 400 naming fullTextQuery (a search, so nothing to leave unchanged).
    const texts = (count: number) => Array.from({ length: count }, (_, index) => (index === 0 ? small : `t${index}`)).join(" OR ");
    expect((await admin({ fullTextQuery: texts(10) })).results.map((entry) => entry.taskId)).toEqual([smallTask]);
    const tooMany = await api("POST", "/api/human/tasks/search", { searchType: "ADMIN", fullTextQuery: texts(11) });
    expect(tooMany.status).toBe(400);
    expect(await tooMany.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ path: "fullTextQuery", message: expect.stringContaining("at most 10 texts") }] });
    expect(await apiOk<string[]>("GET", "/api/human/tasks/getTaskDisplayNames?searchType=ADMIN")).toContain(`Review ${name}`);

    expect((await api("DELETE", `/api/human/tasks/delete/${smallTask}`)).status).toBe(200);
    expect(await apiOk<Entry>("GET", `/api/human/tasks/${smallTask}`)).toMatchObject({ state: "DELETED" });
    expect((await getWorkflow(small)).status).toBe("RUNNING");
    await eventually(() => admin({ states: ["DELETED"] }), (page) => page.results.map((entry) => entry.taskId).join() === smallTask, "the deleted task listed as DELETED");
    // Out of its assignee's inbox (an INBOX search without states, as the JavaScript client sends it), the other in it.
    const ownerToken = (await createUser(owner)).token;
    expect((await as(ownerToken).search({ searchType: "INBOX", workflowNames: [name] })).results.map((entry) => entry.taskId)).toEqual([largeTask]);
    // A task named twice (in either case) is deleted once, and listed once: not also as failed, found deleted.
    const bulk = await apiOk<{ deleted: string[]; failed: Record<string, string> }>("DELETE", "/api/human/tasks/delete", [largeTask, smallTask, largeTask, largeTask.toUpperCase()]);
    expect(bulk.deleted).toEqual([largeTask]);
    expect(Object.keys(bulk.failed)).toEqual([smallTask]);
    expect(bulk.failed[smallTask]).toContain("DELETED");
  });

  it("lets exactly one of two members claiming at once have it (the other a 409 naming the winner); terminated while claimed it is DELETED and refuses the form, and a retry assigns a new task afresh", async () => {
    const { adaId, ada, bob, groupId, workflowId, taskId } = await taskOfTwoMembers();
    const claims = await Promise.all([ada, bob].map((user) => as(user.token).post(`/api/human/tasks/${taskId}/claim`)));
    expect(claims.map((response) => response.status).sort()).toEqual([200, 409]);
    const winner = (await claims.find((response) => response.status === 200)!.json()) as Entry;
    expect(await claims.find((response) => response.status === 409)!.json()).toMatchObject({ error: "CONFLICT", message: expect.stringContaining(`claimed by user ${winner.claimant!.user}`) });
    expect((await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`)).claimant).toEqual(winner.claimant);

    expect((await api("DELETE", `/api/workflow/${workflowId}?reason=withdrawn`)).status).toBe(200);
    const holder = winner.claimant!.user === adaId ? ada : bob;
    expect(await (await as(holder.token).get(`/api/human/tasks/${taskId}`)).json()).toMatchObject({ state: "DELETED", claimant: winner.claimant });
    const late = await as(holder.token).post(`/api/human/tasks/${taskId}/update?complete=true`, { approved: true });
    expect(late.status).toBe(409);
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "CANCELED", outputData: {} });
    expect((await api("POST", `/api/workflow/${workflowId}/retry`)).status).toBe(204);
    await humanTaskOf(workflowId);
    const retried = (await getWorkflow(workflowId)).tasks.find((task) => task.referenceTaskName === "approve" && task.status === "IN_PROGRESS")!.taskId;
    expect(retried).not.toBe(taskId);
    const fresh = await apiOk<Entry>("GET", `/api/human/tasks/${retried}`);
    expect(fresh).toMatchObject({ state: "ASSIGNED", assignee: { user: groupId, userType: "CONDUCTOR_GROUP" } });
    expect(fresh.claimant).toBeUndefined();
  });

  it("masks what its input took from a masked field as its Task JSON does, in the entry, its settings and the list, so a full-text search cannot find it", async () => {
    const name = unique("kyc");
    const ssn = `ssn-${crypto.randomUUID().slice(0, 8)}`;
    await register({
      name,
      maskedFields: ["ssn"],
      tasks: [
        {
          name: "approve",
          taskReferenceName: "approve",
          type: "HUMAN",
          inputParameters: { applicant: "${workflow.input.ssn}", note: "SSN ${workflow.input.ssn}", __humanTaskDefinition: { displayName: "Check ${workflow.input.ssn}" } },
        },
      ],
    });
    const workflowId = await startWorkflow(name, { ssn });
    const taskId = await humanTaskOf(workflowId);
    // The Task JSON, as any task's: what the template read from the masked field is ***.
    expect((await apiOk<{ inputData: JsonObject }>("GET", `/api/tasks/${taskId}`)).inputData).toMatchObject({ applicant: "***", note: "SSN ***" });
    const entry = await apiOk<Entry>("GET", `/api/human/tasks/${taskId}`);
    expect(entry).toMatchObject({ displayName: "Check ***", input: { applicant: "***", note: "SSN ***" }, humanTaskDef: { displayName: "Check ***" } });
    expect(JSON.stringify(entry)).not.toContain(ssn);
    const admin = (search: JsonObject) => apiOk<{ totalHits: number; results: Entry[] }>("POST", "/api/human/tasks/search", { searchType: "ADMIN", workflowIds: [workflowId], ...search });
    const page = await eventually(() => admin({}), (found) => found.totalHits === 1, "the task listed");
    expect(JSON.stringify(page.results)).not.toContain(ssn);
    expect((await admin({ fullTextQuery: ssn })).totalHits).toBe(0);
    expect((await admin({ taskInputQuery: `applicant = ${ssn}` })).totalHits).toBe(0);
    expect(await apiOk<string[]>("GET", "/api/human/tasks/getTaskDisplayNames?searchType=ADMIN")).not.toContain(`Check ${ssn}`);
  });
});

describe("bulk delete of human tasks", () => {
  it("looks its ids up together: 30 unknown ids and 2 tasks answer with the 2 deleted and the 30 failed, in order, the lookups a few statements (the wait for unwritten rows once), not 8 an unknown id", async () => {
    const name = unique("refund");
    await registerApproval(name, { assignments: [{ assignee: { user: unique("owner"), userType: "CONDUCTOR_USER" }, slaMinutes: 0 }] });
    const [first, second] = [await humanTaskOf(await startWorkflow(name, { amount: 1 })), await humanTaskOf(await startWorkflow(name, { amount: 2 }))];
    const unknown = Array.from({ length: 30 }, () => crypto.randomUUID());
    const ids = [...unknown.slice(0, 15), first, ...unknown.slice(15), second];
    let bulk: { deleted: string[]; failed: Record<string, string> } | undefined;
    const statements = await statementsOf(async () => {
      bulk = await apiOk("DELETE", "/api/human/tasks/delete", ids);
    });
    expect(bulk!.deleted).toEqual([first, second]);
    expect(Object.keys(bulk!.failed)).toEqual(unknown);
    for (const id of unknown) expect(bulk!.failed[id]).toContain("not found");
    expect(await apiOk<Entry>("GET", `/api/human/tasks/${second}`)).toMatchObject({ state: "DELETED" });
    // Where each id is: the executions by its prefix, then the task index, then the wait's looks again (6), each
    // one statement for every id still missing. One id at a time, each unknown id took 8 (240 here) and 1.45 s.
    const lookups = statements.filter((sql) => /^\s*SELECT/i.test(sql) && /\b(executions|task_index)\b/.test(sql));
    expect(lookups.length).toBeLessThanOrEqual(8);
    // Every id found by its execution at once: one statement, no wait (both are deleted already, so refused).
    const again = await statementsOf(() => apiOk("DELETE", "/api/human/tasks/delete", [first, second]));
    expect(again.filter((sql) => /^\s*SELECT/i.test(sql) && /\b(executions|task_index)\b/.test(sql))).toHaveLength(1);
    // Time enough for the old way to answer (30 × 1.45 s), so that it fails on the count.
  }, 90_000);
});

describe("human task triggers", () => {
  it("start the workflow each names as the task is assigned and claimed, with what happened; one naming no workflow stops nothing", async () => {
    const notify = unique("notify");
    await register({ name: notify, tasks: [{ name: "noop", taskReferenceName: "noop", type: "NOOP" }] });
    const correlationId = unique("refund-notice");
    const trigger = (triggerType: string, name = notify) => ({ triggerType, startWorkflowRequest: { name, input: { channel: "#refunds" }, correlationId } });
    const name = unique("refund");
    await registerApproval(name, {
      assignments: [{ assignee: { user: "admin", userType: "CONDUCTOR_USER" }, slaMinutes: 0 }],
      taskTriggers: [trigger("ASSIGNED"), trigger("IN_PROGRESS"), trigger("ASSIGNED", unique("no-such-workflow"))],
    });
    const workflowId = await startWorkflow(name, { amount: 9 });
    const taskId = await humanTaskOf(workflowId);
    type Found = { results: Array<{ workflowId: string }> };
    const notices = () => apiOk<Found>("GET", `/api/workflow/search?correlationId=${correlationId}`);
    await eventually(notices, (page) => page.results.length === 1, "the ASSIGNED notice started");
    await apiOk("POST", `/api/human/tasks/${taskId}/claim`);
    const page = await eventually(notices, (found) => found.results.length === 2, "the IN_PROGRESS notice started");
    const inputs = await Promise.all(page.results.map(async (found) => (await getWorkflow(found.workflowId)).input));
    expect(inputs.map((input) => (input["humanTask"] as JsonObject)["triggerType"]).sort()).toEqual(["ASSIGNED", "IN_PROGRESS"]);
    expect(inputs.find((input) => (input["humanTask"] as JsonObject)["triggerType"] === "IN_PROGRESS")).toEqual({
      channel: "#refunds",
      humanTask: { triggerType: "IN_PROGRESS", taskId, taskRefName: "approve", workflowId, state: "IN_PROGRESS", assignee: { user: "admin", userType: "CONDUCTOR_USER" }, claimant: { user: "admin", userType: "CONDUCTOR_USER" } },
    });
    await apiOk("POST", `/api/human/tasks/${taskId}/update?complete=true`, { approved: true });
    expect((await waitFor(workflowId, ["COMPLETED"])).status).toBe("COMPLETED");
  });
});

describe("user forms (/api/human/template)", () => {
  const form = (name: string, extra: JsonObject = {}) => ({
    name,
    jsonSchema: { type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"] },
    templateUI: { type: "VerticalLayout", elements: [{ type: "Control", scope: "#/properties/approved" }] },
    ...extra,
  });

  it("saves versions as Orkes does, lists, reads and deletes them", async () => {
    const name = unique("refund form");
    expect(await apiOk("POST", "/api/human/template", form(name))).toMatchObject({ name, version: 1, createdBy: "admin" });
    expect(await apiOk("POST", "/api/human/template?newVersion=true", form(name))).toMatchObject({ version: 2 });
    // Without newVersion the latest is replaced; a version named is saved as that version.
    expect(await apiOk("POST", "/api/human/template", form(name, { templateUI: { type: "Group" } }))).toMatchObject({ version: 2, templateUI: { type: "Group" } });
    expect(await apiOk("POST", "/api/human/template/bulk", [form(name, { version: 5 })])).toMatchObject([{ version: 5 }]);
    // The latest first, as Orkes lists them.
    expect((await apiOk<JsonObject[]>("GET", `/api/human/template?name=${encodeURIComponent(name)}`)).map((saved) => saved["version"])).toEqual([5, 2, 1]);
    // Version 0 (a client's number left unset) is none: the latest is replaced, and a listing takes every version.
    expect(await apiOk("POST", "/api/human/template", form(name, { version: 0, templateUI: { type: "Zero" } }))).toMatchObject({ version: 5, templateUI: { type: "Zero" } });
    expect((await apiOk<JsonObject[]>("GET", `/api/human/template?name=${encodeURIComponent(name)}&version=0`)).map((saved) => saved["version"])).toEqual([5, 2, 1]);
    expect(await apiOk("GET", `/api/human/template/${encodeURIComponent(name)}/2`)).toMatchObject({ version: 2, templateUI: { type: "Group" } });
    expect((await api("DELETE", `/api/human/template/${encodeURIComponent(name)}/2`)).status).toBe(200);
    expect((await api("GET", `/api/human/template/${encodeURIComponent(name)}/2`)).status).toBe(404);
    expect((await api("DELETE", `/api/human/template/${encodeURIComponent(name)}`)).status).toBe(200);
    expect(await apiOk("GET", `/api/human/template?name=${encodeURIComponent(name)}`)).toEqual([]);
  });

  // https://orkes.io/content/reference-docs/api/human-tasks/save-task-ui-template: its example body is a form as read
  // back (times, and createdBy as "USER:<email>"); those are the server's to set.
  it("saves Orkes' example form as it is sent, its times and authors the server's own", async () => {
    const name = unique("someForm");
    const example = {
      createTime: 1736938081924,
      updateTime: 1736938081924,
      createdBy: "USER:user@example.com",
      updatedBy: "USER:user@example.com",
      name,
      jsonSchema: { $schema: "http://json-schema.org/draft-07/schema", properties: { vegetable: { type: "string", enum: ["potatoes", "carrots", "celery"] } } },
      templateUI: { type: "VerticalLayout", elements: [{ type: "Control", scope: "#/properties/vegetable", label: "Pick one", options: {} }] },
    };
    const saved = await apiOk<JsonObject>("POST", "/api/human/template?newVersion=false", example);
    expect(saved).toMatchObject({ name, version: 1, jsonSchema: example.jsonSchema, templateUI: example.templateUI, createdBy: "admin", updatedBy: "admin" });
    expect(saved["createTime"]).toBeGreaterThan(example.createTime);
    expect(await apiOk("GET", `/api/human/template/${encodeURIComponent(name)}/1`)).toEqual(saved);
  });

  it("newVersion=true saves the next version whatever version the form names (the JavaScript client always names one), leaving that version as it was", async () => {
    const name = unique("versioned form");
    expect(await apiOk("POST", "/api/human/template", form(name, { version: 1 }))).toMatchObject({ version: 1 });
    expect(await apiOk("POST", "/api/human/template?newVersion=true", form(name, { version: 1, templateUI: { type: "Second" } }))).toMatchObject({ version: 2, templateUI: { type: "Second" } });
    expect(await apiOk("POST", "/api/human/template/bulk?newVersion=true", [form(name, { version: 1, templateUI: { type: "Third" } }), form(name, { version: 7, templateUI: { type: "Fourth" } })])).toMatchObject([
      { version: 3, templateUI: { type: "Third" } },
      { version: 4, templateUI: { type: "Fourth" } },
    ]);
    expect(await apiOk("GET", `/api/human/template/${encodeURIComponent(name)}/1`)).toMatchObject({ version: 1, templateUI: { type: "VerticalLayout" } });
    expect((await apiOk<JsonObject[]>("GET", `/api/human/template?name=${encodeURIComponent(name)}`)).map((saved) => saved["version"])).toEqual([4, 3, 2, 1]);
  });

  it("refuses a form whose schema cannot be checked, or whose name is not one, writing nothing; users without TASK_WRITE may read but not save", async () => {
    const before = await rowCount("human_templates");
    const bad = await api("POST", "/api/human/template", form(unique("bad"), { jsonSchema: { type: "object", properties: { x: { $ref: "https://elsewhere.example/s.json" } } } }));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ validationErrors: [{ path: "jsonSchema" }] });
    expect((await api("POST", "/api/human/template/bulk", [form(unique("good")), form("123")])).status).toBe(400);
    // `.` and `..` would be saved but never reached by name: a URL resolves them away (`/api/human/template/../1` is `/api/human/1`).
    for (const name of [".", ".."]) {
      const dotted = await api("POST", "/api/human/template", form(name));
      expect(dotted.status).toBe(400);
      expect(await dotted.json()).toMatchObject({ validationErrors: [{ path: "name" }] });
    }
    expect((await api("POST", "/api/human/template/bulk", [form(unique("good")), form("..")])).status).toBe(400);
    // An empty list is the caller's mistake too (it was a 500: a batch of no statements).
    const empty = await api("POST", "/api/human/template/bulk", []);
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ message: "must hold at least one form" }] });
    expect(await rowCount("human_templates")).toBe(before);
    const reader = await createUser(unique("reader"));
    expect((await call("GET", "/api/human/template", orkes(reader.token))).status).toBe(200);
    expect((await call("POST", "/api/human/template", orkes(reader.token), form(unique("mine")))).status).toBe(403);
    expect(await rowCount("human_templates")).toBe(before);
  });

  it("serves a form's tags by name as Orkes does (PUT adds or revalues by key, DELETE removes by key and value), on every version, refusing bad bodies and non-writers with nothing changed", async () => {
    const name = unique("tagged form");
    const path = `/api/human/template/${encodeURIComponent(name)}/tags`;
    // No form of that name: 404, as reading or deleting it (it was a 501 for every method).
    expect((await api("GET", path)).status).toBe(404);
    expect((await api("PUT", path, [{ key: "team", value: "ops" }])).status).toBe(404);
    await apiOk("POST", "/api/human/template", form(name, { tags: [{ key: "team", value: "ops" }, { key: "env", value: "dev" }] }));
    await apiOk("POST", "/api/human/template?newVersion=true", form(name, { tags: [{ key: "team", value: "ops" }] }));
    expect(await apiOk("GET", path)).toEqual([{ key: "team", value: "ops" }]);
    // A key held takes the value given; a key named twice, the last.
    expect((await api("PUT", path, [{ key: "team", value: "billing" }, { key: "tier", value: "1" }, { key: "tier", value: "gold" }])).status).toBe(200);
    expect(await apiOk("GET", path)).toEqual([{ key: "team", value: "billing" }, { key: "tier", value: "gold" }]);
    expect(await apiOk("GET", `/api/human/template/${encodeURIComponent(name)}/1`)).toMatchObject({ tags: [{ key: "env", value: "dev" }, { key: "team", value: "billing" }, { key: "tier", value: "gold" }], updatedBy: "admin" });
    const found = () => apiOk<Array<{ id: string }>>("GET", `/api/metadata/tags/resources?tagKey=team&tagValue=billing&resourceType=USER_FORM_TEMPLATE`);
    expect((await found()).filter((resource) => resource.id.startsWith(`${name}/`)).map((resource) => resource.id)).toEqual([`${name}/1`, `${name}/2`]);
    // DELETE removes a tag by key and value: a value the form does not hold removes nothing.
    expect((await api("DELETE", path, [{ key: "team", value: "billing" }, { key: "tier", value: "silver" }])).status).toBe(200);
    expect(await apiOk("GET", path)).toEqual([{ key: "tier", value: "gold" }]);
    expect(await apiOk("GET", `/api/human/template/${encodeURIComponent(name)}/1`)).toMatchObject({ tags: [{ key: "env", value: "dev" }, { key: "tier", value: "gold" }] });
    expect((await found()).filter((resource) => resource.id.startsWith(`${name}/`))).toEqual([]);
    // Refused, changing nothing: not a list of {key, value}, no body, past 100 tags on a version, a caller who may not save forms.
    const snapshot = async () => apiOk<JsonObject[]>("GET", `/api/human/template?name=${encodeURIComponent(name)}`);
    const before = await snapshot();
    for (const bad of [{ key: "team", value: "x" }, [{ key: "team" }], [{ key: "team", value: 5 }]]) {
      const refused = await api("PUT", path, bad);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "VALIDATION_ERROR" });
    }
    expect((await api("DELETE", path)).status).toBe(400);
    // Version 1 holds two tags: 99 more keys would give it 101, so no version takes them.
    const many = Array.from({ length: 99 }, (_, index) => ({ key: `k${index}`, value: "v" }));
    const tooMany = await api("PUT", path, many);
    expect(tooMany.status).toBe(400);
    expect(await tooMany.json()).toMatchObject({ error: "VALIDATION_ERROR", validationErrors: [{ message: expect.stringContaining("more than 100 tags") }] });
    const reader = await createUser(unique("reader"));
    expect(await (await call("GET", path, orkes(reader.token))).json()).toEqual([{ key: "tier", value: "gold" }]);
    expect((await call("PUT", path, orkes(reader.token), [{ key: "team", value: "mine" }])).status).toBe(403);
    expect((await call("DELETE", path, orkes(reader.token), [{ key: "tier", value: "gold" }])).status).toBe(403);
    // A change that changes nothing (no tags given, a tag not held removed) writes nothing: not who updated it, nor when.
    const writer = await createUser(unique("form-writer"), { directPermissions: [{ action: "TASK_WRITE", scope: "*" }] });
    expect((await call("PUT", path, orkes(writer.token), [])).status).toBe(200);
    expect((await call("DELETE", path, orkes(writer.token), [])).status).toBe(200);
    expect((await call("DELETE", path, orkes(writer.token), [{ key: "tier", value: "silver" }])).status).toBe(200);
    // Nor does adding a tag every version already holds.
    expect((await call("PUT", path, orkes(writer.token), [{ key: "tier", value: "gold" }])).status).toBe(200);
    expect(await snapshot()).toEqual(before);
  });

  it("checks a submitted form against the task's user form (its latest version), and shows the form with the task", async () => {
    const formName = unique("approval form");
    await apiOk("POST", "/api/human/template", form(formName));
    const name = unique("refund");
    await registerApproval(name, { userFormTemplate: { name: formName, version: 0 } });
    const workflowId = await startWorkflow(name, { amount: 5 });
    const taskId = await humanTaskOf(workflowId);
    expect(await apiOk("GET", `/api/human/tasks/${taskId}?withTemplate=true`)).toMatchObject({ humanTaskDef: { userFormTemplate: { name: formName }, fullTemplate: { name: formName, version: 1 } } });
    expect(await apiOk("GET", `/api/human/template/${taskId}`)).toMatchObject({ name: formName, version: 1 });
    // As https://orkes.io/content/reference-docs/api/human-tasks/claim-task-conductor-user claims it: the form comes
    // with the claimed task when asked for.
    expect(await apiOk("POST", `/api/human/tasks/${taskId}/claim?overrideAssignment=false&withTemplate=true`)).toMatchObject({ state: "IN_PROGRESS", claimant: { user: "admin" }, humanTaskDef: { fullTemplate: { name: formName, version: 1 } } });
    const invalid = await api("POST", `/api/human/tasks/${taskId}/update?complete=true`, { approved: "yes" });
    expect(invalid.status).toBe(400);
    expect((await invalid.json()) as JsonObject).toMatchObject({ message: expect.stringContaining("output.approved") });
    expect((await getWorkflow(workflowId)).tasks[0]).toMatchObject({ status: "IN_PROGRESS", outputData: {} });
    await apiOk("POST", `/api/human/tasks/${taskId}/update?complete=true`, { approved: true });
    expect((await waitFor(workflowId, ["COMPLETED"])).tasks[0]!.outputData).toEqual({ approved: true });
  });
});

describe("the human task list's plan", () => {
  it("finds an inbox's tasks (its user's, its groups', those they claimed, the open ones they may read) and tasks by state through indexes, not by reading every human task ever written", async () => {
    const userId = unique("inbox-reader");
    const reader = await createUser(userId, { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:refund*" }] });
    await group(unique("inbox-group"), [userId]);
    const searches: JsonObject[] = [{ searchType: "INBOX" }, { searchType: "INBOX", states: ["ASSIGNED", "IN_PROGRESS"] }];
    const inbox = await boundStatementsOf(/FROM human_tasks/, async () => {
      for (const search of searches) await as(reader.token).search(search);
      expect((await as(reader.token).get("/api/human/tasks/getTaskDisplayNames?searchType=INBOX")).status).toBe(200);
    });
    const admin = await boundStatementsOf(/FROM human_tasks/, () => apiOk("POST", "/api/human/tasks/search", { searchType: "ADMIN", states: ["ASSIGNED"] }));
    // A page and its count for each search, and the display names.
    expect(inbox).toHaveLength(2 * searches.length + 1);
    expect(admin).toHaveLength(2);
    for (const read of inbox) {
      const steps = await queryPlan(read);
      expect(steps, read.sql).not.toMatch(/SCAN human_tasks/);
      // The open tasks a reader may claim: by their state.
      expect(steps, read.sql).toContain("human_tasks_by_state");
    }
    for (const read of admin) expect(await queryPlan(read), read.sql).toMatch(/SEARCH human_tasks USING (COVERING )?INDEX human_tasks_by_state \(state=\?\)/);
  });

  it("finds the tasks of some executions in one state through the executions' index, not by walking every task in that state (the list of one state is an equality its index serves with the order)", async () => {
    // 2,000 ASSIGNED tasks, two of them (and one IN_PROGRESS) of execution ht-narrow-wf.
    const prefix = unique("ht-narrow");
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
       INSERT INTO human_tasks (task_id, workflow_id, workflow_name, task_ref_name, definition_name, display_name, state, created_on, updated_on, entry)
       SELECT printf('%s-%05d', ?1, i), CASE WHEN i IN (7, 1500, 1999) THEN ?1 || '-wf' ELSE printf('%s-wf-%05d', ?1, i) END, ?1, 'ask', ?1, ?1,
         CASE WHEN i = 1999 THEN 'IN_PROGRESS' ELSE 'ASSIGNED' END, 1000 + i, 1000 + i, json_object('taskId', printf('%s-%05d', ?1, i)) FROM n`,
    )
      .bind(prefix)
      .run();
    try {
      let found: { totalHits: number; results: Entry[] } | undefined;
      const [count, page] = await boundStatementsOf(/FROM human_tasks/, async () => {
        found = await apiOk("POST", "/api/human/tasks/search", { searchType: "ADMIN", states: ["ASSIGNED"], workflowIds: [`${prefix}-wf`] });
      });
      expect(found!.totalHits).toBe(2);
      expect(found!.results.map((entry) => entry.taskId)).toEqual([`${prefix}-01500`, `${prefix}-00007`]);
      for (const read of [count!, page!]) {
        expect(await queryPlan(read), read.sql).toContain("USING INDEX human_tasks_by_workflow (workflow_id=?)");
        expect((await env.DB.prepare(read.sql).bind(...read.bindings).all()).meta.rows_read, read.sql).toBeLessThan(50);
      }
    } finally {
      await env.DB.prepare("DELETE FROM human_tasks WHERE workflow_name = ?").bind(prefix).run();
    }
  });
});

describe("the human task list at a large tenant's size (D1 reads, and bills, every row a statement reads)", () => {
  it("counts at most 10,000 hits (or the page's end plus one), as the workflow and task searches do: the exact count below, pages past it still answer", async () => {
    // 10,050 tasks of one workflow name (no index on it: the count walks the table until it has counted enough).
    const prefix = unique("ht-many");
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10050)
       INSERT INTO human_tasks (task_id, workflow_id, workflow_name, task_ref_name, definition_name, display_name, state, created_on, updated_on, entry)
       SELECT printf('%s-%05d', ?1, i), printf('%s-wf-%05d', ?1, i), ?1, 'ask', ?1, ?1, 'ASSIGNED', 1000 + i, 1000 + i, json_object('taskId', printf('%s-%05d', ?1, i)) FROM n`,
    )
      .bind(prefix)
      .run();
    // The rows other tests of this file left, which a walk of the table may pass before the 10,000th of these.
    const others = (await env.DB.prepare("SELECT COUNT(*) AS n FROM human_tasks WHERE workflow_name <> ?").bind(prefix).first<{ n: number }>())!.n;
    try {
      await expectCountStopsAt10000(prefix, others, async (start) => {
        const found = await apiOk<{ totalHits: number; results: Entry[] }>("POST", "/api/human/tasks/search", { searchType: "ADMIN", workflowNames: [prefix], start, size: 15 });
        return { totalHits: found.totalHits, ids: found.results.map((entry) => entry.taskId) };
      });
    } finally {
      await env.DB.prepare("DELETE FROM human_tasks WHERE workflow_name = ?").bind(prefix).run();
    }
  });
});
