import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { publishEvent } from "../../src/actors/dispatch/event";
import { ExecutionStore } from "../../src/actors/execution-store";
import { WorkflowExecution } from "../../src/actors/workflow-execution";
import { loadScriptRunner } from "../../src/actors/scripts/load";
import { executionStub } from "../../src/worker/executions";
import { uuidFromDigest } from "../../src/engine/task-id";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, eventually, gate, getWorkflow, hits, httpTask, register, startWorkflow, statementsOf, target, waitFor, waitForIndexRow, type WorkflowJson } from "./helpers";

const wait = (ref: string): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });
const eventTask = (ref: string, sink: string, inputParameters: JsonObject = {}, extra: JsonObject = {}): JsonObject => ({ name: ref, taskReferenceName: ref, type: "EVENT", sink, inputParameters, ...extra });
const waitingIn = (ref: string) => (workflow: WorkflowJson) => workflow.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS");
const taskOf = (workflow: WorkflowJson, ref: string) => workflow.tasks.find((task) => task.referenceTaskName === ref);

/** An event handler as Conductor's clients send it. */
function handler(name: string, event: string, actions: JsonObject[], extra: JsonObject = {}): JsonObject {
  return { name, event, actions, active: true, ...extra };
}

describe("event handlers (/api/event)", () => {
  it("are added, listed, found by event (active ones unless activeOnly=false) and by name, replaced and removed", async () => {
    const complete = { action: "complete_task", complete_task: { workflowId: "${workflowId}", taskRefName: "approval" } };
    expect((await api("POST", "/api/event", handler("ev_crud_a", "conductor:ev_crud:q", [complete]))).status).toBe(200);
    // Orkes' clients send a list.
    expect((await api("POST", "/api/event", [handler("ev_crud_b", "conductor:ev_crud:q", [complete], { active: false })])).status).toBe(200);
    // Conductor's default: a handler sent without `active` is inactive.
    expect((await api("POST", "/api/event", { name: "ev_crud_c", event: "conductor:ev_crud:other", actions: [complete] })).status).toBe(200);

    const all = await apiOk<Array<{ name: string }>>("GET", "/api/event");
    expect(all.filter((h) => h.name.startsWith("ev_crud_")).map((h) => h.name)).toEqual(["ev_crud_a", "ev_crud_b", "ev_crud_c"]);
    expect((await apiOk<Array<{ name: string }>>("GET", `/api/event/${encodeURIComponent("conductor:ev_crud:q")}`)).map((h) => h.name)).toEqual(["ev_crud_a"]);
    expect((await apiOk<Array<{ name: string }>>("GET", `/api/event/conductor:ev_crud:q?activeOnly=false`)).map((h) => h.name)).toEqual(["ev_crud_a", "ev_crud_b"]);
    // Read as every boolean query is, whatever its case (the Python client may send False).
    expect((await apiOk<Array<{ name: string }>>("GET", `/api/event/conductor:ev_crud:q?activeOnly=False`)).map((h) => h.name)).toEqual(["ev_crud_a", "ev_crud_b"]);
    expect((await api("GET", `/api/event/conductor:ev_crud:q?activeOnly=maybe`)).status).toBe(400);
    expect(await apiOk("GET", "/api/event/handler/ev_crud_c")).toMatchObject({ name: "ev_crud_c", active: false, actions: [{ action: "complete_task", expandInlineJSON: false }] });

    expect((await api("PUT", "/api/event", handler("ev_crud_b", "conductor:ev_crud:q", [complete]))).status).toBe(200);
    expect((await apiOk<Array<{ name: string }>>("GET", `/api/event/conductor:ev_crud:q`)).map((h) => h.name)).toEqual(["ev_crud_a", "ev_crud_b"]);
    expect((await api("DELETE", "/api/event/ev_crud_a")).status).toBe(200);
    expect((await api("GET", "/api/event/handler/ev_crud_a")).status).toBe(404);
  });

  it("carry the tags of Orkes' OrkesEventHandler: stored with the handler, shown in every listing, replaced by an update that gives some", async () => {
    const complete = { action: "complete_task", complete_task: { workflowId: "${workflowId}", taskRefName: "approval" } };
    const team = { key: "team", value: "orders" };
    await apiOk("POST", "/api/event", [handler("ev_tagged", "conductor:ev_tagged:q", [complete], { tags: [team] })]);
    await apiOk("POST", "/api/event", handler("ev_untagged", "conductor:ev_tagged:q", [complete]));
    const listed = async () => (await apiOk<Array<{ name: string; tags?: unknown }>>("GET", "/api/event")).filter((h) => h.name.startsWith("ev_tagged") || h.name.startsWith("ev_untagged")).map((h) => [h.name, h.tags]);
    expect(await listed()).toEqual([["ev_tagged", [team]], ["ev_untagged", []]]);
    expect((await apiOk<Array<{ tags?: unknown }>>("GET", "/api/event/conductor:ev_tagged:q")).map((h) => h.tags)).toEqual([[team], []]);
    expect(await apiOk("GET", "/api/event/handler/ev_tagged")).toMatchObject({ name: "ev_tagged", tags: [team] });
    expect(await apiOk("GET", "/api/event/ev_tagged/tags")).toEqual([team]);
    // The stored handler is the handler alone: its tags live with the other tags.
    const stored = await env.DB.prepare("SELECT handler FROM event_handlers WHERE name = 'ev_tagged'").first<{ handler: string }>();
    expect(Object.keys(JSON.parse(stored!.handler) as JsonObject)).not.toContain("tags");
    // An update without tags keeps them; one with tags replaces them; a bad tag refuses the update whole.
    await apiOk("PUT", "/api/event", handler("ev_tagged", "conductor:ev_tagged:q", [complete], { active: false }));
    expect(await apiOk("GET", "/api/event/ev_tagged/tags")).toEqual([team]);
    await apiOk("PUT", "/api/event", handler("ev_tagged", "conductor:ev_tagged:q", [complete], { tags: [{ key: "tier", value: "1" }] }));
    expect(await apiOk("GET", "/api/event/ev_tagged/tags")).toEqual([{ key: "tier", value: "1" }]);
    const refused = await api("PUT", "/api/event", handler("ev_tagged", "conductor:ev_tagged:changed", [complete], { tags: [{ key: "", value: "x" }] }));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path)).toEqual(["tags[0].key"]);
    expect(await apiOk("GET", "/api/event/handler/ev_tagged")).toMatchObject({ event: "conductor:ev_tagged:q", active: true, tags: [{ key: "tier", value: "1" }] });
    // Tags given for a handler that does not exist are not stored either.
    expect((await api("PUT", "/api/event", handler("ev_tag_ghost", "conductor:ev_tagged:q", [complete], { tags: [team] }))).status).toBe(404);
    expect((await api("GET", "/api/event/ev_tag_ghost/tags")).status).toBe(404);
  });

  it("take a task action's empty fields as none, as the Go SDK's client writes its unset taskId", async () => {
    const goStyle = { action: "fail_task", fail_task: { workflowId: "${workflowId}", taskRefName: "approval", taskId: "", reasonForIncompletion: "", output: {} } };
    await apiOk("POST", "/api/event", handler("ev_go_style", "conductor:ev_go_style:q", [goStyle]));
    const stored = await apiOk<{ actions: Array<{ fail_task: JsonObject }> }>("GET", "/api/event/handler/ev_go_style");
    expect(stored.actions[0]!.fail_task).toEqual({ workflowId: "${workflowId}", taskRefName: "approval", output: {} });
    // Empty everywhere is still no task named.
    const unnamed = await api("POST", "/api/event", handler("ev_go_unnamed", "conductor:ev_go_style:q", [{ action: "complete_task", complete_task: { workflowId: "", taskRefName: "", taskId: "" } }]));
    expect(unnamed.status).toBe(400);
  });

  it("refuse what they cannot store, changing nothing: a bad handler (400, every problem), a duplicate (409), an unknown one (404)", async () => {
    const good = handler("ev_refused", "conductor:ev_refused:q", [{ action: "start_workflow", start_workflow: { name: "anything" } }]);
    expect((await api("POST", "/api/event", good)).status).toBe(200);
    const duplicate = await api("POST", "/api/event", { ...good, event: "conductor:ev_refused:changed" });
    expect(duplicate.status).toBe(409);
    // A list is added whole or not at all.
    const withDuplicate = await api("POST", "/api/event", [{ ...good, name: "ev_refused_new" }, good]);
    expect(withDuplicate.status).toBe(409);
    expect((await api("GET", "/api/event/handler/ev_refused_new")).status).toBe(404);
    const listProblems = await api("POST", "/api/event", [{ ...good, name: "ev_twice" }, { ...good, name: "ev_twice" }, { ...good, event: "kafka:x" }]);
    expect(listProblems.status).toBe(400);
    expect(((await listProblems.json()) as { validationErrors: Array<{ path: string }> }).validationErrors.map((issue) => issue.path)).toEqual(["[2].event", "(body)"]);
    expect((await api("GET", "/api/event/handler/ev_twice")).status).toBe(404);
    const bad = await api("POST", "/api/event", {
      name: "ev bad",
      event: "sqs:orders",
      actions: [
        { action: "archive_workflow" },
        { action: "complete_task", complete_task: { workflowId: "${id}" } },
        { action: "start_workflow" },
        { action: "update_workflow_variables", update_workflow_variables: { workflowId: "${id}", variables: {}, appendArray: true } },
      ],
    });
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { error: string; validationErrors: Array<{ path: string; message: string }> };
    expect(body.error).toBe("VALIDATION_ERROR");
    expect(body.validationErrors.map((issue) => issue.path)).toEqual(["name", "event", "actions[0].action", "actions[1]", "actions[2]", "actions[3].update_workflow_variables.appendArray"]);
    expect(body.validationErrors[1]!.message).toContain("conductor:<workflow name>");
    // It names every queue the status listener publishes to, the finalize queue among them.
    for (const queue of ["_callbackSuccessQueue", "_callbackFailureQueue", "_callbackFinalizeQueue"]) expect(body.validationErrors[1]!.message).toContain(queue);
    expect((await api("PUT", "/api/event", { ...good, name: "ev_never_added" })).status).toBe(404);
    expect((await api("DELETE", "/api/event/ev_never_added")).status).toBe(404);
    expect((await apiOk<Array<{ name: string; event: string }>>("GET", "/api/event")).some((h) => h.name === "ev bad" || h.event === "sqs:orders")).toBe(false);
    expect(await apiOk("GET", "/api/event/handler/ev_refused")).toMatchObject({ event: "conductor:ev_refused:q" });
    // A path naming several values resolved to null, silently: refused, saying which.
    const wildcard = await api("POST", "/api/event", handler("ev_wildcard", "conductor:ev_refused:q", [{ action: "start_workflow", start_workflow: { name: "anything", input: { skus: "${items[*].sku}" } } }]));
    expect(wildcard.status).toBe(400);
    expect(JSON.stringify(await wildcard.json())).toContain("items[*].sku");
    expect((await api("GET", "/api/event/handler/ev_wildcard")).status).toBe(404);
  });

  it("refuse a name their routes could not reach once registered (. and .., and names other /api/event routes take), changing nothing", async () => {
    const before = await apiOk<unknown[]>("GET", "/api/event");
    for (const name of [".", "..", "handler", "handleIncomingEvent", "queue", "tags"]) {
      const refused = await api("POST", "/api/event", handler(name, `conductor:ev_unreachable_${name.length}:q`, [{ action: "start_workflow", start_workflow: { name: "anything" } }]));
      expect(refused.status, name).toBe(400);
      expect(((await refused.json()) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors).toEqual([{ path: "name", message: expect.stringContaining("must not be") }]);
    }
    expect(await apiOk<unknown[]>("GET", "/api/event")).toEqual(before);
    // What each would have been: ".." is GET /api/event (every handler) and DELETE /api/ (no route), "handler" a 501.
    expect((await api("DELETE", "/api/event/handler")).status).toBe(501);
    // Names merely holding a dot or one of those words are fine, and reachable.
    for (const name of ["..x", "handler.v2", "tags-team"]) {
      expect((await api("POST", "/api/event", handler(name, "conductor:ev_unreachable:q", [{ action: "start_workflow", start_workflow: { name: "anything" } }]))).status).toBe(200);
      expect(await apiOk("GET", `/api/event/handler/${name}`)).toMatchObject({ name });
      expect((await api("DELETE", `/api/event/${name}`)).status).toBe(200);
    }
  });

  it("stored under such a name before the rule, stay updatable: a PUT switches one off, the only way to stop a handler no route can delete", async () => {
    const event = "conductor:ev_stored_unreachable:q";
    expect((await api("POST", "/api/event", { ...handler("ev_stored_unreachable", event, [{ action: "start_workflow", start_workflow: { name: "anything" } }]), active: true })).status).toBe(200);
    // As an older release stored it, under a name added to the rule since.
    await env.DB.prepare("UPDATE event_handlers SET name = 'queue', handler = json_set(handler, '$.name', 'queue') WHERE name = 'ev_stored_unreachable'").run();
    expect((await api("PUT", "/api/event", { ...handler("queue", event, [{ action: "start_workflow", start_workflow: { name: "anything" } }]), active: false })).status).toBe(200);
    expect(await apiOk("GET", `/api/event/${event}?activeOnly=false`)).toEqual([expect.objectContaining({ name: "queue", active: false })]);
    // A new one is still refused, in a list at its index too.
    const listed = await api("POST", "/api/event", [handler("ev_listed_ok", event, []), handler("tags", event, [])]);
    expect(listed.status).toBe(400);
    expect(((await listed.json()) as { validationErrors: Array<{ path: string }> }).validationErrors).toEqual([expect.objectContaining({ path: "[1].name" })]);
    expect((await api("GET", "/api/event/handler/ev_listed_ok")).status).toBe(404);
    await env.DB.prepare("DELETE FROM event_handlers WHERE name = 'queue'").run();
  });

  it("read a start_workflow correlationId given as a number as its text, as Jackson reads the String field", async () => {
    const numbered = handler("ev_corr_number", "conductor:ev_corr_number:q", [{ action: "start_workflow", start_workflow: { name: "ev_corr_child", correlationId: 1234 } }]);
    expect((await api("POST", "/api/event", numbered)).status).toBe(200);
    expect(await apiOk("GET", "/api/event/handler/ev_corr_number")).toMatchObject({ actions: [{ start_workflow: { name: "ev_corr_child", correlationId: "1234" } }] });
    const refused = await api("POST", "/api/event", handler("ev_corr_object", "conductor:ev_corr_number:q", [{ action: "start_workflow", start_workflow: { name: "ev_corr_child", correlationId: { id: 1 } } }]));
    expect(refused.status).toBe(400);
  });

  it("read a start_workflow taskToDomain domain given as a number as its text and a null one as no mapping, as Jackson reads the Map<String, String>", async () => {
    const numbered = handler("ev_domain_number", "conductor:ev_domain_number:q", [{ action: "start_workflow", start_workflow: { name: "ev_domain_child", taskToDomain: { "*": 7, other: null } } }]);
    expect((await api("POST", "/api/event", numbered)).status).toBe(200);
    expect(await apiOk("GET", "/api/event/handler/ev_domain_number")).toMatchObject({ actions: [{ start_workflow: { name: "ev_domain_child", taskToDomain: { "*": "7" } } }] });
    const refused = await api("POST", "/api/event", handler("ev_domain_object", "conductor:ev_domain_number:q", [{ action: "start_workflow", start_workflow: { name: "ev_domain_child", taskToDomain: { "*": ["eu"] } } }]));
    expect(refused.status).toBe(400);
  });

  it("read a field given as null as unset, as Jackson does: .NET clients write every unset field so", async () => {
    // conductor-sharp's EventHandlerDefinition (Newtonsoft, nulls written) and a generated model that writes every field.
    const sharp = {
      active: true,
      name: "ev_nulls_a",
      event: "conductor:ev_nulls:q",
      condition: null,
      evaluatorType: null,
      description: null,
      actions: [
        { action: "start_workflow", start_workflow: { name: "ev_nulls_child", version: null, correlationId: null, input: null, taskToDomain: null }, complete_task: null, fail_task: null, expandInlineJSON: null },
        { action: "complete_task", complete_task: { workflowId: "${workflowId}", taskRefName: "approval", taskId: null, output: null }, start_workflow: null, expandInlineJSON: true },
      ],
    };
    expect((await api("POST", "/api/event", sharp)).status).toBe(200);
    expect(await apiOk("GET", "/api/event/handler/ev_nulls_a")).toEqual({
      name: "ev_nulls_a",
      event: "conductor:ev_nulls:q",
      active: true,
      actions: [
        { action: "start_workflow", start_workflow: { name: "ev_nulls_child" }, expandInlineJSON: false },
        { action: "complete_task", complete_task: { workflowId: "${workflowId}", taskRefName: "approval" }, expandInlineJSON: true },
      ],
      tags: [],
    });
    // `active: null` is Jackson's primitive false; an update reads nulls alike.
    expect((await api("PUT", "/api/event", { ...sharp, active: null, condition: null })).status).toBe(200);
    expect(await apiOk("GET", "/api/event/handler/ev_nulls_a")).toMatchObject({ active: false });
    // What Conductor requires stays required when null.
    const refused = await api("POST", "/api/event", { name: "ev_nulls_b", event: null, actions: [{ action: null, start_workflow: { name: null } }] });
    expect(refused.status).toBe(400);
    // Each named as required, not in valibot's words for a missing key ("Invalid key: Expected \"event\" but received undefined").
    expect(((await refused.json()) as { validationErrors: Array<{ path: string; message: string }> }).validationErrors).toEqual([
      { path: "event", message: "is required" },
      { path: "actions[0].action", message: "is required" },
      { path: "actions[0].start_workflow.name", message: "is required" },
    ]);
  });

  it("answer Orkes' other event endpoints with 501", async () => {
    for (const path of ["/api/event/queue/config", "/api/event/handleIncomingEvent"]) {
      const response = await api("GET", path);
      expect(response.status, path).toBe(501);
    }
  });

  it("are for system admins: a metadata admin is refused", async () => {
    const metadataAdmin = await createUser("ev-metadata-admin", { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }, { action: "WORKFLOW_WRITE", scope: "*" }] });
    expect((await call("GET", "/api/event", orkes(metadataAdmin.token))).status).toBe(403);
    const refused = await call("POST", "/api/event", orkes(metadataAdmin.token), handler("ev_by_metadata_admin", "conductor:x:y", [{ action: "start_workflow", start_workflow: { name: "x" } }]));
    expect(refused.status).toBe(403);
    expect((await api("GET", "/api/event/handler/ev_by_metadata_admin")).status).toBe(404);
  });
});

