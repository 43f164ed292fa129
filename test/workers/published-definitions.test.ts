import { describe, expect, it } from "vitest";
import type { JsonObject, JsonValue } from "../../src/engine/model";
import conditionalSwitch from "../fixtures/published/conditional_switch_task_workflow_integration_test.json";
import decisionAndTerminate from "../fixtures/published/decision_and_terminate_integration_test.json";
import doWhileForkJoin from "../fixtures/published/do_while_integration_test.json";
import doWhileSetVariable from "../fixtures/published/do_while_set_variable_fix.json";
import helloWorkflow from "../fixtures/published/hello_workflow.json";
import ephemeralKitchensink from "../fixtures/published/kitchenSink-ephemeralWorkflowWithEphemeralTasks.json";
import kitchensink from "../fixtures/published/kitchensink.json";
import sagaCompensation from "../fixtures/published/saga_order_compensation.json";
import subFlow from "../fixtures/published/sub_flow_1.json";
import { api, apiOk, getWorkflow, startWorkflow, statusByRef, target, waitFor } from "./helpers";
import { answering, registerAll, taskNamed, withUri, work } from "./published-helpers";
import { pollOne, report } from "./task-worker-helpers";

// Workflow definitions Conductor publishes (its server's sample, its docs, its test harness: test/fixtures/published,
// SOURCES.md says where each is from), registered as published through the API and run with workers polling and
// reporting as Conductor's do. What each task was given, its status and output, the workflow's output and variables are
// compared with what Conductor produces for the same run (its mappers and system tasks, its harness's specs).

/**
 * The task definitions as Conductor's KitchenSinkInitializer registers them (`new TaskDef(name, name, 1, 0)`, Jackson
 * writing every field a TaskDef defaults).
 */
function conductorTaskDef(name: string): JsonObject {
  return {
    name,
    description: name,
    retryCount: 1,
    timeoutSeconds: 0,
    ownerEmail: "example@email.com",
    inputKeys: [],
    outputKeys: [],
    timeoutPolicy: "TIME_OUT_WF",
    retryLogic: "FIXED",
    retryDelaySeconds: 60,
    responseTimeoutSeconds: 3600,
    inputTemplate: {},
    rateLimitPerFrequency: 0,
    rateLimitFrequencyInSeconds: 1,
    backoffScaleFactor: 1,
  };
}

const ELASTICSEARCH_ANSWER = {
  hits: {
    total: 2,
    hits: [
      { _id: "a", _source: { workflowId: "wf-a", status: "COMPLETED" } },
      { _id: "b", _source: { workflowId: "wf-b", status: "FAILED" } },
    ],
  },
};

