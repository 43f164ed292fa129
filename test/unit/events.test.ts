import { describe, expect, it } from "vitest";
import { createExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import { eventStamp, expandInlineJson, payloadValue, taskAction, unfollowablePath, withPayload } from "../../src/engine/event-params";
import type { WorkflowDef } from "../../src/engine/model";
import { eventName } from "../../src/engine/tasks/event";
import { env, registrationErrors } from "./engine-env";

describe("EVENT tasks", () => {
  it("name their event as Conductor does: conductor gives conductor:<workflow>:<reference>, conductor:<queue> gives conductor:<workflow>:<queue>", () => {
    expect(eventName("conductor", "orders", "announce")).toEqual({ event: "conductor:orders:announce" });
    expect(eventName("conductor:approvals", "orders", "announce")).toEqual({ event: "conductor:orders:approvals" });
    for (const sink of ["conductor:", "sqs:orders", "kafka:x", "", 5, undefined]) expect(eventName(sink, "orders", "announce")).toHaveProperty("invalid");
  });

  it("take their sink from the task, resolved with the input, and start dispatched; a sink other than conductor's is refused at registration", () => {
    const definition = validateWorkflowDef({
      name: "orders",
      version: 1,
      schemaVersion: 2,
      tasks: [{ name: "announce", taskReferenceName: "announce", type: "EVENT", sink: "${workflow.input.sink}", inputParameters: { order: "${workflow.input.order}" } }],
    });
    if (!definition.ok) throw new Error(JSON.stringify(definition.errors));
    const { state, effects } = decide(createExecution({ workflowId: "wf-1", definition: definition.value as WorkflowDef, input: { sink: "conductor:q", order: 3 } }, 1_000), { type: "start" }, env(1_000));
    expect(state.tasks[0]).toMatchObject({ taskType: "EVENT", status: "IN_PROGRESS", inputData: { order: 3, sink: "conductor:q" } });
    expect(effects.filter((effect) => effect.kind === "dispatch")).toHaveLength(1);
    expect(registrationErrors([{ name: "out", taskReferenceName: "out", type: "EVENT", sink: "sqs:orders", inputParameters: {} }])).toEqual([
      expect.stringMatching(/^tasks\[0\]\.sink: sink "sqs:orders" is not supported/),
    ]);
    expect(registrationErrors([{ name: "out", taskReferenceName: "out", type: "EVENT", inputParameters: {} }])).toEqual([expect.stringMatching(/^tasks\[0\]\.sink: an EVENT task's sink must be conductor/)]);
  });
});

describe("event handler actions' parameters", () => {
  const payload = { workflowInstanceId: "wf-9", order: { id: 7, items: [{ sku: "a b" }], "unit price": 2.5 }, tags: ["x"], none: null };

  it("take the payload's values: a whole ${path} keeps its type, one inside text is written as text; a missing path is null", () => {
    expect(withPayload({ id: "${workflowInstanceId}", order: "${order.id}", sku: "${$.order.items[0].sku}", price: "${order['unit price']}", tags: "${tags}" }, payload)).toEqual({
      id: "wf-9",
      order: 7,
      sku: "a b",
      price: 2.5,
      tags: ["x"],
    });
    // A missing value is written "null", as Conductor's Objects.toString (and workflow expressions) write it; $${ is a literal ${.
    expect(withPayload("order ${order.id} of ${workflowInstanceId}: ${tags} ${missing}${none} $${order.id}", payload)).toBe('order 7 of wf-9: ["x"] nullnull ${order.id}');
    expect(withPayload(["${order.id}", 1, null, { "${order.id}": true }], payload)).toEqual([7, 1, null, { "${order.id}": true }]);
    expect(payloadValue(payload, "order.items[5].sku")).toBeNull();
    expect(payloadValue(payload, "constructor")).toBeNull();
    expect(payloadValue(payload, "tags[0]")).toBe("x");
    // A negative index counts from the end, as JsonPath's.
    expect(payloadValue(payload, "tags[-1]")).toBe("x");
    expect(payloadValue(payload, "order.items[-1].sku")).toBe("a b");
  });

  it("resolve ${} and a blank ${   } to an empty string, as Conductor's ParametersUtils does: not to the whole payload", () => {
    expect(withPayload({ empty: "${}", blank: "${   }", text: "a-${}-b-${ }-c", whole: "${$}" }, { n: 3 })).toEqual({ empty: "", blank: "", text: "a--b--c", whole: { n: 3 } });
    expect(unfollowablePath({ empty: "${}", blank: "${ }" })).toBeUndefined();
  });

  it("refuse at registration a path that names several values or computes one (it resolved to null, silently)", () => {
    for (const path of ["items[*].sku", "$..sku", "items.length()", "items[?(@.sku)]", "order.*"]) {
      expect(unfollowablePath({ workflowId: "${wid}", output: { picked: `\${${path}}` } }), path).toBe(path);
    }
    expect(unfollowablePath({ workflowId: "${wid}", output: { sku: "${items[-1].sku}", note: "of ${order['unit price']}" } })).toBeUndefined();
  });

  it("give a task action's target and output as Conductor writes it: its parameters and output with the payload's values, stamped", () => {
    const stamp = eventStamp("task-1", "conductor:orders:q");
    expect(taskAction({ workflowId: "${workflowInstanceId}", taskRefName: "approval", output: { order: "${order.id}" } }, payload, stamp)).toEqual({
      workflowId: "wf-9",
      taskRefName: "approval",
      output: { workflowId: "wf-9", taskRefName: "approval", taskId: null, order: 7, "conductor.event.messageId": "task-1", "conductor.event.name": "conductor:orders:q" },
    });
    // The three are in the output whether given or not (null when not, or when the payload lacks them), as Conductor's.
    expect(taskAction({ taskId: "${order.id}" }, payload, stamp).output).toEqual({ workflowId: null, taskRefName: null, taskId: 7, ...stamp });
    expect(taskAction({ workflowId: "${missing}", taskRefName: "approval" }, payload, stamp).output).toMatchObject({ workflowId: null, taskId: null, taskRefName: "approval" });
    // A workflow id the payload lacks names no workflow.
    expect(taskAction({ workflowId: "${missing}", taskId: "${order.id}" }, payload, stamp)).toMatchObject({ taskId: "7" });
    expect(taskAction({ workflowId: "${missing}", taskId: "t" }, payload, stamp)).not.toHaveProperty("workflowId");
  });

  it("expand inline JSON when asked: strings holding an object or array are parsed, at any depth; others stay", () => {
    expect(expandInlineJson({ body: '{"a": {"b": "[1, 2]"}}', text: "{not json}", n: "5" })).toEqual({ body: { a: { b: [1, 2] } }, text: "{not json}", n: "5" });
  });
});