describe("EVENT tasks (sink conductor)", () => {
  it("fail a task named by its id alone (its workflow found from it), with the reasonForIncompletion given, as Conductor's fail_task", async () => {
    await register({ name: "ev_by_id_waiter", tasks: [wait("approval")] });
    await register({ name: "ev_by_id_publisher", tasks: [eventTask("announce", "conductor:declines", { taskId: "${workflow.input.taskId}", who: "${workflow.input.who}" })] });
    const fail = { action: "fail_task", fail_task: { taskId: "${taskId}", reasonForIncompletion: "declined by ${who}" } };
    await apiOk("POST", "/api/event", handler("ev_fail_by_id", "conductor:ev_by_id_publisher:declines", [fail]));
    // Refused at registration: a reference name needs its workflow.
    expect((await api("POST", "/api/event", handler("ev_ref_alone", "conductor:x:y", [{ action: "complete_task", complete_task: { taskRefName: "approval" } }]))).status).toBe(400);
    const waiter = await startWorkflow("ev_by_id_waiter");
    const taskId = taskOf(await waitFor(waiter, waitingIn("approval")), "approval")!.taskId;
    await waitForIndexRow(waiter, "RUNNING", 10_000);
    await waitFor(await startWorkflow("ev_by_id_publisher", { taskId, who: "bob" }), ["COMPLETED", "FAILED"]);
    const failed = await waitFor(waiter, ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    expect(taskOf(failed, "approval")).toMatchObject({ status: "FAILED", reasonForIncompletion: "declined by bob" });
  });

  it("complete a task named by its id whatever workflowId they give, as Conductor's complete_task finds a task by its id alone", async () => {
    await register({ name: "ev_id_first_waiter", tasks: [wait("approval")] });
    await register({ name: "ev_id_first_publisher", tasks: [eventTask("announce", "conductor:by_id", { taskId: "${workflow.input.taskId}" })] });
    // workflowId names the publisher, which does not hold the task: Conductor reads the task by its id and completes it.
    const complete = { action: "complete_task", complete_task: { workflowId: "${workflowInstanceId}", taskId: "${taskId}", output: { done: true } } };
    await apiOk("POST", "/api/event", handler("ev_id_first", "conductor:ev_id_first_publisher:by_id", [complete]));
    const waiter = await startWorkflow("ev_id_first_waiter");
    const taskId = taskOf(await waitFor(waiter, waitingIn("approval")), "approval")!.taskId;
    await waitForIndexRow(waiter, "RUNNING", 10_000);
    await waitFor(await startWorkflow("ev_id_first_publisher", { taskId }), ["COMPLETED", "FAILED"]);
    const done = await waitFor(waiter, ["COMPLETED", "FAILED"]);
    expect(taskOf(done, "approval")).toMatchObject({ status: "COMPLETED", outputData: { taskId, done: true } });
  });

  it("complete a task with the action's output alone, as Conductor's complete_task sets it: what earlier reports gave the task is replaced", async () => {
    await register({ name: "ev_replace_waiter", tasks: [wait("approval")] });
    await register({ name: "ev_replace_publisher", tasks: [eventTask("announce", "conductor:answers", { waiterId: "${workflow.input.waiterId}" })] });
    const event = "conductor:ev_replace_publisher:answers";
    await apiOk("POST", "/api/event", handler("ev_replace", event, [{ action: "complete_task", complete_task: { workflowId: "${waiterId}", taskRefName: "approval", output: { answer: "yes" } } }]));
    const waiter = await startWorkflow("ev_replace_waiter");
    await waitFor(waiter, waitingIn("approval"));
    // An earlier report kept the task IN_PROGRESS with some output of its own.
    await apiOk("POST", `/api/tasks/${waiter}/approval/IN_PROGRESS`, { progress: 50 });
    const publisherId = await startWorkflow("ev_replace_publisher", { waiterId: waiter });
    const announce = taskOf(await waitFor(publisherId, ["COMPLETED", "FAILED"]), "announce")!;
    const done = await waitFor(waiter, ["COMPLETED", "FAILED"]);
    expect(taskOf(done, "approval")).toMatchObject({ status: "COMPLETED" });
    expect(taskOf(done, "approval")!.outputData).toEqual({
      workflowId: waiter,
      taskRefName: "approval",
      taskId: null,
      answer: "yes",
      "conductor.event.messageId": announce.taskId,
      "conductor.event.name": event,
    });
  });

  it("publish to the active handlers of their event, whose condition holds: a task of another workflow completes, a workflow starts", async () => {
    await register({ name: "ev_waiter", tasks: [wait("approval")] });
    await register({ name: "ev_started", tasks: [httpTask("count", { uri: target("/count/ev-started-${workflow.input.order}"), method: "GET" })], inputParameters: ["order"] });
    await register({ name: "ev_publisher", tasks: [eventTask("announce", "conductor:approvals", { waiterId: "${workflow.input.waiterId}", order: "${workflow.input.order}", decision: "${workflow.input.decision}" })] });
    const event = "conductor:ev_publisher:approvals";
    const actions: JsonObject[] = [
      { action: "complete_task", complete_task: { workflowId: "${waiterId}", taskRefName: "approval", output: { approvedBy: "${workflowInstanceId}", order: "${order}" } } },
      { action: "start_workflow", start_workflow: { name: "ev_started", input: { order: "${order}" }, correlationId: "order-${order}" } },
    ];
    await apiOk("POST", "/api/event", handler("ev_on_yes", event, actions, { condition: "$.decision === 'yes'" }));
    await apiOk("POST", "/api/event", handler("ev_inactive", event, [{ action: "fail_task", fail_task: { workflowId: "${waiterId}", taskRefName: "approval" } }], { active: false }));

    // The condition does not hold: nothing is done, and the task completes all the same.
    const waiter = await startWorkflow("ev_waiter");
    await waitFor(waiter, waitingIn("approval"));
    const declined = await waitFor(await startWorkflow("ev_publisher", { waiterId: waiter, order: 7, decision: "no" }), ["COMPLETED", "FAILED"]);
    expect(declined.status).toBe("COMPLETED");
    expect(taskOf(await getWorkflow(waiter), "approval")).toMatchObject({ status: "IN_PROGRESS" });

    const publisherId = await startWorkflow("ev_publisher", { waiterId: waiter, order: 8, decision: "yes" });
    const published = await waitFor(publisherId, ["COMPLETED", "FAILED"]);
    expect(published.status).toBe("COMPLETED");
    const announce = taskOf(published, "announce")!;
    expect(announce).toMatchObject({ taskType: "EVENT", status: "COMPLETED" });
    // Conductor's payload: the task's input, its sink and asyncComplete (as its EventTaskMapper writes them), and the workflow's ids.
    expect(announce.outputData).toEqual({
      sink: "conductor:approvals",
      asyncComplete: false,
      waiterId: waiter,
      order: 8,
      decision: "yes",
      workflowInstanceId: publisherId,
      workflowType: "ev_publisher",
      workflowVersion: 1,
      correlationId: null,
      event_produced: event,
    });
    const approved = await waitFor(waiter, ["COMPLETED", "FAILED"]);
    expect(approved.status).toBe("COMPLETED");
    expect(taskOf(approved, "approval")!.outputData).toEqual({
      workflowId: waiter,
      taskRefName: "approval",
      // Not given, yet there: Conductor's SimpleActionProcessor puts the three into the output whatever they are.
      taskId: null,
      approvedBy: publisherId,
      order: 8,
      "conductor.event.messageId": announce.taskId,
      "conductor.event.name": event,
    });
    // What the action gave the task is its record's output, as Conductor's DefaultEventProcessor records it.
    const records = await eventually(() => apiOk<Array<{ action: string; status: string; output: JsonObject }>>("GET", "/api/event/execution/ev_on_yes"), (list) => list.some((record) => record.status === "COMPLETED" && record.action === "complete_task"), "the completion recorded");
    expect(records.find((record) => record.status === "COMPLETED" && record.action === "complete_task")!.output).toEqual(taskOf(approved, "approval")!.outputData);
    await waitFor(publisherId, () => true);
    for (let attempt = 0; attempt < 200 && (await hits("ev-started-8")) === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(await hits("ev-started-8")).toBe(1);
    expect(await hits("ev-started-7")).toBe(0);
  });

  it("run once their EVENT task has completed, as Conductor's queue does: a handler completes the WAIT that follows it in the same workflow", async () => {
    await register({ name: "ev_self", tasks: [eventTask("announce", "conductor"), wait("reply")] });
    await apiOk("POST", "/api/event", handler("ev_self_reply", "conductor:ev_self:announce", [{ action: "complete_task", complete_task: { workflowId: "${workflowInstanceId}", taskRefName: "reply", output: { answered: true } } }]));
    const workflowId = await startWorkflow("ev_self");
    // The handlers ran while the EVENT task was still being dispatched: "reply" did not exist yet, and waited for good.
    const done = await waitFor(workflowId, ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(taskOf(done, "reply")).toMatchObject({ status: "COMPLETED", outputData: { answered: true } });
  });

  // The Event Handlers page's examples as written: its payload, its three conditions, and complete_task with
  // expandInlineJSON reading a stringified JSON element of the payload as a document.
  // https://conductor-oss.github.io/conductor/documentation/configuration/eventhandlers.html
  it("act as the Event Handlers page's examples say: $.version > 1 and $.metadata.length == 300 hold, $.version > 10 does not; expandInlineJSON expands a stringified element", async () => {
    await register({ name: "ev_guide_waiter", tasks: [wait("task_1")] });
    const payload = { fileType: "AUDIO", version: 3, metadata: { length: 300, codec: "aac" }, result: '{"code": 7, "tags": ["a"]}' };
    await register({ name: "ev_guide_pub", tasks: [eventTask("publish", "conductor:media", payload)] });
    const waiters = [await startWorkflow("ev_guide_waiter"), await startWorkflow("ev_guide_waiter"), await startWorkflow("ev_guide_waiter")];
    for (const id of waiters) await waitFor(id, waitingIn("task_1"));
    const completing = (waiterId: string, expandInlineJSON: boolean): JsonObject[] => [
      { action: "complete_task", complete_task: { workflowId: waiterId, taskRefName: "task_1", output: { response: "${result}", code: "${result.code}" } }, expandInlineJSON },
    ];
    const event = "conductor:ev_guide_pub:media";
    await apiOk("POST", "/api/event", handler("ev_guide_version", event, completing(waiters[0]!, true), { condition: "$.version > 1" }));
    await apiOk("POST", "/api/event", handler("ev_guide_version_10", event, completing(waiters[1]!, true), { condition: "$.version > 10" }));
    await apiOk("POST", "/api/event", handler("ev_guide_length", event, completing(waiters[2]!, false), { condition: "$.metadata.length == 300" }));
    expect((await waitFor(await startWorkflow("ev_guide_pub"), ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");

    const expanded = await waitFor(waiters[0]!, ["COMPLETED", "FAILED"]);
    expect(taskOf(expanded, "task_1")!.outputData).toMatchObject({ response: { code: 7, tags: ["a"] }, code: 7 });
    const asText = await waitFor(waiters[2]!, ["COMPLETED", "FAILED"]);
    expect(taskOf(asText, "task_1")!.outputData).toMatchObject({ response: payload.result, code: null });
    const skipped = await eventually(() => apiOk<Array<{ status: string }>>("GET", "/api/event/execution/ev_guide_version_10"), (list) => list.length > 0, "the false condition recorded");
    expect(skipped.map((record) => record.status)).toEqual(["SKIPPED"]);
    expect(taskOf(await getWorkflow(waiters[1]!), "task_1")).toMatchObject({ status: "IN_PROGRESS" });
  });

  it("delivered twice (a publication repeated after an eviction), complete a task once: not the loop's next iteration of its reference name", async () => {
    await register({ name: "ev_loop_waiter", tasks: [{ name: "rounds", taskReferenceName: "rounds", type: "DO_WHILE", inputParameters: {}, loopOver: [wait("approval")], loopCondition: "$.approval.again === true" }] });
    const event = "conductor:ev_repeat_source:approvals";
    await apiOk("POST", "/api/event", handler("ev_repeat", event, [{ action: "complete_task", complete_task: { workflowId: "${waiterId}", taskRefName: "approval", output: { again: true } } }]));
    const waiterId = await startWorkflow("ev_loop_waiter");
    await waitFor(waiterId, waitingIn("approval__1"));
    const message = { event, messageId: crypto.randomUUID(), payload: { waiterId } };
    await publishEvent({ env, scripts: loadScriptRunner }, message, "");
    await waitFor(waiterId, waitingIn("approval__2"));
    await publishEvent({ env, scripts: loadScriptRunner }, message, "");
    const after = await getWorkflow(waiterId);
    expect(after.tasks.map((task) => `${task.referenceTaskName}:${task.status}`)).toEqual(["rounds:IN_PROGRESS", "approval__1:COMPLETED", "approval__2:IN_PROGRESS"]);
  });

  it("start_workflow takes Orkes' idempotencyKey (one execution per key, across messages) and a version given as digits, and starts at the default priority whatever priority it gives", async () => {
    await register({ name: "ev_keyed", tasks: [wait("hold")] });
    const event = "conductor:ev_keyed_source:orders";
    const start = { name: "ev_keyed", version: "1", priority: 7, idempotencyKey: "order-${order}", idempotencyStrategy: "RETURN_EXISTING", input: { order: "${order}" } };
    await apiOk("POST", "/api/event", handler("ev_keyed_start", event, [{ action: "start_workflow", start_workflow: start }]));
    for (const [order, messageId] of [[1, crypto.randomUUID()], [1, crypto.randomUUID()], [2, crypto.randomUUID()]] as const) {
      await publishEvent({ env, scripts: loadScriptRunner }, { event, messageId, payload: { order } }, "");
    }
    // Two messages with order 1 started one execution; order 2 another.
    const records = await apiOk<Array<{ status: string; output: { workflowId: string } }>>("GET", "/api/event/execution/ev_keyed_start");
    expect(records.map((record) => record.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
    // The latest first.
    const [other, second, first] = records.map((record) => record.output.workflowId);
    expect(second).toBe(first);
    expect(other).not.toBe(first);
    // Orkes: "Workflows started by event handlers always use the default priority (0)"; Conductor's StartWorkflow action
    // has no priority. The handler's `priority: 7` is kept as given (a stored handler reads back as it was saved).
    for (const [workflowId, order] of [[first, 1], [other, 2]] as const) expect(await getWorkflow(workflowId!)).toMatchObject({ priority: 0, input: { order } });
    expect((await apiOk<{ actions: Array<{ start_workflow: { priority?: number } }> }>("GET", "/api/event/handler/ev_keyed_start")).actions[0]!.start_workflow.priority).toBe(7);
    // "version": "" (Orkes' docs' event handler) is the latest version, as Jackson reads it into an Integer.
    await apiOk("POST", "/api/event", handler("ev_keyed_latest", "conductor:ev_keyed_source:latest", [{ action: "start_workflow", start_workflow: { name: "ev_keyed", version: "", correlationId: "" } }]));
    expect((await api("POST", "/api/event", handler("ev_keyed_bad", "conductor:ev_keyed_source:bad", [{ action: "start_workflow", start_workflow: { name: "ev_keyed", version: "v1" } }]))).status).toBe(400);
    const handlers = (await apiOk<Array<{ name: string }>>("GET", "/api/event")).map((saved) => saved.name);
    expect([handlers.includes("ev_keyed_latest"), handlers.includes("ev_keyed_bad")]).toEqual([true, false]);
    // A strategy that would refuse the key a message delivered again finds used is refused at registration.
    const refused = await api("POST", "/api/event", handler("ev_keyed_fail", event, [{ action: "start_workflow", start_workflow: { ...start, idempotencyStrategy: "FAIL" } }]));
    expect(refused.status).toBe(400);
    expect((await api("GET", "/api/event/handler/ev_keyed_fail")).status).toBe(404);
  });

  it("start_workflow refuses a correlationId from the payload longer than a start takes (512 characters), starting nothing: no correlation lookup could find the execution", async () => {
    await register({ name: "ev_correlated", tasks: [wait("hold")] });
    const event = "conductor:ev_correlated_source:orders";
    const start = { action: "start_workflow", start_workflow: { name: "ev_correlated", correlationId: "${ref}" } };
    await apiOk("POST", "/api/event", handler("ev_correlated_start", event, [start]));
    // The id a start takes, derived from the message, the handler and the action (by place: these messages carry no actionKeys).
    const startedId = async (messageId: string) => uuidFromDigest(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${messageId}/ev_correlated_start/0`))), 4);
    const tooLong = crypto.randomUUID();
    await publishEvent({ env, scripts: loadScriptRunner }, { event, messageId: tooLong, payload: { ref: "r".repeat(513) } }, "");
    const fits = crypto.randomUUID();
    await publishEvent({ env, scripts: loadScriptRunner }, { event, messageId: fits, payload: { ref: "r".repeat(512) } }, "");
    const records = await apiOk<Array<{ messageId: string; status: string; statusDescription?: string; output: JsonObject }>>("GET", "/api/event/execution/ev_correlated_start");
    const reason = "correlationId must be at most 512 characters, but is 513";
    expect(records.find((record) => record.messageId === tooLong)).toMatchObject({ status: "FAILED", statusDescription: reason, output: { exception: reason } });
    // Nothing started under the id the action would have given it.
    expect((await api("GET", `/api/workflow/${await startedId(tooLong)}`)).status).toBe(404);
    // 512 characters start, as the API's start takes them.
    expect(records.find((record) => record.messageId === fits)).toMatchObject({ status: "COMPLETED", output: { workflowId: await startedId(fits) } });
    expect(await getWorkflow(await startedId(fits))).toMatchObject({ status: "RUNNING", correlationId: "r".repeat(512) });
  });

  it("start_workflow refuses an input its template makes, from the payload, larger than a workflow input may be, starting nothing; the event's other handlers act", async () => {
    await register({ name: "ev_big_input", tasks: [wait("hold")] });
    const event = "conductor:ev_big_input_source:orders";
    // Each copy of the payload's value fits; three of them are over MAX_PAYLOAD_BYTES (768 KiB), which no start through the API could give.
    await apiOk("POST", "/api/event", [
      handler("ev_big_input_copies", event, [{ action: "start_workflow", start_workflow: { name: "ev_big_input", input: { a: "${doc}", b: "${doc}", c: "${doc}" } } }]),
      handler("ev_big_input_once", event, [{ action: "start_workflow", start_workflow: { name: "ev_big_input", input: { a: "${doc}" } } }]),
    ]);
    const messageId = crypto.randomUUID();
    await publishEvent({ env, scripts: loadScriptRunner }, { event, messageId, payload: { doc: "d".repeat(300_000) } }, "");
    const [copies] = await apiOk<Array<{ status: string; statusDescription?: string; output: JsonObject }>>("GET", "/api/event/execution/ev_big_input_copies");
    expect(copies).toMatchObject({ status: "FAILED", statusDescription: expect.stringMatching(/^The workflow input is 9\d{5} bytes, over the limit of 786432 bytes \(MAX_PAYLOAD_BYTES\)$/) });
    // Nothing started under the id the action would have given it (by place: the message carries no actionKeys).
    const wouldStart = uuidFromDigest(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${messageId}/ev_big_input_copies/0`))), 4);
    expect((await api("GET", `/api/workflow/${wouldStart}`)).status).toBe(404);
    const [once] = await apiOk<Array<{ status: string; output: { workflowId: string } }>>("GET", "/api/event/execution/ev_big_input_once");
    expect(once!.status).toBe("COMPLETED");
    expect(await getWorkflow(once!.output.workflowId)).toMatchObject({ status: "RUNNING" });
  });

  it("terminate_workflow keeps at most 500 characters of a terminationReason the payload gives, as a TERMINATE task keeps of its own", async () => {
    await register({ name: "ev_long_reason", tasks: [wait("hold")] });
    const event = "conductor:ev_long_reason_source:stop";
    await apiOk("POST", "/api/event", handler("ev_long_reason_stop", event, [{ action: "terminate_workflow", terminate_workflow: { workflowId: "${id}", terminationReason: "stopped: ${why}" } }]));
    const workflowId = await startWorkflow("ev_long_reason");
    await waitFor(workflowId, waitingIn("hold"));
    // A payload's field may be as large as a task's input (768 KiB): the workflow's reason, in its row, its search row and its listeners' summaries, is not.
    await publishEvent({ env, scripts: loadScriptRunner }, { event, messageId: crypto.randomUUID(), payload: { id: workflowId, why: "w".repeat(300_000) } }, "");
    const terminated = await waitFor(workflowId, ["TERMINATED"]);
    expect(terminated["reasonForIncompletion"]).toBe(`stopped: ${"w".repeat(491)}`);
  });

  it("publish again when their EVENT task runs again (a rerun from it): a start action starts another workflow", async () => {
    await register({ name: "evrr_started", tasks: [httpTask("count", { uri: target("/count/evrr-started"), method: "GET" })] });
    await register({ name: "evrr_publisher", tasks: [eventTask("announce", "conductor:evrr")] });
    await apiOk("POST", "/api/event", handler("evrr_on_announce", "conductor:evrr_publisher:evrr", [{ action: "start_workflow", start_workflow: { name: "evrr_started" } }]));
    const started = async (count: number) => {
      for (let attempt = 0; attempt < 200 && (await hits("evrr-started")) < count; attempt++) await new Promise((resolve) => setTimeout(resolve, 25));
      return hits("evrr-started");
    };
    const publisherId = await startWorkflow("evrr_publisher");
    const first = await waitFor(publisherId, ["COMPLETED"]);
    expect(await started(1)).toBe(1);
    await apiOk("POST", `/api/workflow/${publisherId}/rerun`, { reRunFromTaskId: first.tasks[0]!.taskId });
    await waitFor(publisherId, (w) => w.status === "COMPLETED" && w.updateTime !== first.updateTime);
    expect(await started(2)).toBe(2);
  });

  it("terminate a workflow and update its variables, by ids from the payload; an action that cannot be taken leaves the others to run", async () => {
    await register({ name: "ev_target", tasks: [wait("hold")] });
    await register({ name: "ev_commander", tasks: [eventTask("order", "conductor", { stopId: "${workflow.input.stopId}", tagId: "${workflow.input.tagId}" })] });
    await apiOk("POST", "/api/event", handler("ev_commands", "conductor:ev_commander:order", [
      { action: "complete_task", complete_task: { workflowId: "${missing}", taskRefName: "hold" } },
      { action: "update_workflow_variables", update_workflow_variables: { workflowId: "${tagId}", variables: { taggedBy: "${workflowInstanceId}", stage: 2 } } },
      { action: "terminate_workflow", terminate_workflow: { workflowId: "${stopId}", terminationReason: "stopped by ${workflowInstanceId}" } },
    ]));
    const stop = await startWorkflow("ev_target");
    const tag = await startWorkflow("ev_target");
    await waitFor(tag, waitingIn("hold"));
    const commander = await waitFor(await startWorkflow("ev_commander", { stopId: stop, tagId: tag }), ["COMPLETED", "FAILED"]);
    expect(commander.status).toBe("COMPLETED");
    expect(await waitFor(stop, ["TERMINATED", "COMPLETED", "FAILED"])).toMatchObject({ status: "TERMINATED", reasonForIncompletion: `stopped by ${commander.workflowId}` });
    expect(await getWorkflow(tag)).toMatchObject({ status: "RUNNING", variables: { taggedBy: commander.workflowId, stage: 2 } });
  });

  it("with asyncComplete stay IN_PROGRESS after publishing; a sink this service has no queue for is refused at registration", async () => {
    await register({ name: "ev_async", tasks: [eventTask("announce", "conductor", {}, { asyncComplete: true })] });
    const workflowId = await startWorkflow("ev_async");
    const waiting = await waitFor(workflowId, waitingIn("announce"));
    expect(taskOf(waiting, "announce")!.outputData).toMatchObject({ event_produced: "conductor:ev_async:announce" });
    expect((await api("POST", `/api/tasks/${workflowId}/announce/COMPLETED`, {})).status).toBe(200);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");

    const refused = await api("POST", "/api/metadata/workflow", {
      name: "ev_sqs",
      version: 1,
      schemaVersion: 2,
      ownerEmail: "t@example.com",
      tasks: [eventTask("out", "sqs:orders"), { ...eventTask("none", "conductor"), sink: undefined }],
    });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { validationErrors: Array<{ path: string; message: string }> };
    expect(body.validationErrors.map((issue) => issue.path)).toEqual(["tasks[0].sink", "tasks[1].sink"]);
    expect(body.validationErrors[0]!.message).toContain("not supported");
    expect((await api("GET", "/api/metadata/workflow/ev_sqs")).status).toBe(404);
  });

  it("published by a DYNAMIC running an EVENT, its sink the DYNAMIC's input parameter sink (Conductor's Event reads it from the task's input): the handler acts on it", async () => {
    const dynamicEvent = { name: "d", taskReferenceName: "announce", type: "DYNAMIC", dynamicTaskNameParam: "taskToExecute", inputParameters: { taskToExecute: "EVENT", sink: "conductor:${workflow.input.queue}", orderId: "${workflow.input.orderId}" } };
    await register({ name: "ev_dynamic", tasks: [dynamicEvent, wait("reply")] });
    await apiOk("POST", "/api/event", handler("ev_dynamic_reply", "conductor:ev_dynamic:approvals", [{ action: "complete_task", complete_task: { workflowId: "${workflowInstanceId}", taskRefName: "reply", output: { order: "${orderId}" } } }]));
    const done = await waitFor(await startWorkflow("ev_dynamic", { queue: "approvals", orderId: 42 }), ["COMPLETED", "FAILED"]);
    expect(done.status).toBe("COMPLETED");
    expect(taskOf(done, "announce")).toMatchObject({ taskType: "EVENT", status: "COMPLETED", outputData: { event_produced: "conductor:ev_dynamic:approvals", orderId: 42 } });
    expect(taskOf(done, "reply")).toMatchObject({ status: "COMPLETED", outputData: { order: 42 } });
  });

  it("a sink resolved at run time to one this service has no queue for fails the task for good", async () => {
    await register({ name: "ev_dynamic_sink", tasks: [eventTask("out", "${workflow.input.sink}")] });
    const failed = await waitFor(await startWorkflow("ev_dynamic_sink", { sink: "kafka:orders" }), ["COMPLETED", "FAILED"]);
    expect(failed.status).toBe("FAILED");
    expect(taskOf(failed, "out")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining('sink "kafka:orders" is not supported') });
  });

  it("a publication refused partway (past its invocation's subrequests, as a deployed object is) goes on from the first action not taken when it runs again, where every run took every action again from the first and was refused at the same place, for good", async () => {
    await register({ name: "ev_many_started", tasks: [wait("hold")] });
    await register({ name: "ev_many_publisher", tasks: [eventTask("announce", "conductor:many")] });
    const actions = Array.from({ length: 5 }, (_, n) => ({ action: "start_workflow", start_workflow: { name: "ev_many_started", input: { n } } }));
    await apiOk("POST", "/api/event", handler("ev_many", "conductor:ev_many_publisher:many", actions));
    // Two starts per invocation of the publisher (a fresh one at each of its alarms), the next refused as Cloudflare
    // refuses a subrequest past the count; workerd counts none.
    let publisher: DurableObjectId | undefined;
    let starts = 0;
    const { start, alarm } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.start = async function (this: WorkflowExecution, params: Parameters<WorkflowExecution["start"]>[0]) {
      if (params.event !== undefined && ++starts > 2) throw new Error("Too many subrequests.");
      return start.call(this, params);
    };
    WorkflowExecution.prototype.alarm = function (this: WorkflowExecution) {
      if (publisher !== undefined && (this as unknown as { ctx: DurableObjectState }).ctx.id.equals(publisher)) starts = 0;
      return alarm.call(this);
    };
    try {
      const publisherId = await startWorkflow("ev_many_publisher");
      publisher = env.WORKFLOW_EXECUTION.idFromName(publisherId);
      expect((await waitFor(publisherId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
      const records = await eventually(() => apiOk<Array<{ status: string; output: { workflowId: string } }>>("GET", "/api/event/execution/ev_many"), (list) => list.length === 5, "the five actions recorded", 20_000);
      expect(records.map((record) => record.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED"]);
      expect(new Set(records.map((record) => record.output.workflowId)).size).toBe(5);
    } finally {
      WorkflowExecution.prototype.start = start;
      WorkflowExecution.prototype.alarm = alarm;
    }
  });

  it("a handler edited between a run refused partway and the next (an action put before the one taken) runs the new action and not the taken one again: progress and start ids follow each action's content, where by place the new one was passed over and the taken one started a second workflow", async () => {
    await register({ name: "ev_edit_started", tasks: [wait("hold")] });
    await register({ name: "ev_edit_publisher", tasks: [eventTask("announce", "conductor:edit")] });
    const start = (n: string) => ({ action: "start_workflow", start_workflow: { name: "ev_edit_started", input: { n } } });
    const event = "conductor:ev_edit_publisher:edit";
    await apiOk("POST", "/api/event", handler("ev_edit", event, [start("a"), start("b")]));
    // "b" is refused (as a subrequest past the count is) until the handler has been edited; the ids each start asked for, by n.
    const asked = new Map<string, Set<string>>();
    let edited = false;
    // A gate polled by the test, not a promise the test made resolved in the started object's request: after that,
    // abortAllDurableObjects() in a later test of the file hung for good (see gate() in helpers.ts).
    const refused = gate();
    const { start: realStart } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.start = async function (this: WorkflowExecution, params: Parameters<WorkflowExecution["start"]>[0]) {
      const n = params.event === undefined ? undefined : String(params.input?.["n"]);
      if (n === "b" && !edited) {
        refused.hit();
        throw new Error("Too many subrequests.");
      }
      if (n !== undefined) asked.set(n, (asked.get(n) ?? new Set()).add(params.workflowId!));
      return realStart.call(this, params);
    };
    try {
      const publisherId = await startWorkflow("ev_edit_publisher");
      await refused.reached;
      // The operator puts an action before the one taken.
      await apiOk("PUT", "/api/event", handler("ev_edit", event, [start("c"), start("a"), start("b")]));
      edited = true;
      expect((await waitFor(publisherId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
      const records = await eventually(() => apiOk<Array<{ id: string; status: string }>>("GET", "/api/event/execution/ev_edit"), (list) => list.length === 3, "the three actions recorded", 20_000);
      expect(records.map((record) => record.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
    } finally {
      WorkflowExecution.prototype.start = realStart;
    }
    // One workflow each: "c" started, "a" not started again.
    expect(Object.fromEntries([...asked].map(([n, ids]) => [n, ids.size]))).toEqual({ a: 1, b: 1, c: 1 });
  });

  it("a publication taken in one run, the usual case, writes none of its actions' progress (each a row written and one deleted); only a run that fails does", async () => {
    await register({ name: "ev_plain_started", tasks: [wait("hold")] });
    await register({ name: "ev_plain_publisher", tasks: [eventTask("announce", "conductor:plain")] });
    const actions = Array.from({ length: 3 }, (_, n) => ({ action: "start_workflow", start_workflow: { name: "ev_plain_started", input: { n } } }));
    await apiOk("POST", "/api/event", handler("ev_plain", "conductor:ev_plain_publisher:plain", actions));
    const written: string[] = [];
    const { setMeta } = ExecutionStore.prototype;
    ExecutionStore.prototype.setMeta = function (this: ExecutionStore, key: string, value: string) {
      if (key.startsWith("eventAction:")) written.push(key);
      return setMeta.call(this, key, value);
    };
    try {
      expect((await waitFor(await startWorkflow("ev_plain_publisher"), ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
      const records = await eventually(() => apiOk<Array<{ status: string }>>("GET", "/api/event/execution/ev_plain"), (list) => list.length === 3, "the three actions recorded");
      expect(records.map((record) => record.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
    } finally {
      ExecutionStore.prototype.setMeta = setMeta;
    }
    expect(written).toEqual([]);
  });
});

describe("what handlers did with each event (Orkes' event executions and messages)", () => {
  interface ExecutionJson {
    id: string;
    messageId: string;
    name: string;
    event: string;
    action: string;
    status: string;
    statusDescription?: string;
    output: JsonObject;
    payload?: JsonObject;
  }
  interface MessageJson {
    id: string;
    eventTarget: string;
    status: string;
    statusDescription?: string;
    fullPayload: JsonObject;
    payload: string;
    eventExecutions: ExecutionJson[];
  }

  it("records each action of each active handler: COMPLETED with its output, FAILED with why, SKIPPED when the condition is false", async () => {
    await register({ name: "evrec_started", tasks: [wait("hold")] });
    await register({ name: "evrec_publisher", tasks: [eventTask("announce", "conductor:orders", { order: "${workflow.input.order}" })] });
    const event = "conductor:evrec_publisher:orders";
    await apiOk("POST", "/api/event", [
      handler("evrec_acts", event, [
        { action: "start_workflow", start_workflow: { name: "evrec_started", input: { order: "${order}" } } },
        // No workflowId in the payload: it cannot be taken.
        { action: "complete_task", complete_task: { workflowId: "${missing}", taskRefName: "hold" } },
      ]),
      handler("evrec_never", event, [{ action: "terminate_workflow", terminate_workflow: { workflowId: "${workflowInstanceId}" } }], { condition: "$.order > 100" }),
    ]);
    const publisherId = await startWorkflow("evrec_publisher", { order: 7 });
    const messageId = taskOf(await waitFor(publisherId, ["COMPLETED", "FAILED"]), "announce")!.taskId;

    // The handlers run once the EVENT task has completed, and record what they did then.
    const acts = await eventually(() => apiOk<ExecutionJson[]>("GET", "/api/event/execution/evrec_acts"), (list) => list.length === 2, "the handler's actions recorded");
    expect(acts.map((execution) => [execution.action, execution.status])).toEqual(expect.arrayContaining([["start_workflow", "COMPLETED"], ["complete_task", "FAILED"]]));
    expect(acts).toHaveLength(2);
    const started = acts.find((execution) => execution.action === "start_workflow")!;
    // The message is the EVENT task's output, event_produced too (an addition: Conductor's message lacks it).
    expect(started).toMatchObject({ messageId, name: "evrec_acts", event, payload: { order: 7, workflowInstanceId: publisherId, event_produced: event } });
    // Conductor's Workflow names the event whose handler started it; a workflow started otherwise names none.
    expect(await getWorkflow(String(started.output["workflowId"]))).toMatchObject({ workflowName: "evrec_started", event });
    expect((await getWorkflow(publisherId))["event"]).toBeUndefined();
    // Search shows it (Conductor's WorkflowSummary.event), and queries and sorts by it, a keyword of Conductor's index.
    const startedId = String(started.output["workflowId"]);
    const both = "workflowType IN (evrec_started, evrec_publisher)";
    const searched = async (query: string, sort: string) =>
      (await apiOk<{ results: JsonObject[] }>("GET", `/api/workflow/search?query=${encodeURIComponent(query)}&sort=${encodeURIComponent(sort)}`)).results;
    await waitForIndexRow(startedId, "RUNNING");
    await waitForIndexRow(publisherId, "COMPLETED");
    expect(await searched(`${both} AND event = '${event}'`, "startTime:ASC")).toEqual([expect.objectContaining({ workflowId: startedId, event })]);
    // The publisher has none: last either way.
    for (const direction of ["ASC", "DESC"]) expect((await searched(both, `event:${direction}`)).map((row) => row["workflowId"])).toEqual([startedId, publisherId]);
    // Conductor's DefaultEventProcessor records a failed action's error as output.exception too.
    expect(acts.find((execution) => execution.action === "complete_task")).toMatchObject({ statusDescription: "no workflowId in the payload", output: { exception: "no workflowId in the payload" } });
    expect(await apiOk<ExecutionJson[]>("GET", "/api/event/execution/evrec_never")).toEqual([
      expect.objectContaining({ messageId, action: "terminate_workflow", status: "SKIPPED", statusDescription: "condition is not true (it gave false; only true or a number above 0 holds)", output: {} }),
    ]);
    // The publisher was not terminated by the skipped action.
    expect((await getWorkflow(publisherId)).status).toBe("COMPLETED");

    const [message] = await apiOk<MessageJson[]>("GET", `/api/event/message/${encodeURIComponent(event)}`);
    expect(message).toMatchObject({ id: messageId, eventTarget: event, status: "HANDLED", fullPayload: { order: 7 } });
    expect(JSON.parse(message!.payload)).toEqual(message!.fullPayload);
    expect(message!.eventExecutions.map((execution) => `${execution.name}:${execution.action}:${execution.status}`).sort()).toEqual([
      "evrec_acts:complete_task:FAILED",
      "evrec_acts:start_workflow:COMPLETED",
      "evrec_never:terminate_workflow:SKIPPED",
    ]);
    // Per handler and per event, how much is recorded.
    const byHandler = await apiOk<{ totalHits: number; results: JsonObject[] }>("GET", "/api/event/execution");
    expect(byHandler.results).toEqual(expect.arrayContaining([{ name: "evrec_acts", event, active: true, numberOfActions: 2, numberOfMessages: 1 }]));
    // The same rows, as Orkes' HandledEventResponse (the JavaScript and Python clients' getEventHandlersWithStats read them here).
    const withStats = await apiOk<{ totalHits: number; results: JsonObject[] }>("GET", "/api/event/message");
    expect(withStats).toEqual(byHandler);
    // Deleting a handler deletes what it did.
    await apiOk("DELETE", "/api/event/evrec_never");
    expect(await apiOk<ExecutionJson[]>("GET", "/api/event/execution/evrec_never")).toEqual([]);
  });

  it("show the values the publishing task shows masked (its definition's maskedFields, _masked, _secrets) as ***, while the handlers act on the real ones", async () => {
    await register({ name: "evmask_waiter", tasks: [wait("approval")] });
    await register({ name: "evmask_publisher", maskedFields: ["ssn"], tasks: [eventTask("announce", "conductor", { waiterId: "${workflow.input.waiterId}", ssn: "${workflow.input.ssn}", _masked: { card: "4111" }, plain: "shown" })] });
    const event = "conductor:evmask_publisher:announce";
    await apiOk("POST", "/api/event", handler("evmask_h", event, [{ action: "complete_task", complete_task: { workflowId: "${waiterId}", taskRefName: "approval", output: { ssn: "${ssn}", _masked: { card: "${_masked.card}" }, copied: "${ssn}" } } }]));
    const waiterId = await startWorkflow("evmask_waiter");
    await waitFor(waiterId, waitingIn("approval"));
    const publisherId = await startWorkflow("evmask_publisher", { waiterId, ssn: "123-45-6789" });
    expect(taskOf(await waitFor(publisherId, ["COMPLETED", "FAILED"]), "announce")!.outputData).toMatchObject({ ssn: "***", _masked: "***", plain: "shown" });
    // The handler read the real values (the waiter, which masks no ssn, shows them).
    const approved = await waitFor(waiterId, ["COMPLETED", "FAILED"]);
    expect(taskOf(approved, "approval")!.outputData).toMatchObject({ ssn: "123-45-6789", copied: "123-45-6789", _masked: "***" });
    const [execution] = await eventually(() => apiOk<ExecutionJson[]>("GET", "/api/event/execution/evmask_h"), (list) => list.length === 1, "the action recorded");
    // The record shows them as the EVENT task's output does: masked by key, a value copied under another key as it is.
    expect(execution!.payload).toMatchObject({ ssn: "***", _masked: "***", plain: "shown" });
    expect(execution!.output).toMatchObject({ ssn: "***", _masked: "***", copied: "123-45-6789" });
    const [message] = await apiOk<MessageJson[]>("GET", `/api/event/message/${encodeURIComponent(event)}`);
    expect(message!.fullPayload).toMatchObject({ ssn: "***", _masked: "***", plain: "shown" });
    expect(message!.payload).not.toContain("123-45-6789");
    expect(message!.payload).not.toContain("4111");
  });

  it("show *** for a masked value a handler's condition quotes in failing, in the record and its statusDescription", async () => {
    await register({ name: "evmask_cond_publisher", maskedFields: ["ssn"], tasks: [eventTask("announce", "conductor", { ssn: "${workflow.input.ssn}" })] });
    const event = "conductor:evmask_cond_publisher:announce";
    await apiOk("POST", "/api/event", handler("evmask_cond_h", event, [{ action: "terminate_workflow", terminate_workflow: { workflowId: "${workflowInstanceId}" } }], { condition: "JSON.parse($.ssn) > 0" }));
    const publisherId = await startWorkflow("evmask_cond_publisher", { ssn: "qx8ssn-45-6789" });
    await waitFor(publisherId, ["COMPLETED", "FAILED"]);
    const [execution] = await eventually(() => apiOk<ExecutionJson[]>("GET", "/api/event/execution/evmask_cond_h"), (list) => list.length === 1, "the action recorded");
    expect(execution!.status).toBe("SKIPPED");
    expect(execution!.statusDescription).toContain("***");
    const [message] = await apiOk<MessageJson[]>("GET", `/api/event/message/${encodeURIComponent(event)}`);
    expect(JSON.stringify([execution, message])).not.toContain("qx8ssn");
  });

  it("act on the real values of masked keys: a start_workflow's input and a complete_task's output get them, copied under other keys, though the record shows the payload masked", async () => {
    await register({ name: "evreal_waiter", tasks: [wait("approval")] });
    await register({ name: "evreal_started", tasks: [wait("hold")] });
    await register({ name: "evreal_publisher", maskedFields: ["ssn"], tasks: [eventTask("announce", "conductor", { waiterId: "${workflow.input.waiterId}", ssn: "${workflow.input.ssn}", _masked: { card: "4111" }, _secrets: { pin: "0000" } })] });
    const event = "conductor:evreal_publisher:announce";
    const copies = { ssnSeen: "${ssn}", cardSeen: "${_masked.card}", pinSeen: "${_secrets.pin}", text: "ssn ${ssn} card ${_masked.card}" };
    await apiOk("POST", "/api/event", handler("evreal_h", event, [
      { action: "start_workflow", start_workflow: { name: "evreal_started", input: copies } },
      { action: "complete_task", complete_task: { workflowId: "${waiterId}", taskRefName: "approval", output: copies } },
    ]));
    const waiterId = await startWorkflow("evreal_waiter");
    await waitFor(waiterId, waitingIn("approval"));
    const publisherId = await startWorkflow("evreal_publisher", { waiterId, ssn: "123-45-6789" });
    expect((await waitFor(publisherId, ["COMPLETED", "FAILED"])).status).toBe("COMPLETED");
    const real = { ssnSeen: "123-45-6789", cardSeen: "4111", pinSeen: "0000", text: "ssn 123-45-6789 card 4111" };
    // Neither target masks these keys: what they show is what the handler gave them.
    expect(taskOf(await waitFor(waiterId, ["COMPLETED", "FAILED"]), "approval")!.outputData).toMatchObject(real);
    const records = await eventually(() => apiOk<ExecutionJson[]>("GET", "/api/event/execution/evreal_h"), (list) => list.length === 2, "the actions recorded");
    const started = records.find((record) => record.action === "start_workflow")!;
    expect((await getWorkflow(String(started.output["workflowId"]))).input).toMatchObject(real);
    // The publisher's own output and the record still show the keys masked.
    expect(taskOf(await getWorkflow(publisherId), "announce")!.outputData).toMatchObject({ ssn: "***", _masked: "***", _secrets: "***" });
    expect(started.payload).toMatchObject({ ssn: "***", _masked: "***", _secrets: "***" });
  });

  it("a message owed from before its record masked (stored without the publisher's maskedFields) is delivered, acted on with its real values, and recorded with the publisher's maskedFields as ***", async () => {
    await register({ name: "evold_started", tasks: [wait("hold")] });
    await register({ name: "evold_publisher", maskedFields: ["ssn"], tasks: [wait("hold")] });
    const event = "conductor:evold_publisher:announce";
    await apiOk("POST", "/api/event", handler("evold_h", event, [{ action: "start_workflow", start_workflow: { name: "evold_started", input: { ssnSeen: "${ssn}" } } }]));
    const publisherId = await startWorkflow("evold_publisher");
    await waitFor(publisherId, waitingIn("hold"));
    const messageId = crypto.randomUUID();
    // The message as an EVENT task's decision stored it before messages carried maskedFields, owed when the object was evicted.
    const owed = { event, messageId, payload: { ssn: "123-45-6789", workflowInstanceId: publisherId, event_produced: event } };
    await runInDurableObject(executionStub(env, publisherId), (_instance, state) => {
      state.storage.sql.exec(`INSERT INTO meta (key, value) VALUES (?, ?)`, `statusPublication:${messageId}`, JSON.stringify(owed));
    });
    await abortAllDurableObjects();
    await getWorkflow(publisherId);
    const [record] = await eventually(() => apiOk<ExecutionJson[]>("GET", "/api/event/execution/evold_h"), (list) => list.length === 1, "the owed message's action recorded");
    expect(record).toMatchObject({ messageId, status: "COMPLETED" });
    expect((await getWorkflow(String(record!.output["workflowId"]))).input).toMatchObject({ ssnSeen: "123-45-6789" });
    expect(record!.payload).toMatchObject({ ssn: "***" });
    const [message] = await apiOk<MessageJson[]>("GET", `/api/event/message/${encodeURIComponent(event)}`);
    expect(message!.payload).not.toContain("123-45-6789");
  });

  it("a message owed from before actions were keyed by content goes on by place: its progress kept by place is read, and what it starts keeps the ids its first run gave", async () => {
    await register({ name: "evlegacy_started", tasks: [wait("hold")] });
    await register({ name: "evlegacy_publisher", tasks: [wait("hold")] });
    const event = "conductor:evlegacy_publisher:announce";
    const start = (n: string) => ({ action: "start_workflow", start_workflow: { name: "evlegacy_started", input: { n } } });
    await apiOk("POST", "/api/event", handler("evlegacy_h", event, [start("a"), start("b")]));
    const publisherId = await startWorkflow("evlegacy_publisher");
    await waitFor(publisherId, waitingIn("hold"));
    const messageId = crypto.randomUUID();
    // As a run before the deploy left it: refused after its first action, whose record it kept by place.
    const owed = { event, messageId, payload: { workflowInstanceId: publisherId } };
    const takenBefore = { handler: "evlegacy_h", index: 0, action: "start_workflow", status: "COMPLETED", output: { workflowId: "started-before-the-deploy" } };
    await runInDurableObject(executionStub(env, publisherId), (_instance, state) => {
      state.storage.sql.exec(`INSERT INTO meta (key, value) VALUES (?, ?)`, `statusPublication:${messageId}`, JSON.stringify(owed));
      state.storage.sql.exec(`INSERT INTO meta (key, value) VALUES (?, ?)`, `eventAction:${messageId}\u0000evlegacy_h\u00000`, JSON.stringify(takenBefore));
    });
    await abortAllDurableObjects();
    await getWorkflow(publisherId);
    const records = await eventually(() => apiOk<ExecutionJson[]>("GET", "/api/event/execution/evlegacy_h"), (list) => list.length === 2, "the owed message's actions recorded");
    const byId = Object.fromEntries(records.map((record) => [record.id, record.output["workflowId"]]));
    const placeId = uuidFromDigest(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${messageId}/evlegacy_h/1`))), 4);
    expect(byId).toEqual({ [`${messageId}/evlegacy_h/0`]: "started-before-the-deploy", [`${messageId}/evlegacy_h/1`]: placeId });
    expect((await getWorkflow(placeId)).input).toMatchObject({ n: "b" });
  });

  it("a publication repeated after its record was written (evicted before it was marked done), its handler edited between, shows each place's new action", async () => {
    await register({ name: "evredo_started", tasks: [wait("hold")] });
    await register({ name: "evredo_publisher", tasks: [wait("hold")] });
    const event = "conductor:evredo_publisher:announce";
    await apiOk("POST", "/api/event", handler("evredo_h", event, [{ action: "start_workflow", start_workflow: { name: "evredo_started", input: {} } }]));
    const publisherId = await startWorkflow("evredo_publisher");
    await waitFor(publisherId, waitingIn("hold"));
    const messageId = crypto.randomUUID();
    // The same message owed twice: the second run is the one an eviction after the record's write leaves owed.
    const publish = async () => {
      const owed = { event, messageId, payload: { workflowInstanceId: publisherId }, actionKeys: "content" };
      await runInDurableObject(executionStub(env, publisherId), (_instance, state) => {
        state.storage.sql.exec(`INSERT INTO meta (key, value) VALUES (?, ?)`, `statusPublication:${messageId}`, JSON.stringify(owed));
      });
      await abortAllDurableObjects();
      await getWorkflow(publisherId);
    };
    await publish();
    await eventually(() => apiOk<ExecutionJson[]>("GET", "/api/event/execution/evredo_h"), (list) => list[0]?.status === "COMPLETED", "the first run's record");
    // The operator puts another action in the start's place.
    await apiOk("PUT", "/api/event", handler("evredo_h", event, [{ action: "complete_task", complete_task: { workflowId: "${workflowInstanceId}", taskRefName: "no_such_task" } }]));
    await publish();
    const [record] = await eventually(() => apiOk<ExecutionJson[]>("GET", "/api/event/execution/evredo_h"), (list) => list[0]?.status === "FAILED", "the second run's record");
    expect(record).toMatchObject({ id: `${messageId}/evredo_h/0`, action: "complete_task", status: "FAILED" });
  });

  it("read conditions as Conductor: over the payload with inline JSON text expanded, holding for true or a number above 0 only", async () => {
    await register({ name: "evcond_started", tasks: [wait("hold")] });
    await register({ name: "evcond_publisher", tasks: [eventTask("announce", "conductor:refunds", { msg: "${workflow.input.msg}", state: "FAILED" })] });
    const event = "conductor:evcond_publisher:refunds";
    const start = [{ action: "start_workflow", start_workflow: { name: "evcond_started", input: {} } }];
    await apiOk("POST", "/api/event", [
      handler("evcond_expanded", event, start, { condition: "$.msg.type == 'refund'" }),
      // Truthy in JavaScript, yet no boolean or positive number: Conductor's ScriptEvaluator.toBoolean says false.
      handler("evcond_text", event, start, { condition: "$.state" }),
      handler("evcond_number", event, start, { condition: "$.msg.amount" }),
      // Conductor evaluates any condition StringUtils.isNotEmpty passes: spaces give no true, so the actions are skipped;
      // only an empty one means none.
      handler("evcond_blank", event, start, { condition: "  " }),
      handler("evcond_empty", event, start, { condition: "" }),
    ]);
    await waitFor(await startWorkflow("evcond_publisher", { msg: JSON.stringify({ type: "refund", amount: 3 }) }), ["COMPLETED", "FAILED"]);
    const statusOf = async (name: string) =>
      (await eventually(() => apiOk<ExecutionJson[]>("GET", `/api/event/execution/${name}`), (list) => list.length > 0, `${name}'s action recorded`)).map((execution) => execution.status);
    expect(await statusOf("evcond_expanded")).toEqual(["COMPLETED"]);
    expect(await statusOf("evcond_text")).toEqual(["SKIPPED"]);
    expect(await statusOf("evcond_number")).toEqual(["COMPLETED"]);
    expect(await statusOf("evcond_blank")).toEqual(["SKIPPED"]);
    expect(await statusOf("evcond_empty")).toEqual(["COMPLETED"]);
  });

  it("take value-param conditions, as Conductor's ValueParamEvaluator: the payload field the condition names must be true or a number above 0", async () => {
    await register({ name: "evvalue_started", tasks: [wait("hold")] });
    await register({ name: "evvalue_publisher", tasks: [eventTask("announce", "conductor:checks", { approved: "${workflow.input.approved}", state: "OK" })] });
    const event = "conductor:evvalue_publisher:checks";
    const start = [{ action: "start_workflow", start_workflow: { name: "evvalue_started", input: {} } }];
    const valueParam = (condition: string) => ({ condition, evaluatorType: "value-param" });
    expect((await api("POST", "/api/event", [handler("evvalue_approved", event, start, valueParam("approved")), handler("evvalue_state", event, start, valueParam("state")), handler("evvalue_missing", event, start, valueParam("absent"))])).status).toBe(200);
    expect(await apiOk("GET", "/api/event/handler/evvalue_approved")).toMatchObject({ condition: "approved", evaluatorType: "value-param" });
    for (const approved of [true, false]) await waitFor(await startWorkflow("evvalue_publisher", { approved }), ["COMPLETED", "FAILED"]);
    const statusesOf = async (name: string) =>
      (await eventually(() => apiOk<ExecutionJson[]>("GET", `/api/event/execution/${name}`), (list) => list.length === 2, `${name}'s actions recorded`)).map((execution) => [execution.payload?.["approved"], execution.status]);
    expect((await statusesOf("evvalue_approved")).sort()).toEqual([[false, "SKIPPED"], [true, "COMPLETED"]]);
    // Text is no boolean (ScriptEvaluator.toBoolean), and a field the payload lacks holds nothing.
    expect(new Set((await statusesOf("evvalue_state")).map(([, status]) => status))).toEqual(new Set(["SKIPPED"]));
    expect(new Set((await statusesOf("evvalue_missing")).map(([, status]) => status))).toEqual(new Set(["SKIPPED"]));
    // Another evaluator is still refused.
    expect((await api("POST", "/api/event", handler("evvalue_python", event, start, { condition: "approved", evaluatorType: "python" }))).status).toBe(400);
  });

  it("a handler deleted while its actions run leaves no record of them behind: a handler created again under its name shows none, where the record written after the deletion was kept for good", async () => {
    await register({ name: "evrec_gone_started", tasks: [wait("hold")] });
    await register({ name: "evrec_gone_publisher", tasks: [eventTask("announce", "conductor:gone")] });
    const event = "conductor:evrec_gone_publisher:gone";
    await apiOk("POST", "/api/event", handler("evrec_gone", event, [{ action: "start_workflow", start_workflow: { name: "evrec_gone_started" } }]));
    // The handler's start held on its way to the new execution (the network boundary), while the handler is deleted.
    const crossing = gate();
    const { start } = WorkflowExecution.prototype;
    WorkflowExecution.prototype.start = async function (this: WorkflowExecution, params: Parameters<WorkflowExecution["start"]>[0]) {
      if (params.event === event) {
        crossing.hit();
        await crossing.released;
      }
      return start.call(this, params);
    };
    try {
      const publisherId = await startWorkflow("evrec_gone_publisher");
      await crossing.reached;
      await apiOk("DELETE", "/api/event/evrec_gone");
      crossing.release();
      const messageId = taskOf(await waitFor(publisherId, ["COMPLETED", "FAILED"]), "announce")!.taskId;
      // The message is recorded in the batch that would record the action: once it is there, so is all the record.
      const [message] = await eventually(() => apiOk<MessageJson[]>("GET", `/api/event/message/${encodeURIComponent(event)}`), (list) => list.length === 1, "the message recorded");
      // Still HANDLED, as when the handler is deleted after the record: its action was taken (the execution it started
      // runs), only the record of it went with the handler.
      expect(message).toMatchObject({ id: messageId, status: "HANDLED", eventExecutions: [] });
      expect(message).not.toHaveProperty("statusDescription");
    } finally {
      WorkflowExecution.prototype.start = start;
    }
    await eventually(() => apiOk<string[]>("GET", "/api/workflow/running/evrec_gone_started"), (ids) => ids.length === 1, "the started execution listed as running");
    expect(await apiOk<ExecutionJson[]>("GET", "/api/event/execution/evrec_gone")).toEqual([]);
    await apiOk("POST", "/api/event", handler("evrec_gone", event, []));
    expect(await apiOk<ExecutionJson[]>("GET", "/api/event/execution/evrec_gone")).toEqual([]);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM event_executions WHERE handler_name = 'evrec_gone'").first("n")).toBe(0);
  });

  it("records an event no active handler acted on as RECEIVED, and pages with from", async () => {
    await register({ name: "evrec_lonely", tasks: [eventTask("shout", "conductor:void", { n: "${workflow.input.n}" })] });
    const event = "conductor:evrec_lonely:void";
    // A handler with no actions yet (Orkes takes one; its JavaScript client's tests add them so) acts on nothing.
    expect((await api("POST", "/api/event", handler("evrec_idle", event, []))).status).toBe(200);
    expect(await apiOk("GET", "/api/event/handler/evrec_idle")).toMatchObject({ event, active: true, actions: [] });
    for (const n of [1, 2]) await waitFor(await startWorkflow("evrec_lonely", { n }), ["COMPLETED", "FAILED"]);
    const messages = await eventually(() => apiOk<MessageJson[]>("GET", `/api/event/message/${encodeURIComponent(event)}`), (list) => list.length === 2, "both messages recorded");
    expect(messages.map((message) => [message.fullPayload["n"], message.status, message.eventExecutions.length])).toEqual([
      [2, "RECEIVED", 0],
      [1, "RECEIVED", 0],
    ]);
    expect(messages[0]!.statusDescription).toBe("no active handler acted on it");
    expect((await apiOk<MessageJson[]>("GET", `/api/event/message/${encodeURIComponent(event)}?from=1`)).map((message) => message.fullPayload["n"])).toEqual([1]);
    expect((await api("GET", `/api/event/message/${encodeURIComponent(event)}?from=-1`)).status).toBe(400);
  });

  it("counts each handler's recorded actions and messages reading each recorded action once, not once for each count", async () => {
    const event = "conductor:evstats:announce";
    await apiOk("POST", "/api/event", [
      handler("evstats_two", event, [{ action: "start_workflow", start_workflow: { name: "evstats_none" } }]),
      handler("evstats_one", event, [{ action: "start_workflow", start_workflow: { name: "evstats_none" } }]),
    ]);
    // 150 messages, each with two actions of evstats_two and one of evstats_one, written straight into D1.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 449)
       INSERT INTO event_executions (id, message_id, handler_name, event, action, status, output, created)
       SELECT printf('evstats-m%03d/%s/%d', i / 3, CASE WHEN i % 3 = 2 THEN 'evstats_one' ELSE 'evstats_two' END, i % 3), printf('evstats-m%03d', i / 3),
         CASE WHEN i % 3 = 2 THEN 'evstats_one' ELSE 'evstats_two' END, ?1, 'start_workflow', 'COMPLETED', '{}', 1000 + i FROM n`,
    )
      .bind(event)
      .run();
    let stats: { results: JsonObject[] } | undefined;
    const [statement, ...more] = (await statementsOf(async () => {
      stats = await apiOk("GET", "/api/event/execution");
    })).filter((sql) => sql.includes("event_executions"));
    expect(more).toEqual([]);
    expect(stats!.results).toEqual(
      expect.arrayContaining([
        { name: "evstats_one", event, active: true, numberOfActions: 150, numberOfMessages: 150 },
        { name: "evstats_two", event, active: true, numberOfActions: 300, numberOfMessages: 150 },
      ]),
    );
    // Every recorded action and handler once (and each handler's end of its range): the two counts of each handler
    // read its actions twice, 900 rows here, the handlers' 1,000 each at their bound.
    const [recorded, handlers] = await Promise.all(["event_executions", "event_handlers"].map(async (table) => (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>())!.n));
    const rowsRead = (await env.DB.prepare(statement!).all()).meta.rows_read;
    expect(rowsRead).toBeLessThanOrEqual(recorded! + 2 * handlers!);
    await apiOk("DELETE", "/api/event/evstats_two");
    await apiOk("DELETE", "/api/event/evstats_one");
  });
});