describe("Conductor's kitchensink (server/src/main/resources), as its docs' walkthrough runs it", () => {
  it("runs the odd-even decision's 0 case through DYNAMIC, a dynamic fork with a child workflow, HTTP and deep scans, as Conductor does", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [...Array.from({ length: 40 }, (_, index) => conductorTaskDef(`task_${index}`)), conductorTaskDef("search_elasticsearch")]);
    await registerAll(withUri(kitchensink, "http://localhost:9200/conductor/_search?size=10", answering(ELASTICSEARCH_ANSWER)), subFlow);
    const workflowId = await startWorkflow("kitchensink", { task2Name: "task_5" });

    // The docs' first poll: mod and oddEven null (absent from the input), `${CPEWF_TASK_ID}` the task's own id, and
    // `${HOSTNAME}` Conductor's server's environment variable, which a Worker has none of.
    const first = await pollOne("task_1");
    expect(first.inputData).toEqual({ mod: null, oddEven: null, env: { taskId: first.taskId, workflowId: null } });
    // The docs' update, whose dynamicTasks the walkthrough gives to the task that reads them (task_4).
    const dynamicTasks: JsonObject[] = [
      { name: "task_1", taskReferenceName: "task_1_1", type: "SIMPLE" },
      { name: "sub_workflow_4", taskReferenceName: "wf_dyn", type: "SUB_WORKFLOW", subWorkflowParam: { name: "sub_flow_1" } },
    ];
    expect((await report(first, "COMPLETED", { mod: 5, taskToExecute: "task_1", oddEven: 0, dynamicTasks, inputs: { task_1_1: {}, wf_dyn: {} } })).status).toBe(200);
    // DYNAMIC runs the task its input names (task2Name: task_5) under its own reference name.
    const dynamic = await work("task_5", { mod: 5, oddEven: 0 });
    expect({ ref: dynamic.referenceTaskName, input: dynamic.inputData }).toEqual({ ref: "task_2", input: { taskToExecute: "task_5" } });
    const task4 = await work("task_4", { dynamicTasks, inputs: { task_1_1: { fromTask4: true }, wf_dyn: {} } });
    expect(task4.inputData).toEqual({ mod: 5, oddEven: 0 });
    // The fork's branches: task_1 again, and sub_flow_1 (no version: its latest) with its two tasks.
    const forked = await work("task_1", { done: 1 });
    expect({ ref: forked.referenceTaskName, input: forked.inputData }).toEqual({ ref: "task_1_1", input: { fromTask4: true } });
    await work("task_5");
    await work("task_6");
    // `${get_es_1.output..status}`: each status of the search's hits, once (Conductor's HTTP output holds the body once).
    const last = await work("task_30");
    expect(last.inputData).toEqual({ statuses: ["COMPLETED", "FAILED"], workflowIds: ["wf-a", "wf-b"] });

    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(workflow.output).toEqual({ statues: ["COMPLETED", "FAILED"], workflowIds: ["wf-a", "wf-b"] });
    expect(statusByRef(workflow)).toEqual({
      task_1: "COMPLETED",
      event_0: "COMPLETED",
      task_2: "COMPLETED",
      oddEvenDecision: "COMPLETED",
      task_4: "COMPLETED",
      fanout1: "COMPLETED",
      task_1_1: "COMPLETED",
      wf_dyn: "COMPLETED",
      join1: "COMPLETED",
      get_es_1: "COMPLETED",
      task_30: "COMPLETED",
    });
    // EVENT to Conductor's own queue: its input, the sink and the workflow as the message, and the queue it went to.
    expect(taskNamed(workflow, "event_0").outputData).toMatchObject({ mod: null, oddEven: null, sink: "conductor", workflowInstanceId: workflowId, workflowType: "kitchensink", workflowVersion: 1, event_produced: "conductor:kitchensink:event_0" });
    // DECISION on the number 0 takes case "0", as Conductor's DecisionTaskMapper reads it as text.
    expect(taskNamed(workflow, "oddEvenDecision")).toMatchObject({ inputData: { oddEven: 0, case: "0" }, outputData: { caseOutput: ["0"] } });
    expect(taskNamed(workflow, "fanout1")).toMatchObject({ taskType: "FORK", inputData: { forkedTasks: ["task_1_1", "wf_dyn"] } });
    const child = taskNamed(workflow, "wf_dyn");
    expect(child.inputData).toMatchObject({ subWorkflowName: "sub_flow_1", subWorkflowVersion: 1 });
    const childRun = await getWorkflow(String(child["subWorkflowId"]));
    expect({ name: childRun["workflowName"], status: childRun.status, tasks: statusByRef(childRun) }).toEqual({ name: "sub_flow_1", status: "COMPLETED", tasks: { task_5: "COMPLETED", task_6: "COMPLETED" } });
    expect(taskNamed(workflow, "join1").outputData).toEqual({ task_1_1: { done: 1 }, wf_dyn: { subWorkflowId: child["subWorkflowId"] } });
  });
});

