import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import pythonDynamicWorkflow from "../fixtures/published/python_sdk_dynamic_workflow_execute.json";
import pythonKitchensink from "../fixtures/published/python_sdk_kitchensink2_execute.json";
import { api, getWorkflow, statusByRef, type TaskJson, type WorkflowJson } from "./helpers";
import { answering, taskNamed, withUri } from "./published-helpers";
import { pollOne } from "./task-worker-helpers";

// Workflows the official SDKs' examples build in code, translated into the JSON the SDK sends by reading its
// serialisers (test/fixtures/published/SOURCES.md names each), and run through the public API as the SDK runs them:
// the same paths, query parameters and bodies, its workers' batch polls and update-v2 reports.

/** A Python SDK TaskRunner's batch poll (`TaskResourceApi.batch_poll`: workerid, count 1, timeout 100 ms). */
const pythonPoll = (taskType: string): Promise<TaskJson> => pollOne(taskType, { workerid: "py-worker-1", timeout: "100" });

/**
 * A Python worker's report of a function's return value: TaskRunner wraps a value that is not a dict as
 * `{"result": value}` and posts the TaskResult to update-v2, which answers the next task (none here: a 204, which the SDK reads as none).
 */
async function pythonReport(task: TaskJson, returned: unknown): Promise<Response> {
  const outputData = typeof returned === "object" && returned !== null && !Array.isArray(returned) ? returned : { result: returned };
  return api("POST", "/api/tasks/update-v2", { taskId: task.taskId, workflowInstanceId: task["workflowInstanceId"], workerId: "py-worker-1", status: "COMPLETED", outputData });
}

/** kitchensink.py's `route` worker: `f'routing the packages to {country}'`. */
const route = (task: TaskJson): string => `routing the packages to ${String(task.inputData["country"])}`;

