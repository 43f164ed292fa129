/**
 * What the task-workers files share: a SIMPLE task, a batch poll as the official clients send it, a queue's size and a
 * worker's report. Two files (task-workers and task-workers-queues), each its own workerd: a `SELF.fetch` gets slower
 * with every request its workerd has served (cloudflare/workers-sdk#15446), and one file's 56 tests took 85 s.
 */
import type { JsonObject } from "../../src/engine/model";
import { api, apiOk, eventually, type TaskJson } from "./helpers";

/** A SIMPLE task of type `name`. */
export const simpleTask = (name: string, ref = `${name}_ref`, inputParameters: JsonObject = {}, extra: JsonObject = {}): JsonObject => ({ name, taskReferenceName: ref, type: "SIMPLE", inputParameters, ...extra });

/** A batch poll as the official clients send it. */
export async function poll(taskType: string, query: Record<string, string> = {}): Promise<TaskJson[]> {
  const params = new URLSearchParams({ workerid: "worker-1", count: "1", timeout: "0", ...query });
  return apiOk<TaskJson[]>("GET", `/api/tasks/poll/batch/${encodeURIComponent(taskType)}?${params}`);
}

/** Polls (bounded) until a task of that type comes out: a task is queued just after its workflow's start answers. */
export async function pollOne(taskType: string, query: Record<string, string> = {}): Promise<TaskJson> {
  const [task] = await eventually(() => poll(taskType, query), (tasks) => tasks.length > 0, `a ${taskType} task to poll`);
  return task!;
}

/** The number of tasks waiting in the default domain's queue of `taskType`. */
export async function queueSize(taskType: string): Promise<number> {
  const sizes = await apiOk<Record<string, number>>("GET", `/api/tasks/queue/sizes?taskType=${encodeURIComponent(taskType)}`);
  return sizes[taskType]!;
}

/** Reports `task`'s result as a worker does (POST /api/tasks). */
export function report(task: TaskJson, status: string, outputData: JsonObject = {}, extra: JsonObject = {}): Promise<Response> {
  return api("POST", "/api/tasks", { workflowInstanceId: task["workflowInstanceId"], taskId: task.taskId, status, outputData, ...extra });
}