describe("Conductor's ephemeral kitchensink (server/src/main/resources/kitchenSink-ephemeralWorkflowWithEphemeralTasks.json)", () => {
  it("starts from the request's own definition and task definitions (Jackson's nulls and all) and runs the decision's 1 case: a fork of two children joined", async () => {
    await registerAll(subFlow);
    const request = withUri(ephemeralKitchensink, "http://localhost:9200/conductor/_search?size=10", answering(ELASTICSEARCH_ANSWER));
    const started = await api("POST", "/api/workflow", request);
    expect(started.status).toBe(200);
    const workflowId = await started.text();

    const first = await pollOne("task_10001");
    expect(first.inputData).toEqual({ mod: null, oddEven: null, env: { taskId: first.taskId, workflowId: null } });
    expect((await report(first, "COMPLETED", { mod: 5, oddEven: 1 })).status).toBe(200);
    expect((await work("task_10005", { mod: 5, oddEven: 1 })).referenceTaskName).toBe("task_2");
    // Both branches' first tasks, then each child's two tasks (sub_flow_1, whose empty outputParameters make its
    // output its last task's, as Conductor's).
    for (const taskType of ["task_100010", "task_100011", "task_5", "task_5"]) await work(taskType);
    for (const n of [1, 2]) await work("task_6", { child: n });
    expect((await work("task_100030")).inputData).toEqual({ statuses: ["COMPLETED", "FAILED"], workflowIds: ["wf-a", "wf-b"] });

    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(workflow.output).toEqual({ statues: ["COMPLETED", "FAILED"], workflowIds: ["wf-a", "wf-b"] });
    expect(Object.keys(statusByRef(workflow)).sort()).toEqual(["event_0", "forkx", "get_es_1", "join2", "oddEvenDecision", "task_10001", "task_100010", "task_100011", "task_100030", "task_2", "wf3", "wf4"]);
    expect(Object.values(statusByRef(workflow)).every((status) => status === "COMPLETED")).toBe(true);
    expect(taskNamed(workflow, "oddEvenDecision").outputData).toEqual({ caseOutput: ["1"] });
    const children = ["wf3", "wf4"].map((ref) => taskNamed(workflow, ref));
    for (const child of children) expect(child.inputData).toMatchObject({ mod: 5, oddEven: 1, subWorkflowName: "sub_flow_1", subWorkflowVersion: 1 });
    const joined = taskNamed(workflow, "join2").outputData;
    expect(Object.keys(joined).sort()).toEqual(["wf3", "wf4"]);
    expect(children.map((child) => joined[child.referenceTaskName])).toEqual(children.map((child) => ({ ...child.outputData, subWorkflowId: child["subWorkflowId"] })));
    expect(children.map((child) => child.outputData["child"]).sort()).toEqual([1, 2]);
  });
});

describe("Conductor's quickstart (docs/quickstart/workflow.json)", () => {
  it("hands the HTTP response's body to the INLINE script and the workflow's output", async () => {
    const answer = { hostName: "orkes-api-sampler-67dfc8cf58-2qglr", apiRandomDelay: "0 ms", randomInt: 4512 };
    await registerAll(withUri(helloWorkflow, "https://orkes-api-tester.orkesconductor.com/api", answering(answer)));
    const workflow = await waitFor(await startWorkflow("hello_workflow"), ["COMPLETED"]);
    expect(workflow.output).toEqual({ summary: "Host orkes-api-sampler-67dfc8cf58-2qglr responded in 0 ms with random value 4512", apiResponse: answer });
    expect(taskNamed(workflow, "parse_ref").outputData).toEqual({ result: { summary: "Host orkes-api-sampler-67dfc8cf58-2qglr responded in 0 ms with random value 4512", host: answer.hostName, randomValue: 4512 } });
  });
});

describe("Conductor's saga cookbook (docs/devguide/cookbook/assets/saga-order-compensation.json)", () => {
  it("undoes only the completed steps: the jq's booleans pick the SWITCH cases, the refund carries its idempotency key", async () => {
    await registerAll(withUri(sagaCompensation, "http://localhost:8088/", target("/echo/")));
    const failedWorkflow = { input: { orderId: "o-17" }, tasks: [{ referenceTaskName: "charge_payment", status: "COMPLETED" }, { referenceTaskName: "reserve_inventory", status: "FAILED" }] };
    const workflow = await waitFor(await startWorkflow("saga_order_compensation", { reason: "inventory unavailable", workflowId: "wf-0", failedWorkflow }), ["COMPLETED"]);
    expect(workflow.output).toEqual({ compensatedOrder: "o-17", stepsCompleted: ["charge_payment"], paymentRefunded: true, inventoryReleased: false, originalFailure: "inventory unavailable" });
    expect(statusByRef(workflow)).toEqual({ completed_steps: "COMPLETED", route_refund: "COMPLETED", refund_payment: "COMPLETED", route_release: "COMPLETED" });
    // value-param on a boolean: Conductor's case is its text, "true" / "false" (no case "false": the empty default).
    expect(taskNamed(workflow, "route_refund").outputData).toMatchObject({ evaluationResult: ["true"] });
    expect(taskNamed(workflow, "route_release").outputData).toMatchObject({ evaluationResult: ["false"] });
    const sent = (taskNamed(workflow, "refund_payment").outputData["response"] as JsonObject)["body"] as JsonObject;
    expect({ method: sent["method"], path: sent["path"], key: (sent["headers"] as JsonObject)["idempotency-key"], body: JSON.parse(String(sent["body"])) as JsonValue }).toEqual({
      method: "POST",
      path: "/echo/payments/refund",
      key: "o-17-refund",
      body: { orderId: "o-17", reason: "inventory unavailable" },
    });
  });
});

