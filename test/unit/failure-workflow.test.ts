import { describe, expect, it, vi } from "vitest";
import { DEFAULT_ENGINE_CONFIG } from "../../src/engine/config";
import { createExecution, type Decision, type Effect } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import { FAILURE_WORKFLOW_OUTPUT_KEY } from "../../src/engine/failure-workflow";
import type { FailureWorkflowStart, JsonObject, JsonValue, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { env, taskDefNamed } from "./engine-env";

const call: WorkflowTaskDef = { name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { uri: "http://a.test/", method: "GET" } };
const hook: WorkflowTaskDef = { name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} };

function started(definition: Partial<WorkflowDef>, extra: { input?: WorkflowExecution["input"]; correlationId?: string; priority?: number; startScopes?: string[]; depth?: number } = {}): WorkflowExecution {
  const full: WorkflowDef = { name: "orders", version: 1, schemaVersion: 2, tasks: [call], ...definition };
  const execution = createExecution({ workflowId: "wf-1", definition: full, input: extra.input ?? { orderId: 7 }, ...extra }, 1_000);
  return decide(execution, { type: "start" }, env(1_000)).state;
}

/** The call task fails for good (no retries): the workflow fails. */
function failCall(state: WorkflowExecution, now = 2_000): Decision {
  const task = state.tasks[0]!;
  return decide(state, { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "FAILED_WITH_TERMINAL_ERROR", output: { status: 500 }, reason: "HTTP 500" }, env(now));
}

function startsOf(effects: Effect[]): FailureWorkflowStart[] {
  return effects.flatMap((effect) => (effect.kind === "startFailureWorkflow" ? [effect.start] : []));
}

