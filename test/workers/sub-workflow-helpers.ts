/**
 * What the sub-workflow files share. Two files (sub-workflow and sub-workflow-restarts), each its own workerd: a
 * `SELF.fetch` gets slower with every request its workerd has served (cloudflare/workers-sdk#15446), and one file's
 * 66 tests took 70 s.
 */
import type { JsonObject } from "../../src/engine/model";
import { eventually, httpTask, register, storedByExecutionObject, target, waitFor } from "./helpers";

/** A SUB_WORKFLOW task named as its reference. */
export const subTask = (ref: string, inputParameters: JsonObject, extra: JsonObject = {}): JsonObject => ({ name: ref, taskReferenceName: ref, type: "SUB_WORKFLOW", inputParameters, ...extra });
/** An HTTP task left IN_PROGRESS (asyncComplete) until completed from outside. */
export const waitTask = (ref: string): JsonObject => httpTask(ref, { uri: target(`/echo/${ref}`), method: "GET" }, { asyncComplete: true });

/** A child that echoes its input through the target and outputs what it got. */
export async function registerEchoChild(name: string, version = 1, tag = `v${version}`): Promise<void> {
  await register({
    name,
    version,
    tasks: [httpTask("echo", { uri: target(`/count/${name}-${tag}?who=\${workflow.input.who}`), method: "GET" })],
    outputParameters: { who: "${workflow.input.who}", tag, n: "${echo.output.body.n}" },
  });
}

/** A workflow's terminal statuses. */
export const terminal = ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"];

/** The id of the child the first task of `parentId` (a SUB_WORKFLOW task) started, once it has started one. */
export async function firstChildOf(parentId: string): Promise<string> {
  return String((await waitFor(parentId, (workflow) => workflow.tasks[0]?.outputData["subWorkflowId"] !== undefined)).tasks[0]!.outputData["subWorkflowId"]);
}

/** Waits until the parent of `childId` has answered the child's reopen (a retry or rerun of the child on its own). */
export async function reopenAnswered(childId: string): Promise<void> {
  await eventually(async () => (await storedByExecutionObject(childId)).metaKeys, (keys) => !keys.includes("parentReopen"), "the parent's answer to the child's reopen");
}