describe("Conductor's test harness definitions (test-harness/src/test/resources)", () => {
  it("conditional_switch_task_workflow: nested value-param SWITCHes, the default case, a null case value, literal text as given", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", ["integration_task_1", "integration_task_2", "integration_task_3", "integration_task_4", "integration_task_10"].map(conductorTaskDef));
    await registerAll(conditionalSwitch);
    const nested = await startWorkflow("ConditionalTaskWF", { param1: "nested", param2: "two", finalCase: "notify" });
    expect((await work("integration_task_2")).inputData).toEqual({ tp1: "nested" });
    expect((await work("integration_task_4")).inputData).toEqual({});
    const first = await waitFor(nested, ["COMPLETED"]);
    expect(statusByRef(first)).toEqual({ conditional: "COMPLETED", nestedCondition: "COMPLETED", t2: "COMPLETED", finalCase: "COMPLETED", integration_task_4: "COMPLETED" });

    const fallback = await startWorkflow("ConditionalTaskWF", { param1: "other", param2: "two" });
    // "workflow.input.param2" without `${}` is text, given as it is.
    expect((await work("integration_task_10")).inputData).toEqual({ tp10: "workflow.input.param2" });
    const second = await waitFor(fallback, ["COMPLETED"]);
    expect(statusByRef(second)).toEqual({ conditional: "COMPLETED", t10: "COMPLETED", finalCase: "COMPLETED" });
    // finalCase absent: Conductor's SwitchTaskMapper's case is "null", no case of that name, the empty default.
    expect(taskNamed(second, "finalCase")).toMatchObject({ inputData: { finalCase: null }, outputData: { evaluationResult: ["null"] } });
  });

  it("decision_and_terminate: case two TERMINATEs the workflow FAILED with the text workflowOutput as {output}", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", ["integration_task_1", "integration_task_2", "integration_task_3"].map(conductorTaskDef));
    await registerAll(decisionAndTerminate);
    const workflowId = await startWorkflow("ConditionalTerminateWorkflow", { param1: "p1", param2: "p2", case: "two" });
    expect((await work("integration_task_1", { op: "task1.done" })).inputData).toEqual({ tp11: "p1", tp12: "p2" });
    const workflow = await waitFor(workflowId, ["FAILED"]);
    expect(statusByRef(workflow)).toEqual({ t1: "COMPLETED", decision: "COMPLETED", terminate0: "COMPLETED" });
    expect(taskNamed(workflow, "terminate0").outputData).toEqual({ output: "task1.done" });
    expect(workflow.output).toEqual({ output: "task1.done" });
    expect(workflow["reasonForIncompletion"]).toContain("TERMINATE");
  });

  it("do_while_set_variable_fix: one iteration, the loop's condition reading the variable its SET_VARIABLE set", async () => {
    await registerAll(doWhileSetVariable);
    const workflow = await waitFor(await startWorkflow("do_while_Set_variable_fix"), ["COMPLETED"]);
    expect(workflow["variables"]).toEqual({ value: "0" });
    expect(statusByRef(workflow)).toEqual({ loopTask: "COMPLETED", set_variable__1: "COMPLETED" });
    expect(taskNamed(workflow, "loopTask").outputData).toEqual({ "1": { set_variable: {} }, iteration: 1 });
  });

  it("do_while_integration_test: loop 2 runs the fork and join twice, each iteration's tasks under __1 and __2", async () => {
    await apiOk("POST", "/api/metadata/taskdefs", ["integration_task_0", "integration_task_1", "integration_task_2"].map(conductorTaskDef));
    await registerAll(doWhileForkJoin);
    const workflowId = await startWorkflow("Do_While_Workflow", { loop: 2 });
    for (const iteration of [1, 2]) {
      expect((await work("integration_task_0", { iteration })).referenceTaskName).toBe(`integration_task_0__${iteration}`);
      await work("integration_task_1", { branch: 1 });
      await work("integration_task_2", { branch: 2 });
    }
    const workflow = await waitFor(workflowId, ["COMPLETED"]);
    expect(Object.keys(statusByRef(workflow))).toEqual(["loopTask", ...[1, 2].flatMap((n) => ["integration_task_0", "fork", "integration_task_1", "integration_task_2", "join"].map((ref) => `${ref}__${n}`))]);
    expect(Object.values(statusByRef(workflow)).every((status) => status === "COMPLETED")).toBe(true);
    // Conductor's DoWhile output: each iteration's tasks' outputs under their definition's names, and the iteration.
    const iteration = (n: number) => ({ integration_task_0: { iteration: n }, fork: {}, integration_task_1: { branch: 1 }, integration_task_2: { branch: 2 }, join: { integration_task_1: { branch: 1 }, integration_task_2: { branch: 2 } } });
    expect(taskNamed(workflow, "loopTask").outputData).toEqual({ "1": iteration(1), "2": iteration(2), iteration: 2 });
  });
});