describe("failureWorkflow: what a failed execution starts", () => {
  it("a failed task starts the failure workflow with Conductor's input, and the output names its id", () => {
    const state = started({ failureWorkflow: "orders_cleanup" }, { correlationId: "order-7", priority: 9, startScopes: ["workflow:*"] });
    const failed = failCall(state);
    expect(failed.state.status).toBe("FAILED");
    const [start, ...more] = startsOf(failed.effects);
    expect(more).toEqual([]);
    expect(start).toMatchObject({
      name: "orders_cleanup",
      triggeringWorkflowId: "wf-1",
      correlationId: "order-7",
      // Conductor's terminateWorkflow copies no priority into the failure workflow's start: it runs at 0.
      priority: 0,
      depth: 1,
      startScopes: ["workflow:*"],
      input: {
        orderId: 7,
        workflowId: "wf-1",
        reason: failed.state.reasonForIncompletion!,
        failureStatus: "FAILED",
        failureTaskId: state.tasks[0]!.taskId,
      },
    });
    // Its failed tasks named, as Conductor's terminateWorkflow fills them before it builds the failure workflow's input.
    expect(start!.input["failedWorkflow"]).toMatchObject({ workflowId: "wf-1", status: "FAILED", failedReferenceTaskNames: ["call"], tasks: [{ referenceTaskName: "call", status: "FAILED_WITH_TERMINAL_ERROR" }] });
    expect(failed.state.output[FAILURE_WORKFLOW_OUTPUT_KEY]).toBe(start!.workflowId);
  });

  it("a task that timed out for good ends the workflow TIMED_OUT (Conductor's retry()); one canceled (a terminated child) fails it; either starts it", () => {
    const timedOut = decide(started({ failureWorkflow: "orders_cleanup", tasks: [{ ...hook, inputParameters: { timeoutSeconds: 1 } }] }), { type: "tick", liveTaskIds: new Set() }, env(2_500));
    // The spec's WAIT_FOR_WEBHOOK timeout fails its task (WEBHOOK_TIMEOUT), and so the workflow.
    expect([timedOut.state.tasks[0]!.status, timedOut.state.status]).toEqual(["FAILED", "FAILED"]);
    const sub: WorkflowTaskDef = { name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: "child" } } };
    const waiting = started({ failureWorkflow: "orders_cleanup", tasks: [sub] });
    const task = waiting.tasks[0]!;
    const canceled = decide(waiting, { type: "childFinished", taskId: task.taskId, subWorkflowId: task.subWorkflowId!, status: "TERMINATED", output: {}, reason: "operator" }, env(2_000));
    expect(canceled.state.tasks[0]!.status).toBe("CANCELED");
    expect(canceled.state.status).toBe("FAILED");
    expect(canceled.state.reasonForIncompletion).toContain("Task sub failed");
    expect(startsOf(canceled.effects)[0]!.input).toMatchObject({ failureStatus: "FAILED", failureTaskId: task.taskId });

    const retried: WorkflowTaskDef = { ...call, taskDefinition: taskDefNamed("call", { timeoutSeconds: 1, timeoutPolicy: "RETRY" }) };
    const running = started({ failureWorkflow: "orders_cleanup", tasks: [retried] });
    const expired = decide(running, { type: "tick", liveTaskIds: new Set([running.tasks[0]!.taskId]) }, env(2_500));
    expect(expired.state.tasks[0]!.status).toBe("TIMED_OUT");
    expect(expired.state.status).toBe("TIMED_OUT");
    expect(startsOf(expired.effects)[0]!.input).toMatchObject({ failureStatus: "TIMED_OUT", failureTaskId: running.tasks[0]!.taskId });
  });

  it("a workflow timeout starts it too, with failureStatus TIMED_OUT and no failed task", () => {
    const state = started({ failureWorkflow: "orders_cleanup", timeoutSeconds: 1, tasks: [hook] });
    const timedOut = decide(state, { type: "tick", liveTaskIds: new Set() }, env(2_500));
    expect(timedOut.state.status).toBe("TIMED_OUT");
    const [start] = startsOf(timedOut.effects);
    expect(start!.input).toMatchObject({ failureStatus: "TIMED_OUT", reason: "Workflow timed out after 1 seconds. Timeout configured as 1 seconds. Timeout policy configured to TIME_OUT_WF" });
    expect(start!.input).not.toHaveProperty("failureTaskId");
  });

  it("a termination starts it only when asked to (triggerFailureWorkflow)", () => {
    const state = started({ failureWorkflow: "orders_cleanup", tasks: [hook] });
    const plain = decide(state, { type: "terminate", reason: "by hand" }, env(2_000));
    expect(startsOf(plain.effects)).toEqual([]);
    expect(plain.state.output).toEqual({});
    const asked = decide(state, { type: "terminate", reason: "by hand", triggerFailureWorkflow: true }, env(2_000));
    expect(startsOf(asked.effects)).toHaveLength(1);
    expect(startsOf(asked.effects)[0]!.input).toMatchObject({ failureStatus: "TERMINATED", reason: "by hand" });
  });

  it("a completed workflow, or one without a failureWorkflow, starts nothing", () => {
    const task = started({ failureWorkflow: "orders_cleanup" }).tasks[0]!;
    const completed = decide(started({ failureWorkflow: "orders_cleanup" }), { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "COMPLETED", output: {} }, env(2_000));
    expect(completed.state.status).toBe("COMPLETED");
    expect(startsOf(completed.effects)).toEqual([]);
    const failed = failCall(started({}));
    expect(failed.state.status).toBe("FAILED");
    expect(startsOf(failed.effects)).toEqual([]);
    // The output is the failed task's (Conductor's updateWorkflowOutput), with no failure workflow named in it.
    expect(failed.state.output).toEqual({ status: 500 });
  });

  it("a workflow that does not complete ends with its outputParameters resolved against what ran, or else the output of the task that ended it", () => {
    const second: WorkflowTaskDef = { ...call, name: "second", taskReferenceName: "second" };
    const withParameters = started({ tasks: [call, second], outputParameters: { first: "${call.output.body.id}", second: "${second.output.status}" } });
    const first = withParameters.tasks[0]!;
    const afterFirst = decide(withParameters, { type: "dispatchResult", taskId: first.taskId, attempt: first.attempt, status: "COMPLETED", output: { body: { id: 42 } } }, env(1_500)).state;
    const pending = afterFirst.tasks[1]!;
    const failed = decide(afterFirst, { type: "dispatchResult", taskId: pending.taskId, attempt: pending.attempt, status: "FAILED_WITH_TERMINAL_ERROR", output: {}, reason: "HTTP 500" }, env(2_000));
    expect(failed.state.status).toBe("FAILED");
    expect(failed.state.output).toEqual({ first: 42, second: null });
    // Retried, it runs with no output until it ends again.
    const retried = decide(failed.state, { type: "retry" }, env(2_500)).state;
    expect([retried.status, retried.output]).toEqual(["RUNNING", {}]);
    // Terminated from outside: the same output, the pending task's (none) standing in for the one that ended it.
    const terminated = decide(afterFirst, { type: "terminate", reason: "operator" }, env(2_000)).state;
    expect(terminated.status).toBe("TERMINATED");
    expect(terminated.output).toEqual({ first: 42, second: null });
  });

  it("a ${...} name is resolved from the execution; one resolving to nothing (or blank) names none, as in Conductor; one resolving to no name is reported in the output", () => {
    const named = failCall(started({ failureWorkflow: "${workflow.input.onFailure}" }, { input: { onFailure: "page_oncall" } }));
    expect(startsOf(named.effects).map((start) => start.name)).toEqual(["page_oncall"]);
    for (const input of [{}, { onFailure: null }, { onFailure: "  " }] as JsonObject[]) {
      const missing = failCall(started({ failureWorkflow: "${workflow.input.onFailure}" }, { input }));
      expect(startsOf(missing.effects)).toEqual([]);
      expect(missing.state.output).not.toHaveProperty(FAILURE_WORKFLOW_OUTPUT_KEY);
    }
    const notAName = failCall(started({ failureWorkflow: "${workflow.input.onFailure}" }, { input: { onFailure: { name: "page_oncall" } } }));
    expect(startsOf(notAName.effects)).toEqual([]);
    expect(notAName.state.output[FAILURE_WORKFLOW_OUTPUT_KEY]).toBe(
      'Error workflow ${workflow.input.onFailure} failed to start.  reason: failureWorkflow ${workflow.input.onFailure} resolved to {"name":"page_oncall"}, not a workflow name',
    );
  });

  it("a ${...} name resolving to a value over MAX_PAYLOAD_BYTES is reported without the value being written out", () => {
    // 100 levels over 10,000 numbers (some 50 KB): `..*` selects every level, some 5 MB as JSON, over MAX_PAYLOAD_BYTES.
    let chain: JsonValue = Array.from({ length: 10_000 }, (_, index) => index % 10);
    for (let level = 0; level < 99; level++) chain = { next: chain };
    let failed: Decision | undefined;
    const stringify = vi.spyOn(JSON, "stringify");
    let written: number[] = [];
    try {
      failed = failCall(started({ failureWorkflow: "${workflow.input.chain..*}" }, { input: { chain } }));
      written = stringify.mock.results.map((result) => (typeof result.value === "string" ? result.value.length : 0));
    } finally {
      stringify.mockRestore();
    }
    expect(Math.max(0, ...written)).toBeLessThan(1_000_000);
    expect(startsOf(failed!.effects)).toEqual([]);
    expect(failed!.state.output[FAILURE_WORKFLOW_OUTPUT_KEY]).toBe(
      `Error workflow \${workflow.input.chain..*} failed to start.  reason: failureWorkflow \${workflow.input.chain..*} resolved to a value of more than ${768 * 1024} bytes, not a workflow name`,
    );
  });

  it("reads Conductor's older $workflow.input.<name> form as the expression it stands for (Conductor's integration tests use it)", () => {
    const checked = validateWorkflowDef({ name: "orders", tasks: [call], failureWorkflow: "$workflow.input.failureWfName" });
    if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
    expect(checked.value.failureWorkflow).toBe("${workflow.input.failureWfName}");
    const named = failCall(started({ failureWorkflow: checked.value.failureWorkflow! }, { input: { failureWfName: "page_oncall" } }));
    expect(startsOf(named.effects).map((start) => start.name)).toEqual(["page_oncall"]);
  });

  it("reads the older form's input key whatever it holds but a dot, as Conductor splits the text on '.' ($workflow.input.on-failure, .größe, .$ref, .it's)", () => {
    for (const key of ["on-failure", "größe", "$ref", "@type", "it's", "a\\b", "x}y"]) {
      const checked = validateWorkflowDef({ name: "orders", tasks: [call], failureWorkflow: ` $workflow.input.${key} ` });
      if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
      const named = failCall(started({ failureWorkflow: checked.value.failureWorkflow! }, { input: { [key]: "page_oncall" } }));
      expect(startsOf(named.effects).map((start) => start.name), `${key}: ${checked.value.failureWorkflow}`).toEqual(["page_oncall"]);
    }
    // A plain name keeps the dotted form; a key with a dot is no key of the older form, a name as given.
    expect((validateWorkflowDef({ name: "orders", tasks: [call], failureWorkflow: "$workflow.input.on_failure" }) as { value: WorkflowDef }).value.failureWorkflow).toBe("${workflow.input.on_failure}");
    expect((validateWorkflowDef({ name: "orders", tasks: [call], failureWorkflow: "$workflow.input.a.b" }) as { value: WorkflowDef }).value.failureWorkflow).toBe("$workflow.input.a.b");
    expect((validateWorkflowDef({ name: "orders", tasks: [call], failureWorkflow: "$workflow.input.${workflow.input.k}" }) as { value: WorkflowDef }).value.failureWorkflow).toBe("$workflow.input.${workflow.input.k}");
  });

  it("an input too large for the failed Workflow JSON with its tasks carries it without them (as includeTasks=false shows it), then not at all", () => {
    // The failed Workflow JSON repeats the workflow's input, and with its tasks their inputs too.
    const big = "x".repeat(Math.ceil(DEFAULT_ENGINE_CONFIG.maxPayloadBytes * 0.3));
    const state = started({ failureWorkflow: "orders_cleanup" }, { input: { big } });
    const task = state.tasks[0]!;
    const withLargeTask = { ...state, tasks: [{ ...task, inputData: { big, again: big } }] };
    const [withoutTasks] = startsOf(failCall(withLargeTask).effects);
    expect(withoutTasks!.input["failedWorkflow"]).toMatchObject({ workflowId: "wf-1", input: { big }, tasks: [] });
    const [withTasks] = startsOf(failCall(state).effects);
    expect(withTasks!.input["failedWorkflow"]).toMatchObject({ tasks: [{ referenceTaskName: "call" }] });
    const bigger = "x".repeat(Math.ceil(DEFAULT_ENGINE_CONFIG.maxPayloadBytes * 0.6));
    const [without] = startsOf(failCall(started({ failureWorkflow: "orders_cleanup" }, { input: { big: bigger } })).effects);
    expect(without!.input).not.toHaveProperty("failedWorkflow");
    expect(without!.input["big"]).toBe(bigger);
  });

  it("a start that did not happen replaces the id in the output, unless the output names a later one", () => {
    const failed = failCall(started({ failureWorkflow: "orders_cleanup" }));
    const [start] = startsOf(failed.effects);
    const event = { type: "failureWorkflowNotStarted", workflowId: start!.workflowId, name: "orders_cleanup", reason: "No such workflow found by name: orders_cleanup, version: null" } as const;
    const reported = decide(failed.state, event, env(3_000));
    expect(reported.state.output[FAILURE_WORKFLOW_OUTPUT_KEY]).toBe("Error workflow orders_cleanup failed to start.  reason: No such workflow found by name: orders_cleanup, version: null");
    expect(reported.effects).toEqual([]);
    // Retried and failed again before the first answer came: the output names the second one, which stays.
    const retried = decide(failed.state, { type: "retry" }, env(2_500)).state;
    const again = failCall({ ...retried, tasks: retried.tasks.slice(-1) }, 2_600).state;
    expect(decide(again, event, env(3_000)).state).toBe(again);
  });

  it("each failure after a retry starts its own failure workflow", () => {
    const first = failCall(started({ failureWorkflow: "orders_cleanup" }));
    const retried = decide(first.state, { type: "retry" }, env(3_000)).state;
    const again = decide(retried, { type: "dispatchResult", taskId: retried.tasks.at(-1)!.taskId, attempt: retried.tasks.at(-1)!.attempt, status: "FAILED_WITH_TERMINAL_ERROR", output: {} }, env(4_000));
    const [firstStart] = startsOf(first.effects);
    const [secondStart] = startsOf(again.effects);
    expect(secondStart!.workflowId).not.toBe(firstStart!.workflowId);
    expect(again.state.output[FAILURE_WORKFLOW_OUTPUT_KEY]).toBe(secondStart!.workflowId);
  });

  it("one that failed as it completed (its output over the size limit), every task done, refuses a retry, which would only fail it again and start the failure workflow twice (Conductor's \"no retryable tasks\"); a rerun runs it", () => {
    const small = (now: number) => ({ ...env(now), config: { ...DEFAULT_ENGINE_CONFIG, maxPayloadBytes: 1_024 } });
    const state = started({ failureWorkflow: "orders_cleanup", outputParameters: { body: "${call.output.body}", again: "${call.output.body}" } });
    const task = state.tasks[0]!;
    const failed = decide(state, { type: "dispatchResult", taskId: task.taskId, attempt: task.attempt, status: "COMPLETED", output: { body: "x".repeat(600) } }, small(2_000));
    expect(failed.state).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringMatching(/^The workflow output is \d+ bytes/) });
    expect(failed.state.tasks.map((each) => each.status)).toEqual(["COMPLETED"]);
    expect(startsOf(failed.effects)).toHaveLength(1);
    let refused: unknown;
    try {
      decide(failed.state, { type: "retry" }, small(3_000));
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({ kind: "CONFLICT", message: expect.stringMatching(/no task failed \(it failed as it completed: The workflow output is .*\); restart or rerun it/) });
    expect(decide(failed.state, { type: "rerun", fromTaskId: task.taskId }, small(3_000)).state).toMatchObject({ status: "RUNNING" });
  });
});

