// The web UI's view of WAIT, SET_VARIABLE and TERMINATE tasks (plain ES modules of ui/, run in Node: only pure helpers).
import { describe, expect, it } from "vitest";

interface DiagramModule {
  taskTypeOf(task: { taskType: string; workflowTask?: { type?: string } }): string;
  systemTaskNote(definitionTask: { taskReferenceName: string; type: string; inputParameters?: Record<string, unknown>; sink?: string; joinOn?: string[]; defaultExclusiveJoinTask?: string[] }): string | null;
}
interface ExecutionModule {
  isCompletableByHand(task: { taskType: string; status: string; inputData: Record<string, unknown>; workflowTask?: { type?: string } }): boolean;
}

// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const { systemTaskNote, taskTypeOf } = (await import(/* @vite-ignore */ new URL("../../ui/lib/diagram.js", import.meta.url).href)) as DiagramModule;
const { isCompletableByHand } = (await import(/* @vite-ignore */ new URL("../../ui/views/execution.js", import.meta.url).href)) as ExecutionModule;

describe("the UI and system tasks", () => {
  it("offers to complete or fail a waiting WAIT task by hand, and nothing once it has ended", () => {
    const wait = (status: string, inputData: Record<string, unknown> = {}) => ({ taskType: "WAIT", status, inputData, workflowTask: { type: "WAIT" } });
    expect(isCompletableByHand(wait("IN_PROGRESS"))).toBe(true);
    expect(isCompletableByHand(wait("IN_PROGRESS", { duration: "1h" }))).toBe(true);
    expect(isCompletableByHand(wait("COMPLETED"))).toBe(false);
    expect(isCompletableByHand({ taskType: "TERMINATE", status: "COMPLETED", inputData: {}, workflowTask: { type: "TERMINATE" } })).toBe(false);
  });

  it("offers to complete or fail a waiting HUMAN task by hand, and nothing once it has ended", () => {
    const human = (status: string) => ({ taskType: "HUMAN", status, inputData: { __humanTaskDefinition: {} }, workflowTask: { type: "HUMAN" } });
    expect(isCompletableByHand(human("IN_PROGRESS"))).toBe(true);
    expect(isCompletableByHand(human("COMPLETED"))).toBe(false);
    expect(isCompletableByHand(human("SCHEDULED"))).toBe(false);
    expect(isCompletableByHand({ taskType: "YIELD", status: "IN_PROGRESS", inputData: {}, workflowTask: { type: "YIELD" } })).toBe(true);
    expect(isCompletableByHand({ taskType: "PULL_WORKFLOW_MESSAGES", status: "IN_PROGRESS", inputData: {}, workflowTask: { type: "PULL_WORKFLOW_MESSAGES" } })).toBe(true);
    expect(isCompletableByHand({ taskType: "PULL_WORKFLOW_MESSAGES", status: "COMPLETED", inputData: {}, workflowTask: { type: "PULL_WORKFLOW_MESSAGES" } })).toBe(false);
  });

  it("says in the diagram what each system step does, from its definition", () => {
    const step = (type: string, inputParameters: Record<string, unknown>) => ({ taskReferenceName: "s", type, inputParameters });
    expect(systemTaskNote(step("WAIT", { duration: "1h 30m" }))).toBe("waits 1h 30m");
    expect(systemTaskNote(step("WAIT", { until: "2030-01-02 03:04 UTC" }))).toBe("waits until 2030-01-02 03:04 UTC");
    expect(systemTaskNote(step("WAIT", {}))).toBe("waits to be completed by hand");
    expect(systemTaskNote(step("SET_VARIABLE", { stage: "x", owner: "y" }))).toBe("sets stage, owner");
    expect(systemTaskNote(step("SET_VARIABLE", { a: 1, b: 2, c: 3, d: 4 }))).toBe("sets a, b, c and 1 more");
    expect(systemTaskNote(step("TERMINATE", { terminationStatus: "FAILED" }))).toBe("ends the workflow FAILED");
    expect(systemTaskNote(step("HTTP_POLL", { http_request: { uri: "https://x", terminationCondition: "$.output.response.body.done", pollingInterval: "30" } }))).toBe("polls every 30 s until $.output.response.body.done");
    expect(systemTaskNote(step("HTTP_POLL", { uri: "https://x", terminationCondition: "true" }))).toBe("polls every 60 s until true");
    expect(systemTaskNote(step("HTTP_POLL", { uri: "https://x" }))).toBe("calls once (no terminationCondition)");
    expect(systemTaskNote(step("LAMBDA", { scriptExpression: "return $.a + 1;" }))).toBe("computes return $.a + 1;");
    expect(systemTaskNote(step("INLINE", { evaluatorType: "javascript", expression: "$.a\n  + $.b" }))).toBe("computes $.a + $.b");
    expect(systemTaskNote(step("INLINE", { evaluatorType: "graaljs", expression: `(function () { return ${"1 + ".repeat(30)}1; })()` }))).toBe(
      `computes (function () { return ${"1 + ".repeat(30)}`.slice(0, 69) + "…",
    );
    expect(systemTaskNote(step("INLINE", { evaluatorType: "value-param", expression: "chosen" }))).toBe("takes input chosen");
    expect(systemTaskNote(step("JSON_JQ_TRANSFORM", { queryExpression: "{ total:\n  (.a + .b) }" }))).toBe("transforms with jq { total: (.a + .b) }");
    expect(systemTaskNote(step("HUMAN", { __humanTaskDefinition: { displayName: "Approve the refund" } }))).toBe("waits for a person: Approve the refund");
    expect(systemTaskNote(step("HUMAN", {}))).toBe("waits for a person");
    expect(systemTaskNote(step("START_WORKFLOW", { startWorkflow: { name: "billing", input: {} } }))).toBe("starts billing on its own");
    expect(systemTaskNote(step("START_WORKFLOW", { startWorkflow: "${workflow.input.request}" }))).toBe("starts a workflow on its own");
    expect(systemTaskNote(step("UPDATE_TASK", { taskStatus: "COMPLETED", workflowId: "${workflow.input.order}", taskRefName: "approval" }))).toBe("sets task approval of ${workflow.input.order} to COMPLETED");
    expect(systemTaskNote(step("UPDATE_TASK", { taskStatus: "FAILED", taskId: "${workflow.input.task}", workflowId: "ignored" }))).toBe("sets task ${workflow.input.task} to FAILED");
    expect(systemTaskNote(step("TERMINATE_WORKFLOW", { workflowId: ["a", "b"] }))).toBe("terminates 2 workflows");
    expect(systemTaskNote(step("TERMINATE_WORKFLOW", { workflowId: ["${workflow.input.id}"] }))).toBe("terminates workflow ${workflow.input.id}");
    expect(systemTaskNote(step("TERMINATE_WORKFLOW", { workflowId: "${workflow.input.ids}" }))).toBe("terminates the workflows ${workflow.input.ids} names");
    expect(systemTaskNote(step("GET_SIGNED_JWT", { privateKey: "${workflow.secrets.key}", subject: "robot@example.iam" }))).toBe("signs a JWT (RS256) for robot@example.iam");
    expect(systemTaskNote(step("GET_SIGNED_JWT", { privateKey: "${workflow.secrets.key}", algorithm: "ES256" }))).toBe("signs a JWT (ES256)");
    expect(systemTaskNote(step("UPDATE_SECRET", { _secrets: { secretKey: "api_token", secretValue: "${login.output.token}" } }))).toBe("writes secret api_token");
    expect(systemTaskNote(step("UPDATE_SECRET", { _secrets: "${workflow.input.secret}" }))).toBe("writes a secret");
    expect(systemTaskNote(step("NOOP", {}))).toBe("does nothing");
    expect(systemTaskNote(step("YIELD", {}))).toBe("waits for a signal");
    expect(systemTaskNote(step("PULL_WORKFLOW_MESSAGES", {}))).toBe("waits for messages pushed to the workflow");
    expect(systemTaskNote(step("PULL_WORKFLOW_MESSAGES", { batchSize: 10 }))).toBe("waits for messages pushed to the workflow, up to 10 at a time");
    expect(systemTaskNote(step("PULL_WORKFLOW_MESSAGES", { blocking: false }))).toBe("takes the workflow's queued messages, without waiting");
    expect(systemTaskNote({ ...step("EVENT", {}), sink: "conductor:approvals" })).toBe("publishes to conductor:approvals");
    const exclusiveJoin = (joinOn?: string[], defaultExclusiveJoinTask?: string[]) => ({ ...step("EXCLUSIVE_JOIN", {}), joinOn, defaultExclusiveJoinTask });
    expect(systemTaskNote(exclusiveJoin(["left_end", "right_end"], ["before"]))).toBe("ends with the first of left_end, right_end that ran, else of before");
    expect(systemTaskNote(exclusiveJoin(["left_end", "right_end"]))).toBe("ends with the first of left_end, right_end that ran");
    expect(systemTaskNote(exclusiveJoin([], ["before"]))).toBe("ends with the first of before that ran");
    expect(systemTaskNote(exclusiveJoin())).toBe("joins on nothing: waits for good");
    expect(systemTaskNote(step("HTTP", { uri: "https://example.com" }))).toBeNull();
  });

  it("treats a DYNAMIC's task as the task it chose: a worker's (by its name) is completed by hand while queued, an HTTP call only when asyncComplete", () => {
    const chosen = (taskType: string, status: string) => ({ taskType, status, inputData: {}, workflowTask: { type: "DYNAMIC" } });
    expect(taskTypeOf(chosen("encode", "SCHEDULED"))).toBe("SIMPLE");
    expect(isCompletableByHand(chosen("encode", "SCHEDULED"))).toBe(true);
    expect(taskTypeOf(chosen("HTTP", "IN_PROGRESS"))).toBe("HTTP");
    expect(isCompletableByHand(chosen("HTTP", "IN_PROGRESS"))).toBe(false);
    expect(taskTypeOf(chosen("DYNAMIC", "FAILED_WITH_TERMINAL_ERROR"))).toBe("DYNAMIC");
  });

  it("treats an HTTP_SYNC (Conductor OSS's) as an HTTP task: completed by hand only when asyncComplete, and a DYNAMIC's choice of it is no worker's task", () => {
    const sync = (status: string, asyncComplete?: boolean) => ({ taskType: "HTTP_SYNC", status, inputData: { http_request: { uri: "https://x", method: "GET", asyncComplete } }, workflowTask: { type: "HTTP_SYNC" } });
    expect(isCompletableByHand(sync("IN_PROGRESS", true))).toBe(true);
    expect(isCompletableByHand(sync("IN_PROGRESS"))).toBe(false);
    expect(isCompletableByHand(sync("COMPLETED", true))).toBe(false);
    const chosen = { taskType: "HTTP_SYNC", status: "SCHEDULED", inputData: {}, workflowTask: { type: "DYNAMIC" } };
    expect(taskTypeOf(chosen)).toBe("HTTP_SYNC");
    expect(isCompletableByHand(chosen)).toBe(false);
  });
});