// The "Wiring task inputs" guide's examples, run as written (its workflow input, the output its previousTaskReference
// produced, its variable), and every `${workflow.<field>}` its list of sample expressions names:
// https://conductor-oss.github.io/conductor/devguide/how-tos/Tasks/task-inputs.html
describe("conductor-oss docs: Wiring task inputs", () => {
  it("resolves the guide's references to the workflow's input, a task's output, a variable and the workflow's own fields", async () => {
    const probe = (ref: string, inputParameters: JsonObject): JsonObject => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters });
    await apiOk("POST", "/api/metadata/workflow", {
      name: "guide_task_inputs",
      ownerEmail: "t@example.com",
      tasks: [
        { name: "guide_inputs_worker", taskReferenceName: "previousTaskReference", type: "SIMPLE" },
        { name: "set_name", taskReferenceName: "set-name_ref", type: "SET_VARIABLE", inputParameters: { name: "Ipsum" } },
        probe("probe", {
          user: "${workflow.input.userName}",
          userAge: "${workflow.input.userDetails.age}",
          nextTaskInput1: "${previousTaskReference.output.taxZone}",
          nextTaskInput2: "${previousTaskReference.output.productDetails.nestedKey1}",
          variable: "${workflow.variables.name}",
          setInput: "${set-name_ref.input}",
          firstItem: "${previousTaskReference.output.items[0].name}",
          dearItems: "${previousTaskReference.output.items[?(@.price > 10)].name}",
          status: "${workflow.status}",
          workflowId: "${workflow.workflowId}",
          workflowType: "${workflow.workflowType}",
          version: "${workflow.version}",
          createTime: "${workflow.createTime}",
          correlationId: "${workflow.correlationId}",
          domain: "${workflow.taskToDomain.guide_inputs_worker}",
          output: "${workflow.output}",
          parentWorkflowId: "${workflow.parentWorkflowId}",
          taskId: "${CPEWF_TASK_ID}",
        }),
      ],
      outputParameters: { taxZone: "${previousTaskReference.output.taxZone}" },
    }, 200);
    const input = { userID: 1, userName: "SAMPLE", userDetails: { country: "nestedValue", age: 50 } };
    const workflowId = await apiOk<string>("POST", "/api/workflow", { name: "guide_task_inputs", input, correlationId: "guide-1", taskToDomain: { guide_inputs_worker: "guide" } });
    const worker = await pollOne("guide_inputs_worker", { domain: "guide" });
    const produced = { taxZone: "A", productDetails: { nestedKey1: "outputValue-1", nestedKey2: "outputValue-2" }, items: [{ name: "pen", price: 2 }, { name: "desk", price: 120 }] };
    expect((await report(worker, "COMPLETED", produced)).status).toBe(200);
    const waiting = await waitFor(workflowId, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "probe"));
    const probeTask = waiting.tasks.find((task) => task.referenceTaskName === "probe")!;
    expect(probeTask.inputData).toEqual({
      user: "SAMPLE",
      userAge: 50,
      nextTaskInput1: "A",
      nextTaskInput2: "outputValue-1",
      variable: "Ipsum",
      setInput: { name: "Ipsum" },
      firstItem: "pen",
      dearItems: ["desk"],
      status: "RUNNING",
      workflowId,
      workflowType: "guide_task_inputs",
      version: 1,
      createTime: waiting["createTime"],
      correlationId: "guide-1",
      domain: "guide",
      // Not yet resolved while the workflow runs: empty, as Conductor's is until it ends.
      output: {},
      parentWorkflowId: null,
      taskId: probeTask.taskId,
    });
    expect((await report(probeTask, "COMPLETED")).status).toBe(200);
    expect(await waitFor(workflowId, ["COMPLETED", "FAILED"])).toMatchObject({ status: "COMPLETED", output: { taxZone: "A" } });
  });
});