describe("conductor-oss/python-sdk examples/kitchensink.py (ConductorWorkflow.execute with the definition inline)", () => {
  const TESTER = "https://orkes-api-tester.orkesconductor.com/api";
  const FORK = "forked_Z4cYe9JwQx2VnK7hBt5RpM";
  const CHILD = "sub0_G7pHwKqUvR3dXfL2mN8sTb";

  /** The SDK's `execute`: POST /workflow/execute/{name}/{version}, its default empty waitUntilTaskRef and 10 s. */
  function execute(request: JsonObject, requestId: string): Promise<Response> {
    return api("POST", `/api/workflow/execute/kitchensink2/1?requestId=${requestId}&waitUntilTaskRef=&waitForSeconds=10`, request);
  }

  it("country US: the script, the fork of the inline sub0 child beside HTTP and a 2 s WAIT, jq, variables, the route worker", async () => {
    // The tester's URL is also text inside the script's string literal: the stand-in's answer (a number) needs no quotes.
    const request = withUri(pythonKitchensink, TESTER, answering(4512));
    const running = execute(request, "py-req-us");
    const routing = await pythonPoll("route");
    expect({ ref: routing.referenceTaskName, input: routing.inputData }).toEqual({ ref: "us_routing", input: { country: "US" } });
    // No other route task waits: update-v2 has no next task to hand over (the SDK reads an empty answer as none).
    expect((await pythonReport(routing, route(routing))).status).toBe(204);

    const response = await running;
    expect(response.status).toBe(200);
    const run = (await response.json()) as WorkflowJson;
    expect(run).toMatchObject({ requestId: "py-req-us", status: "COMPLETED", workflowName: "kitchensink2", workflowVersion: 1 });
    const greetings = { text: "hello Orkes", url: answering(4512) };
    expect(run.output).toEqual({ greetings });

    const workflow = await getWorkflow(run.workflowId);
    expect(statusByRef(workflow)).toEqual({
      hello_script: "COMPLETED",
      [FORK]: "COMPLETED",
      [CHILD]: "COMPLETED",
      call_remote_api: "COMPLETED",
      wait_for_2_sec: "COMPLETED",
      [`join_${FORK}`]: "COMPLETED",
      jq_process: "COMPLETED",
      set_wf_var_ref: "COMPLETED",
      decide: "COMPLETED",
      us_routing: "COMPLETED",
    });
    expect(taskNamed(workflow, "hello_script").outputData).toEqual({ result: greetings });
    expect(taskNamed(workflow, "jq_process").outputData).toEqual({ result: { key3: ["a", "b", "d", "e"] }, resultList: [{ key3: ["a", "b", "d", "e"] }] });
    expect(workflow["variables"]).toEqual({ var1: "value1", var2: 42, var3: ["a", "b", "c"] });
    expect(taskNamed(workflow, "decide").outputData).toEqual({ evaluationResult: ["US"], selectedCase: "US" });
    expect(taskNamed(workflow, "us_routing").outputData).toEqual({ result: "routing the packages to US" });

    // The child ran sub0 as the parent's definition holds it: its input the script's url, its HTTP task called there.
    const child = await getWorkflow(String(taskNamed(workflow, CHILD)["subWorkflowId"]));
    expect(child).toMatchObject({ workflowName: "sub0", status: "COMPLETED", input: { uri: greetings.url } });
    expect(statusByRef(child)).toEqual({ call_remote_api: "COMPLETED", wait_forever: "COMPLETED" });
    expect((taskNamed(child, "call_remote_api").outputData["response"] as JsonObject)["body"]).toBe(4512);
    const join = taskNamed(workflow, `join_${FORK}`).outputData;
    expect(Object.keys(join).sort()).toEqual([CHILD, "wait_for_2_sec"].sort());
  });

  it("country MX: no case, after the fork the default TERMINATE (terminationStatus TERMINATED) ends it; the worker is never asked", async () => {
    const request = withUri({ ...pythonKitchensink, input: { name: "Orkes", country: "MX" } }, TESTER, answering(4512));
    const response = await execute(request, "py-req-mx");
    expect(response.status).toBe(200);
    const run = (await response.json()) as WorkflowJson;
    expect(run).toMatchObject({ requestId: "py-req-mx", status: "TERMINATED", reasonForIncompletion: "unsupported country" });
    const workflow = await getWorkflow(run.workflowId);
    expect(taskNamed(workflow, "decide").outputData).toEqual({ evaluationResult: ["MX"], selectedCase: "MX" });
    expect(taskNamed(workflow, "bad_country_Ref")).toMatchObject({ status: "COMPLETED", inputData: { terminationStatus: "TERMINATED", terminationReason: "unsupported country" } });
    expect(workflow.tasks.some((task) => task.referenceTaskName.endsWith("_routing"))).toBe(false);
  });
});

describe("conductor-oss/python-sdk examples/dynamic_workflow.py (two workers, the definition inline through execute)", () => {
  it("the execute call waits for both workers; the email worker's None is {result: null}; the output the first worker's result", async () => {
    const running = api("POST", "/api/workflow/execute/dynamic_workflow/1?requestId=py-req-dyn&waitUntilTaskRef=&waitForSeconds=10", pythonDynamicWorkflow);
    const lookup = await pythonPoll("get_user_email");
    expect(lookup.inputData).toEqual({ userid: "user_a" });
    // `f'{userid}@example.com'`; update-v2 has no get_user_email task to hand over next.
    expect((await pythonReport(lookup, `${String(lookup.inputData["userid"])}@example.com`)).status).toBe(204);
    const email = await pythonPoll("send_email");
    expect(email.inputData).toEqual({ email: "user_a@example.com", subject: "Hello from Orkes", body: "Test Email" });
    // send_email prints and returns None: Worker.execute sends {"result": None}.
    expect((await pythonReport(email, null)).status).toBe(204);

    const response = await running;
    expect(response.status).toBe(200);
    const run = (await response.json()) as WorkflowJson;
    expect(run).toMatchObject({ requestId: "py-req-dyn", status: "COMPLETED", output: { email: "user_a@example.com" } });
    expect(taskNamed(run, "send_email_ref").outputData).toEqual({ result: null });
  });
});
