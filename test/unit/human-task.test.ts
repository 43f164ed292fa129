import { describe, expect, it } from "vitest";
import { createExecution, settleOverdue, type ExecutionEvent } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import type { JsonObject, JsonValue, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { humanTaskEntry } from "../../src/engine/tasks/human/entry";
import { ASSIGNMENTS_EXHAUSTED, humanStateOf, type HumanAction, type HumanCaller } from "../../src/engine/tasks/human/progress";
import { humanSettingsOf } from "../../src/engine/tasks/human/settings";
import { env, latestNamed, refusal, registrationErrors, startedWith } from "./engine-env";

// The decider's part of Orkes' human tasks: assignments, escalation, claims and the form, the engine alone.

const MINUTE = 60_000;
const human = (settings: JsonObject, extra: Partial<WorkflowTaskDef> = {}): WorkflowTaskDef => ({
  name: "approve",
  taskReferenceName: "approve",
  type: "HUMAN",
  inputParameters: { amount: "${workflow.input.amount}", __humanTaskDefinition: settings },
  ...extra,
});
const user = (id: string) => ({ user: id, userType: "CONDUCTOR_USER" as const });
const group = (id: string) => ({ user: id, userType: "CONDUCTOR_GROUP" as const });
const caller = (userId: string, fields: Partial<HumanCaller> = {}): HumanCaller => ({ userId, groups: [], manager: false, reader: false, ...fields });
const act = (state: WorkflowExecution, by: HumanCaller, action: HumanAction, now = 2_000) =>
  decide(state, { type: "humanAction", taskId: latestNamed(state, "approve").taskId, caller: by, action }, env(now)).state;
const actEvent = (state: WorkflowExecution, by: HumanCaller, action: HumanAction): ExecutionEvent => ({ type: "humanAction", taskId: latestNamed(state, "approve").taskId, caller: by, action });
const fill = (state: WorkflowExecution, by: HumanCaller, output: JsonObject, complete: boolean, formSchema?: JsonObject): ExecutionEvent => ({
  type: "humanUpdate",
  taskId: latestNamed(state, "approve").taskId,
  caller: by,
  output,
  complete,
  ...(formSchema === undefined ? {} : { formSchema }),
});
const standing = (state: WorkflowExecution) => {
  const task = latestNamed(state, "approve");
  return { state: humanStateOf(task), assignee: task.human?.assignee?.user, claimant: task.human?.claimant?.user, timeoutAt: task.timeoutAt };
};

const chain = {
  displayName: "Approve the refund",
  assignments: [
    { assignee: user("ada"), slaMinutes: 10 },
    { assignee: group("finance"), slaMinutes: 30 },
  ],
};

describe("assignments and their escalation", () => {
  it("starts assigned to the first assignee, with that assignment's minutes as its deadline", () => {
    const state = startedWith("refunds", [human(chain)], { amount: 12 }, 1_000).state;
    expect(standing(state)).toEqual({ state: "ASSIGNED", assignee: "ada", claimant: undefined, timeoutAt: 1_000 + 10 * MINUTE });
    expect(latestNamed(state, "approve")).toMatchObject({ status: "IN_PROGRESS", inputData: { amount: 12 } });
  });

  it("moves down the chain as each assignment runs out unclaimed; after the last, LEAVE_OPEN leaves it open to anyone", () => {
    let state = startedWith("refunds", [human(chain)], {}, 1_000).state;
    state = settleOverdue(state, env(1_000 + 10 * MINUTE)).state;
    expect(standing(state)).toEqual({ state: "ASSIGNED", assignee: "finance", claimant: undefined, timeoutAt: 1_000 + 40 * MINUTE });
    state = settleOverdue(state, env(1_000 + 40 * MINUTE)).state;
    expect(standing(state)).toEqual({ state: "ASSIGNED", assignee: undefined, claimant: undefined, timeoutAt: undefined });
    expect(state.status).toBe("RUNNING");
  });

  it("with TERMINATE, fails the task (and the workflow) when the last assignment runs out", () => {
    let state = startedWith("refunds", [human({ ...chain, assignmentCompletionStrategy: "TERMINATE" })], {}, 1_000).state;
    state = settleOverdue(state, env(1_000 + 10 * MINUTE)).state;
    state = settleOverdue(state, env(1_000 + 40 * MINUTE)).state;
    expect(latestNamed(state, "approve")).toMatchObject({ status: "FAILED", reasonForIncompletion: ASSIGNMENTS_EXHAUSTED });
    expect(humanStateOf(latestNamed(state, "approve"))).toBe("DELETED");
    expect(state.status).toBe("FAILED");
  });

  it("an optional task whose last assignment runs out is DELETED for the human lists, not COMPLETED, and fires no COMPLETED trigger; its workflow goes on", () => {
    const approved = { triggerType: "COMPLETED", startWorkflowRequest: { name: "on_approved", input: {} } };
    const start = startedWith("refunds", [human({ ...chain, assignmentCompletionStrategy: "TERMINATE", taskTriggers: [approved] }, { optional: true })], {}, 1_000);
    let state = settleOverdue(start.state, env(1_000 + 10 * MINUTE)).state;
    const ended = settleOverdue(state, env(1_000 + 40 * MINUTE));
    state = ended.state;
    expect(latestNamed(state, "approve")).toMatchObject({ status: "COMPLETED_WITH_ERRORS", reasonForIncompletion: ASSIGNMENTS_EXHAUSTED });
    expect(humanStateOf(latestNamed(state, "approve"))).toBe("DELETED");
    expect(JSON.stringify(ended.effects)).not.toContain("on_approved");
    expect(state.status).toBe("COMPLETED");
  });

  it("does not escalate a claimed task, and takes up the count again when it is released", () => {
    let state = startedWith("refunds", [human(chain)], {}, 1_000).state;
    state = act(state, caller("ada"), { kind: "claim", override: false }, 2_000);
    expect(standing(state)).toEqual({ state: "IN_PROGRESS", assignee: "ada", claimant: "ada", timeoutAt: undefined });
    state = settleOverdue(state, env(1_000 + 20 * MINUTE)).state;
    expect(standing(state).assignee).toBe("ada");
    // Released after its ten minutes: it moves on at once.
    state = act(state, caller("ada"), { kind: "release" }, 1_000 + 20 * MINUTE);
    expect(standing(state)).toMatchObject({ state: "ASSIGNED", claimant: undefined, timeoutAt: 1_000 + 20 * MINUTE });
    state = settleOverdue(state, env(1_000 + 20 * MINUTE)).state;
    expect(standing(state)).toMatchObject({ assignee: "finance" });
  });

  it("with no assignments, is open to anyone who may read its workflow, and never escalates", () => {
    const state = startedWith("refunds", [human({})], {}, 1_000).state;
    expect(standing(state)).toEqual({ state: "ASSIGNED", assignee: undefined, claimant: undefined, timeoutAt: undefined });
    expect(refusal(state, actEvent(state, caller("eve"), { kind: "claim", override: false }), 2_000).kind).toBe("FORBIDDEN");
    expect(standing(act(state, caller("bob", { reader: true }), { kind: "claim", override: false })).claimant).toBe("bob");
  });

  it("takes the official client's single assignee as a chain of one without a limit", () => {
    const state = startedWith("refunds", [human({ assignee: { user: "ops", userType: "EXTERNAL_GROUP" } })], {}, 1_000).state;
    expect(latestNamed(state, "approve").human).toMatchObject({ assignments: [{ assignee: { user: "ops", userType: "EXTERNAL_GROUP" }, slaMinutes: 0 }], assignmentIndex: 0 });
  });

  it("resolves expressions in the settings as it starts, and fails the task for good when they resolve to nonsense", () => {
    const settings = { assignments: [{ assignee: { user: "${workflow.input.approver}", userType: "CONDUCTOR_USER" }, slaMinutes: 5 }] };
    expect(standing(startedWith("refunds", [human(settings)], { approver: "ada" }).state).assignee).toBe("ada");
    const failed = startedWith("refunds", [human(settings)], {}).state;
    expect(latestNamed(failed, "approve")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    expect(latestNamed(failed, "approve").reasonForIncompletion).toContain("__humanTaskDefinition.assignments[0].assignee.user");
  });
});

describe("claims", () => {
  it("lets the assignee claim, a member of the assigned group too, and nobody else without overriding", () => {
    let state = startedWith("refunds", [human({ assignments: [{ assignee: group("finance"), slaMinutes: 0 }] })]).state;
    const outsider = refusal(state, actEvent(state, caller("eve", { reader: true }), { kind: "claim", override: false }), 2_000);
    expect(outsider.kind).toBe("FORBIDDEN");
    expect(outsider.message).toContain("assigned to group finance");
    state = act(state, caller("bob", { groups: ["finance"] }), { kind: "claim", override: false });
    expect(standing(state)).toMatchObject({ state: "IN_PROGRESS", claimant: "bob", assignee: "finance" });
    // Claimed: a second claim is a conflict until it is released.
    expect(refusal(state, actEvent(state, caller("carl", { groups: ["finance"] }), { kind: "claim", override: false }), 2_500).kind).toBe("CONFLICT");
  });

  it("lets one who may complete the task take it over with overrideAssignment, becoming its assignee", () => {
    let state = startedWith("refunds", [human(chain)]).state;
    state = act(state, caller("ada"), { kind: "claim", override: false });
    expect(refusal(state, actEvent(state, caller("eve"), { kind: "claim", override: true }), 2_500).kind).toBe("FORBIDDEN");
    state = act(state, caller("boss", { manager: true }), { kind: "claim", override: true }, 3_000);
    expect(standing(state)).toMatchObject({ state: "IN_PROGRESS", claimant: "boss", assignee: "boss" });
    expect(latestNamed(state, "approve").human?.updatedBy).toBe("boss");
  });

  it("claims for a user of the system driving the UI only on a manager's call, matching that user or trusting its group", () => {
    let state = startedWith("refunds", [human({ assignments: [{ assignee: { user: "reviewers", userType: "EXTERNAL_GROUP" }, slaMinutes: 0 }] })]).state;
    expect(refusal(state, actEvent(state, caller("ada"), { kind: "claim", override: false }), 2_000).kind).toBe("FORBIDDEN");
    expect(refusal(state, actEvent(state, caller("app"), { kind: "claim", override: false, forUser: { userId: "x@corp", groups: [] } }), 2_000).kind).toBe("FORBIDDEN");
    state = act(state, caller("app", { manager: true }), { kind: "claim", override: false, forUser: { userId: "x@corp", groups: [] } });
    expect(latestNamed(state, "approve").human?.claimant).toEqual({ user: "x@corp", userType: "EXTERNAL_USER" });
    expect(latestNamed(state, "approve").human?.assignee).toEqual({ user: "reviewers", userType: "EXTERNAL_GROUP" });
    // With overrideAssignment the claimant becomes the assignee, though the group fitted (Orkes' docs' example).
    let overridden = startedWith("refunds", [human({ assignments: [{ assignee: { user: "abc", userType: "EXTERNAL_GROUP" }, slaMinutes: 0 }] })]).state;
    overridden = act(overridden, caller("app", { manager: true }), { kind: "claim", override: true, forUser: { userId: "abc", groups: [] } });
    expect(latestNamed(overridden, "approve").human?.assignee).toEqual({ user: "abc", userType: "EXTERNAL_USER" });
  });

  it("releases only for whoever claimed it or a manager", () => {
    let state = startedWith("refunds", [human(chain)]).state;
    expect(refusal(state, actEvent(state, caller("ada"), { kind: "release" }), 2_000).kind).toBe("CONFLICT");
    state = act(state, caller("ada"), { kind: "claim", override: false });
    expect(refusal(state, actEvent(state, caller("bob", { reader: true }), { kind: "release" }), 2_500).kind).toBe("FORBIDDEN");
    expect(standing(act(state, caller("boss", { manager: true }), { kind: "release" }, 3_000)).claimant).toBeUndefined();
  });
});

describe("autoClaim (Orkes' setting)", () => {
  it("has a user first assignee claim the task as it starts: IN_PROGRESS, no escalation; they fill it in unclaimed by hand; released, it escalates from when its assignment began", () => {
    const settings = { autoClaim: true, assignments: [{ assignee: user("ada"), slaMinutes: 10 }, { assignee: group("finance"), slaMinutes: 0 }] };
    let state = startedWith("refunds", [human(settings), { name: "after", taskReferenceName: "after", type: "NOOP" }], {}, 1_000).state;
    expect(standing(state)).toEqual({ state: "IN_PROGRESS", assignee: "ada", claimant: "ada", timeoutAt: undefined });
    expect(latestNamed(state, "approve").human?.claimant).toEqual(user("ada"));
    // Claimed: its minutes do not run out; it cannot be skipped or reassigned until released.
    expect(standing(settleOverdue(state, env(1_000 + 20 * MINUTE)).state)).toMatchObject({ state: "IN_PROGRESS", claimant: "ada" });
    expect(refusal(state, actEvent(state, caller("ada"), { kind: "skip" }), 2_000).kind).toBe("CONFLICT");
    expect(refusal(state, actEvent(state, caller("ada"), { kind: "reassign", assignments: [{ assignee: user("bob"), slaMinutes: 0 }] }), 2_000).kind).toBe("CONFLICT");
    // Someone else may not fill it in, even one who may read its workflow; ada saves it without claiming it first.
    expect(refusal(state, fill(state, caller("eve", { reader: true }), { note: "x" }, false), 2_000).kind).toBe("FORBIDDEN");
    state = decide(state, fill(state, caller("ada"), { note: "checked" }, false), env(2_000)).state;
    expect(latestNamed(state, "approve")).toMatchObject({ status: "IN_PROGRESS", outputData: { note: "checked" } });
    // Released after its minutes ran out, it moves on at once, as a task claimed by hand does.
    const released = act(state, caller("ada"), { kind: "release" }, 1_000 + 20 * MINUTE);
    expect(standing(released)).toEqual({ state: "ASSIGNED", assignee: "ada", claimant: undefined, timeoutAt: 1_000 + 20 * MINUTE });
    expect(standing(settleOverdue(released, env(1_000 + 20 * MINUTE)).state)).toEqual({ state: "ASSIGNED", assignee: "finance", claimant: undefined, timeoutAt: undefined });
    state = decide(state, fill(state, caller("ada"), { approved: true }, true), env(4_000)).state;
    expect(latestNamed(state, "approve")).toMatchObject({ status: "COMPLETED", outputData: { note: "checked", approved: true } });
    expect(state.status).toBe("COMPLETED");
  });

  it("has a group first assignee claim nothing: the task starts ASSIGNED to the group, its minutes running; a member claims it as usual, and no other member fills it in", () => {
    const settings = { autoClaim: true, assignments: [{ assignee: group("finance"), slaMinutes: 10 }, { assignee: user("cfo"), slaMinutes: 0 }] };
    let state = startedWith("refunds", [human(settings)], {}, 1_000).state;
    expect(standing(state)).toEqual({ state: "ASSIGNED", assignee: "finance", claimant: undefined, timeoutAt: 1_000 + 10 * MINUTE });
    expect(refusal(state, fill(state, caller("bob", { groups: ["finance"] }), { note: "x" }, false), 2_000).kind).toBe("CONFLICT");
    state = act(state, caller("bob", { groups: ["finance"] }), { kind: "claim", override: false });
    expect(standing(state)).toMatchObject({ state: "IN_PROGRESS", assignee: "finance", claimant: "bob" });
    expect(refusal(state, fill(state, caller("carl", { groups: ["finance"] }), { note: "x" }, false), 3_000).kind).toBe("FORBIDDEN");
    expect(refusal(state, actEvent(state, caller("carl", { groups: ["finance"] }), { kind: "release" }), 3_000).kind).toBe("FORBIDDEN");
    // An external group claims nothing either; an external user claims it, to be filled in through its system's calls.
    const external = (userType: string) => ({ autoClaim: true, assignments: [{ assignee: { user: "pat@example.com", userType }, slaMinutes: 0 }] });
    expect(standing(startedWith("refunds", [human(external("EXTERNAL_GROUP"))]).state)).toMatchObject({ state: "ASSIGNED", claimant: undefined });
    const claimed = startedWith("refunds", [human(external("EXTERNAL_USER"))]).state;
    expect(latestNamed(claimed, "approve").human?.claimant).toEqual({ user: "pat@example.com", userType: "EXTERNAL_USER" });
    expect(refusal(claimed, fill(claimed, caller("pat@example.com", { reader: true }), { note: "x" }, false), 2_000).kind).toBe("FORBIDDEN");
    expect(latestNamed(decide(claimed, fill(claimed, caller("app", { manager: true }), { note: "x" }, true), env(2_000)).state, "approve").status).toBe("COMPLETED");
  });

  it("claims nothing for a task assigned to no one, and is refused at registration when not a boolean", () => {
    const state = startedWith("refunds", [human({ autoClaim: true })]).state;
    expect(standing(state)).toEqual({ state: "ASSIGNED", assignee: undefined, claimant: undefined, timeoutAt: undefined });
    expect(standing(startedWith("refunds", [human({ ...chain, autoClaim: false })]).state)).toMatchObject({ state: "ASSIGNED", claimant: undefined });
    expect(registrationErrors([human({ ...chain, autoClaim: "yes" })])).toEqual([
      "tasks[0].inputParameters.__humanTaskDefinition.autoClaim: autoClaim must be true or false, but received string \"yes\"",
    ]);
    expect(registrationErrors([human({ ...chain, autoClaim: "${workflow.input.claim}" })])).toEqual([]);
    // As Jackson reads Orkes' Boolean: its text too (an expression may resolve to it).
    expect(standing(startedWith("refunds", [human({ ...chain, autoClaim: "${workflow.input.claim}" })], { claim: "true" }).state)).toMatchObject({ state: "IN_PROGRESS", claimant: "ada" });
    expect(standing(startedWith("refunds", [human({ ...chain, autoClaim: "" })]).state)).toMatchObject({ state: "ASSIGNED", claimant: undefined });
    // Jackson's null ("null", blank) is false, and a whole number 0 false, any other true.
    expect(registrationErrors([human({ ...chain, autoClaim: " null " })])).toEqual([]);
    expect(standing(startedWith("refunds", [human({ ...chain, autoClaim: "null" })]).state)).toMatchObject({ state: "ASSIGNED", claimant: undefined });
    expect(standing(startedWith("refunds", [human({ ...chain, autoClaim: "${workflow.input.claim}" })], { claim: 1 }).state)).toMatchObject({ state: "IN_PROGRESS", claimant: "ada" });
  });

  it("fires PENDING then IN_PROGRESS as the task starts claimed", () => {
    const notify = (triggerType: string) => ({ triggerType, startWorkflowRequest: { name: "notify" } });
    const started = startedWith("refunds", [human({ ...chain, autoClaim: true, taskTriggers: ["PENDING", "ASSIGNED", "IN_PROGRESS", "CLAIMANT_CHANGED"].map(notify) })], {}, 1_000);
    const fired = started.effects.flatMap((effect) => (effect.kind === "startFailureWorkflow" && "start" in effect ? [(effect as { start: { trigger?: string; input: JsonObject } }).start] : []));
    expect(fired.map((start) => start.trigger?.split(" ").pop())).toEqual(["PENDING", "IN_PROGRESS"]);
    expect(fired[1]!.input).toMatchObject({ humanTask: { state: "IN_PROGRESS", assignee: user("ada"), claimant: user("ada") } });
  });

  it("reads an autoClaim that is no boolean, in a task started or a definition registered before autoClaim was read, as false: the task starts and fires its triggers as it did", () => {
    const notify = (triggerType: string) => ({ triggerType, startWorkflowRequest: { name: "notify" } });
    const firedBy = (effects: ReadonlyArray<{ kind: string }>) =>
      effects.flatMap((effect) => (effect.kind === "startFailureWorkflow" && "start" in effect ? [(effect as { start: { trigger?: string } }).start.trigger?.split(" ").pop()] : []));
    const taskTriggers = ["CLAIMANT_CHANGED", "COMPLETED"].map(notify);
    // A definition registered with one: it starts ASSIGNED, as before, not failed.
    const registered = startedWith("refunds", [human({ ...chain, autoClaim: "yes", taskTriggers })], {}, 1_000).state;
    expect(standing(registered)).toEqual({ state: "ASSIGNED", assignee: "ada", claimant: undefined, timeoutAt: 1_000 + 10 * MINUTE });
    // A task waiting across the deploy, started when autoClaim was not read: claimed and completed, it fires its triggers.
    let state = startedWith("refunds", [human({ ...chain, taskTriggers })], {}, 1_000).state;
    const waiting = latestNamed(state, "approve");
    const stored = { ...waiting, inputData: { ...waiting.inputData, __humanTaskDefinition: { ...(waiting.inputData["__humanTaskDefinition"] as JsonObject), autoClaim: 0.5 } } };
    state = { ...state, tasks: state.tasks.map((task) => (task === waiting ? stored : task)) };
    const claimed = decide(state, actEvent(state, caller("ada"), { kind: "claim", override: false }), env(2_000));
    expect(firedBy(claimed.effects)).toEqual(["CLAIMANT_CHANGED"]);
    const completed = decide(claimed.state, fill(claimed.state, caller("ada"), { approved: true }, true), env(3_000));
    expect(firedBy(completed.effects)).toEqual(["COMPLETED"]);
  });
});

describe("reassigning, skipping and deleting", () => {
  it("reassigns an unclaimed task to a new chain, by its assignee or a manager", () => {
    let state = startedWith("refunds", [human(chain)], {}, 1_000).state;
    expect(refusal(state, actEvent(state, caller("bob"), { kind: "reassign", assignments: [] }), 2_000).kind).toBe("FORBIDDEN");
    state = act(state, caller("ada"), { kind: "reassign", assignments: [{ assignee: user("carl"), slaMinutes: 2 }] }, 5_000);
    expect(standing(state)).toEqual({ state: "ASSIGNED", assignee: "carl", claimant: undefined, timeoutAt: 5_000 + 2 * MINUTE });
    state = act(state, caller("carl"), { kind: "claim", override: false }, 6_000);
    expect(refusal(state, actEvent(state, caller("boss", { manager: true }), { kind: "reassign", assignments: [] }), 7_000).kind).toBe("CONFLICT");
  });

  it("skips the assignment in force, moving down the chain as when its minutes run out", () => {
    let state = startedWith("refunds", [human({ ...chain, assignmentCompletionStrategy: "TERMINATE" })], {}, 1_000).state;
    state = act(state, caller("ada"), { kind: "skip" }, 2_000);
    expect(standing(state)).toMatchObject({ assignee: "finance", timeoutAt: 2_000 + 30 * MINUTE });
    state = act(state, caller("boss", { manager: true }), { kind: "skip" }, 3_000);
    expect(latestNamed(state, "approve")).toMatchObject({ status: "FAILED", reasonForIncompletion: ASSIGNMENTS_EXHAUSTED });
  });

  it("deletes it from the human task lists on a manager's word only; its workflow still waits for it", () => {
    let state = startedWith("refunds", [human(chain)]).state;
    expect(refusal(state, actEvent(state, caller("ada"), { kind: "delete" }), 2_000).kind).toBe("FORBIDDEN");
    state = act(state, caller("boss", { manager: true }), { kind: "delete" });
    expect(standing(state)).toMatchObject({ state: "DELETED", timeoutAt: undefined });
    expect(state.status).toBe("RUNNING");
    expect(refusal(state, actEvent(state, caller("ada"), { kind: "claim", override: false }), 3_000).kind).toBe("CONFLICT");
  });
});

describe("the form", () => {
  const schema = { type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"] };

  it("is saved by whoever claimed it (the task goes on waiting), then submitted, completing the task with the merged output", () => {
    let state = startedWith("refunds", [human(chain), { name: "after", taskReferenceName: "after", type: "NOOP" }]).state;
    expect(refusal(state, fill(state, caller("ada"), { note: "x" }, false), 2_000).kind).toBe("CONFLICT");
    state = act(state, caller("ada"), { kind: "claim", override: false });
    expect(refusal(state, fill(state, caller("bob"), { note: "x" }, false), 2_500).kind).toBe("FORBIDDEN");
    state = decide(state, fill(state, caller("ada"), { note: "looks fine" }, false), env(3_000)).state;
    expect(latestNamed(state, "approve")).toMatchObject({ status: "IN_PROGRESS", outputData: { note: "looks fine" } });
    const refused = refusal(state, fill(state, caller("ada"), { approved: "yes" }, true, schema), 3_500);
    expect(refused.kind).toBe("INVALID");
    expect(refused.message).toContain("output.approved");
    state = decide(state, fill(state, caller("ada"), { approved: true }, true, schema), env(4_000)).state;
    expect(latestNamed(state, "approve")).toMatchObject({ status: "COMPLETED", outputData: { note: "looks fine", approved: true } });
    expect(humanStateOf(latestNamed(state, "approve"))).toBe("COMPLETED");
    expect(state.status).toBe("COMPLETED");
  });

  it("starts afresh when rerun: assigned to the chain's first again, claimed by no one", () => {
    let state = startedWith("refunds", [human(chain)], {}, 1_000).state;
    state = settleOverdue(state, env(1_000 + 10 * MINUTE)).state;
    state = act(state, caller("bob", { groups: ["finance"] }), { kind: "claim", override: false }, 1_000 + 11 * MINUTE);
    state = decide(state, fill(state, caller("bob", { groups: ["finance"] }), { approved: false }, true), env(1_000 + 12 * MINUTE)).state;
    expect(state.status).toBe("COMPLETED");
    const rerun = decide(state, { type: "rerun", fromTaskId: latestNamed(state, "approve").taskId }, env(1_000 + 20 * MINUTE)).state;
    expect(standing(rerun)).toEqual({ state: "ASSIGNED", assignee: "ada", claimant: undefined, timeoutAt: 1_000 + 30 * MINUTE });
    expect(latestNamed(rerun, "approve").outputData).toEqual({});
  });

  it("refuses every action on a task completed meanwhile from outside", () => {
    let state = startedWith("refunds", [human(chain)]).state;
    const task = latestNamed(state, "approve");
    state = decide(state, { type: "externalUpdate", taskId: task.taskId, status: "COMPLETED", output: { approved: true } }, env(2_000)).state;
    expect(humanStateOf(latestNamed(state, "approve"))).toBe("COMPLETED");
    expect(refusal(state, actEvent(state, caller("ada"), { kind: "claim", override: false }), 3_000).kind).toBe("CONFLICT");
  });
});

describe("triggers", () => {
  const notify = (triggerType: string) => ({ triggerType, startWorkflowRequest: { name: "notify", version: 2, input: { channel: "#refunds" }, correlationId: "c-1" } });
  const starts = (decision: { effects: Array<{ kind: string }> }) =>
    decision.effects.flatMap((effect) => (effect.kind === "startFailureWorkflow" && "start" in effect ? [(effect as { start: { trigger?: string; name: string; input: JsonObject; priority: number } }).start] : []));

  it("start at priority 0, as the execution's failure workflow would, whatever the execution's priority", () => {
    const definition = { name: "refunds", version: 1, schemaVersion: 2, tasks: [human({ ...chain, taskTriggers: [notify("ASSIGNED")] })] };
    const started = decide(createExecution({ workflowId: "wf-1", definition, input: {}, priority: 9 }, 1_000), { type: "start" }, env(1_000));
    expect(started.state.priority).toBe(9);
    expect(starts(started).map((start) => start.priority)).toEqual([0]);
  });

  it("start the workflow a trigger names as the task enters its state or changes hands, with what happened", () => {
    const settings = { ...chain, taskTriggers: ["PENDING", "ASSIGNED", "IN_PROGRESS", "COMPLETED", "ASSIGNEE_CHANGED", "CLAIMANT_CHANGED"].map(notify) };
    const started = startedWith("refunds", [human(settings)], {}, 1_000);
    const taskId = latestNamed(started.state, "approve").taskId;
    expect(starts(started).map((start) => start.trigger)).toEqual([`human task approve (${taskId}) PENDING`, `human task approve (${taskId}) ASSIGNED`]);
    expect(starts(started)[1]).toMatchObject({
      name: "notify",
      version: 2,
      correlationId: "c-1",
      triggeringWorkflowId: "wf-1",
      depth: 1,
      input: { channel: "#refunds", humanTask: { triggerType: "ASSIGNED", taskId, taskRefName: "approve", workflowId: "wf-1", state: "ASSIGNED", assignee: { user: "ada", userType: "CONDUCTOR_USER" } } },
    });
    const escalated = settleOverdue(started.state, env(1_000 + 10 * MINUTE));
    expect(starts(escalated).map((start) => start.trigger?.split(" ").pop())).toEqual(["ASSIGNEE_CHANGED"]);
    const claimed = decide(escalated.state, actEvent(escalated.state, caller("bob", { groups: ["finance"] }), { kind: "claim", override: false }), env(1_000 + 11 * MINUTE));
    expect(starts(claimed).map((start) => start.trigger?.split(" ").pop())).toEqual(["IN_PROGRESS", "CLAIMANT_CHANGED"]);
    // A test run's task starts nothing real.
    const testRun = { ...escalated.state, test: { taskMocks: [], subWorkflows: [] } };
    expect(starts(decide(testRun, actEvent(testRun, caller("bob", { groups: ["finance"] }), { kind: "claim", override: false }), env(1_000 + 11 * MINUTE)))).toEqual([]);
    // Nothing changed for the task: nothing fires.
    expect(starts(decide(claimed.state, { type: "updateVariables", variables: { note: "x" } }, env(1_000 + 11 * MINUTE)))).toEqual([]);
    // Completed from outside: the same trigger as through the form.
    const done = decide(claimed.state, { type: "externalUpdate", taskId, status: "COMPLETED", output: {} }, env(1_000 + 12 * MINUTE));
    expect(starts(done).map((start) => start.trigger?.split(" ").pop())).toEqual(["COMPLETED"]);
  });

  it("are refused at registration when they could never start anything", () => {
    expect(registrationErrors([human({ taskTriggers: [{ triggerType: "CLAIMED", startWorkflowRequest: { input: [] } }] })])).toEqual([
      "tasks[0].inputParameters.__humanTaskDefinition.taskTriggers[0].triggerType: triggerType must be one of PENDING, ASSIGNED, IN_PROGRESS, COMPLETED, TIMED_OUT, ASSIGNEE_CHANGED, CLAIMANT_CHANGED, but received string \"CLAIMED\"",
      "tasks[0].inputParameters.__humanTaskDefinition.taskTriggers[0].startWorkflowRequest.name: name must be a non-empty string (the workflow to start), but received nothing",
      "tasks[0].inputParameters.__humanTaskDefinition.taskTriggers[0].startWorkflowRequest.input: input must be an object, but received an array",
    ]);
    expect(registrationErrors([human({ taskTriggers: [{ triggerType: "COMPLETED", startWorkflowRequest: { name: "${workflow.input.followUp}" } }] })])).toEqual([]);
  });

  it("read a trigger's taskToDomain as Jackson reads Orkes' StartWorkflowRequest (a Map<String, String>): a number or boolean domain is its text, a null one none", () => {
    const domains = { "*": "${workflow.input.shard}", encode: 7, resize: true, thumb: null };
    const trigger = { triggerType: "PENDING", startWorkflowRequest: { name: "notify", taskToDomain: domains } };
    expect(registrationErrors([human({ ...chain, taskTriggers: [trigger] })])).toEqual([]);
    // As it runs: the shard number an expression gave is its text (domain "3"); the task is not failed for it.
    const started = startedWith("refunds", [human({ ...chain, taskTriggers: [trigger] })], { shard: 3 }, 1_000);
    expect(latestNamed(started.state, "approve").status).toBe("IN_PROGRESS");
    expect(starts(started)).toEqual([expect.objectContaining({ name: "notify", taskToDomain: { "*": "3", encode: "7", resize: "true" } })]);
    // An object or array is no domain: refused at registration, at its trigger.
    expect(registrationErrors([human({ ...chain, taskTriggers: [{ ...trigger, startWorkflowRequest: { name: "notify", taskToDomain: { encode: ["gpu"] } } }] })])).toEqual([
      expect.stringMatching(/^tasks\[0\]\.inputParameters\.__humanTaskDefinition\.taskTriggers\[0\]\.startWorkflowRequest\.taskToDomain: /),
    ]);
  });

  it("refuse a trigger's domain longer than a poll may name (256 characters): written, at registration; resolved, the task fails as for its other settings", () => {
    const long = "d".repeat(257);
    const trigger = (taskToDomain: Record<string, string>) => ({ triggerType: "PENDING", startWorkflowRequest: { name: "notify", taskToDomain } });
    expect(registrationErrors([human({ ...chain, taskTriggers: [trigger({ encode: "d".repeat(256) })] })])).toEqual([]);
    expect(registrationErrors([human({ ...chain, taskTriggers: [trigger({ encode: `gpu,${long}` })] })])).toEqual([
      expect.stringMatching(/^tasks\[0\]\.inputParameters\.__humanTaskDefinition\.taskTriggers\[0\]\.startWorkflowRequest\.taskToDomain: .*at most 256 characters/),
    ]);
    const failed = startedWith("refunds", [human({ ...chain, taskTriggers: [trigger({ encode: "${workflow.input.domain}" })] })], { domain: long }, 1_000);
    expect(latestNamed(failed.state, "approve")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("startWorkflowRequest.taskToDomain") });
    expect(starts(failed)).toEqual([]);
  });

  it("fail the task when a trigger's resolved domain holds a lone surrogate (no poll's query can name its queue), starting nothing", () => {
    const trigger = { triggerType: "PENDING", startWorkflowRequest: { name: "notify", taskToDomain: { "*": "eu", encode: "${workflow.input.domain}" } } };
    expect(registrationErrors([human({ ...chain, taskTriggers: [trigger] })])).toEqual([]);
    const failed = startedWith("refunds", [human({ ...chain, taskTriggers: [trigger] })], { domain: "gpu-\ud83d" }, 1_000);
    expect(latestNamed(failed.state, "approve")).toMatchObject({
      status: "FAILED_WITH_TERMINAL_ERROR",
      reasonForIncompletion: expect.stringMatching(/startWorkflowRequest\.taskToDomain: taskToDomain\.encode resolved to a domain that must not hold a lone surrogate/),
    });
    expect(starts(failed)).toEqual([]);
    // A whole character outside the BMP is a domain like any other.
    const started = startedWith("refunds", [human({ ...chain, taskTriggers: [trigger] })], { domain: "gpu-😀" }, 1_000);
    expect(latestNamed(started.state, "approve").status).toBe("IN_PROGRESS");
    expect(starts(started)).toEqual([expect.objectContaining({ name: "notify", taskToDomain: { "*": "eu", encode: "gpu-😀" } })]);
  });

  it("read a trigger's correlationId as Jackson reads Orkes' StartWorkflowRequest's String: a number or boolean is its text", () => {
    const trigger = { triggerType: "PENDING", startWorkflowRequest: { name: "notify", correlationId: "${workflow.input.orderId}" } };
    // An order number an expression gives: its text, the task not failed for it.
    const started = startedWith("refunds", [human({ ...chain, taskTriggers: [trigger] })], { orderId: 4711 }, 1_000);
    expect(latestNamed(started.state, "approve").status).toBe("IN_PROGRESS");
    expect(starts(started)).toEqual([expect.objectContaining({ name: "notify", correlationId: "4711" })]);
    expect(registrationErrors([human({ ...chain, taskTriggers: [{ ...trigger, startWorkflowRequest: { name: "notify", correlationId: 42 } }] })])).toEqual([]);
    // An object, or an integer whose digits a JSON number lost, is no correlation id.
    for (const correlationId of [{ id: 1 }, 12345678901234567890]) {
      expect(registrationErrors([human({ ...chain, taskTriggers: [{ ...trigger, startWorkflowRequest: { name: "notify", correlationId } }] })])).toEqual([
        expect.stringMatching(/^tasks\[0\]\.inputParameters\.__humanTaskDefinition\.taskTriggers\[0\]\.startWorkflowRequest\.correlationId: /),
      ]);
    }
  });

  it("take a trigger left as Orkes' UI writes a new one (in Orkes' own example) as none, and a version of \"\" or 0", () => {
    const unfilled = { triggerType: "", startWorkflowRequest: { name: "", version: "" } };
    expect(registrationErrors([human({ taskTriggers: [unfilled] })])).toEqual([]);
    const settings = humanSettingsOf({ __humanTaskDefinition: { taskTriggers: [unfilled, { triggerType: "COMPLETED", startWorkflowRequest: { name: "notify", version: "" } }, { triggerType: "ASSIGNED", startWorkflowRequest: { name: "notify", version: 0 } }] } });
    expect("problem" in settings ? settings.problem : settings.triggers.map((trigger) => [trigger.triggerType, trigger.version])).toEqual([
      ["COMPLETED", undefined],
      ["ASSIGNED", 0],
    ]);
    // Orkes' StartWorkflowRequest's Integer, as a start's: digits as text (a sign and spaces around) the number, "null" none.
    const written = (version: JsonValue) => ({ triggerType: "PENDING", startWorkflowRequest: { name: "notify", version } });
    expect(registrationErrors([human({ taskTriggers: [written("1"), written(" +2 "), written("null"), written(" ")] })])).toEqual([]);
    const typed = humanSettingsOf({ __humanTaskDefinition: { taskTriggers: [written("1"), written(" +2 "), written("null")] } });
    expect("problem" in typed ? typed.problem : typed.triggers.map((trigger) => trigger.version)).toEqual([1, 2, undefined]);
    expect(registrationErrors([human({ taskTriggers: [written("-1"), written("1.5"), written("latest")] })])).toHaveLength(3);
    // Half filled is still refused: an event with no workflow, a workflow with no event.
    expect(registrationErrors([human({ taskTriggers: [{ triggerType: "COMPLETED", startWorkflowRequest: { name: "" } }, { triggerType: "", startWorkflowRequest: { name: "notify" } }] })])).toHaveLength(2);
  });
});

describe("registration", () => {
  it("refuses settings that could never assign anyone, and lets expressions wait for the run", () => {
    expect(registrationErrors([human({ assignments: [{ assignee: { user: "ada", userType: "USER" }, slaMinutes: -1 }], assignmentCompletionStrategy: "CLOSE" })])).toEqual([
      "tasks[0].inputParameters.__humanTaskDefinition.assignmentCompletionStrategy: assignmentCompletionStrategy must be one of LEAVE_OPEN, TERMINATE, but received string \"CLOSE\"",
      "tasks[0].inputParameters.__humanTaskDefinition.assignments[0].assignee.userType: userType must be one of CONDUCTOR_USER, CONDUCTOR_GROUP, EXTERNAL_USER, EXTERNAL_GROUP, but received string \"USER\"",
      "tasks[0].inputParameters.__humanTaskDefinition.assignments[0].slaMinutes: slaMinutes must be a whole number of minutes from 0 (no limit) to 527040, or its digits as text, but received number -1",
    ]);
    // Orkes' Long and Integer, read by Jackson: digits as text (spaces and a sign around) are the number, "null" none.
    expect(registrationErrors([human({ assignments: [{ assignee: user("ada"), slaMinutes: " +15 " }, { assignee: user("bob"), slaMinutes: "null" }], userFormTemplate: { name: "refund_form", version: "2" } })])).toEqual([]);
    expect(registrationErrors([human({ assignments: [{ assignee: user("ada"), slaMinutes: "15m" }], userFormTemplate: { name: "refund_form", version: "2.0" } })])).toEqual([
      "tasks[0].inputParameters.__humanTaskDefinition.assignments[0].slaMinutes: slaMinutes must be a whole number of minutes from 0 (no limit) to 527040, or its digits as text, but received string \"15m\"",
      "tasks[0].inputParameters.__humanTaskDefinition.userFormTemplate.version: version must be a whole number from 0 to 2147483647, or its digits as text (0, absent, \"\" or \"null\": the latest), but received string \"2.0\"",
    ]);
    // Past Java's int, as text or as a number, Jackson refuses the Integer: a 400, where it was taken as the version.
    for (const version of ["3000000000", 2_147_483_648]) {
      expect(registrationErrors([human({ userFormTemplate: { name: "refund_form", version } })])).toEqual([
        `tasks[0].inputParameters.__humanTaskDefinition.userFormTemplate.version: version must be a whole number from 0 to 2147483647, or its digits as text (0, absent, "" or "null": the latest), but received ${typeof version} ${JSON.stringify(version)}`,
      ]);
    }
    expect(registrationErrors([human({ userFormTemplate: { name: "refund_form", version: " 2147483647 " } })])).toEqual([]);
    // Resolved as the task starts: the chain's minutes are the numbers.
    const resolved = startedWith("approvals", [human({ assignments: [{ assignee: user("ada"), slaMinutes: "${workflow.input.minutes}" }] })], { amount: 5, minutes: "10" }).state;
    expect(latestNamed(resolved, "approve").human).toMatchObject({ assignments: [{ slaMinutes: 10 }] });
    expect(registrationErrors([human({ assignments: "${workflow.input.chain}", userFormTemplate: { name: "refund_form", version: "${workflow.input.v}" } })])).toEqual([]);
    // The Python client's HumanTask without a form writes a null name and version 0: no form.
    expect(registrationErrors([human({ userFormTemplate: { name: null, version: 0 } })])).toEqual([]);
    // The same with the null dropped, as a serializer that leaves nulls out writes it.
    expect(registrationErrors([human({ userFormTemplate: { version: 0 } })])).toEqual([]);
    expect(startedWith("approvals", [human({ assignments: [{ assignee: user("ada"), slaMinutes: 0 }], userFormTemplate: { name: null, version: 0 } })]).state.tasks[0]!.status).toBe("IN_PROGRESS");
    expect(registrationErrors([human({ userFormTemplate: { version: 1 } })])).toEqual([
      "tasks[0].inputParameters.__humanTaskDefinition.userFormTemplate.name: name must be a non-empty string (a registered user form), but received nothing",
    ]);
  });
});

describe("a human task's entry (Orkes' HumanTaskEntry)", () => {
  it("shows its settings masked as its input is: a trigger's start input quoting _secrets shows none of them", () => {
    const trigger = { triggerType: "COMPLETED", startWorkflowRequest: { name: "notify", input: { _secrets: { token: "${workflow.input.token}" }, channel: "#refunds" } } };
    const state = startedWith("approvals", [human({ assignments: [{ assignee: user("ada"), slaMinutes: 0 }], taskTriggers: [trigger] })], { amount: 5, token: "tok-abc" }).state;
    const entry = humanTaskEntry(latestNamed(state, "approve"), state);
    expect(JSON.stringify(entry)).not.toContain("tok-abc");
    expect(entry["humanTaskDef"]).toMatchObject({ taskTriggers: [{ startWorkflowRequest: { input: { channel: "#refunds" } } }] });
  });

  it("shows Orkes' audit fields as its entries do: who started the workflow, and who acted last, each a bare id", () => {
    let state: WorkflowExecution = { ...startedWith("approvals", [human(chain)], { amount: 5 }).state, createdBy: "starter@example.com" };
    const fresh = humanTaskEntry(latestNamed(state, "approve"), state);
    // Untouched, it shows its starter as the last to change it, as Orkes' entries do.
    expect(fresh).toMatchObject({ createdBy: "starter@example.com", updatedBy: "starter@example.com" });
    state = act(state, caller("ada"), { kind: "claim", override: false });
    state = decide(state, fill(state, caller("ada"), { note: "seen" }, false), env(3_000)).state;
    expect(humanTaskEntry(latestNamed(state, "approve"), state)).toMatchObject({ createdBy: "starter@example.com", updatedBy: "ada" });
    // Progress stored when it was kept as CONDUCTOR_USER:<id> shows the id alone.
    const task = latestNamed(state, "approve");
    const stored = { ...state, tasks: state.tasks.map((each) => (each === task ? { ...task, human: { ...task.human!, updatedBy: "CONDUCTOR_USER:ada" } } : each)) };
    expect(humanTaskEntry(latestNamed(stored, "approve"), stored)["updatedBy"]).toBe("ada");
  });
});