describe("failureWorkflow in a definition", () => {
  const definition = (failureWorkflow: unknown) => ({ name: "orders", tasks: [call], failureWorkflow });

  it("is kept: a name or a ${...} expression", () => {
    for (const value of ["orders_cleanup", "${workflow.input.onFailure}"]) {
      const result = validateWorkflowDef(definition(value));
      expect(result.ok && result.value.failureWorkflow).toBe(value);
    }
  });

  it("is none when blank (null, \"\" or spaces), as Conductor clients send it", () => {
    for (const value of [null, "", "  "]) {
      const result = validateWorkflowDef(definition(value));
      expect(result.ok).toBe(true);
      expect(result.ok && Object.hasOwn(result.value, "failureWorkflow")).toBe(false);
    }
  });

  it("is refused when not a usable name, with bad syntax or with a secret", () => {
    const messages = (value: unknown) => {
      const result = validateWorkflowDef(definition(value));
      return result.ok ? [] : result.errors.map((error) => `${error.path}: ${error.message}`);
    };
    expect(messages(42)).toEqual([expect.stringMatching(/^failureWorkflow: failureWorkflow must be the name of a workflow/)]);
    expect(messages("a:b")).toEqual(["failureWorkflow: failureWorkflow must not contain ':' (no workflow name can)"]);
    expect(messages("${workflow.input.")).toHaveLength(1);
    expect(messages("${workflow.secrets.token}")).toEqual([expect.stringContaining("failureWorkflow must not use secrets (token)")]);
  });
});
