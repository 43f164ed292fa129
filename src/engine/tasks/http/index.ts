import { startDispatched, type TaskTypeModule } from "../task-type";
import { httpTimeouts } from "./request";

/**
 * The HTTP task: its side effect is one outbound request made by the actor; the response comes back
 * as a task update (see `httpOutcome`). With asyncComplete the task then waits for the completion API.
 */
export const httpTask: TaskTypeModule = {
  type: "HTTP",
  start(task, _definition, _execution, env) {
    return startDispatched(this, task, env);
  },
  attemptDeadline(task, env) {
    const { connectTimeoutMs, readTimeoutMs } = httpTimeouts(task.inputData, env.config);
    return env.now + connectTimeoutMs + readTimeoutMs + env.config.dispatchGraceMs;
  },
};

/**
 * HTTP_SYNC (Conductor OSS's HttpSyncTask): the HTTP task under its own type name. Conductor makes its call inside the
 * decision rather than from the async system-task queue; here every HTTP task's call is made by the execution's actor,
 * queued nowhere, so it is the same task (see `isHttpType`), its instances showing `taskType: "HTTP_SYNC"`.
 */
export const httpSyncTask: TaskTypeModule = { ...httpTask, type: "HTTP_SYNC" };

export { buildHttpRequest, httpRequestFields, isAsyncComplete, httpTimeouts } from "./request";
export type { HttpRequestSpec, HttpRequestBuild } from "./request";
export { httpOutcome, httpOutput, decodeBody, isTextualContentType } from "./response";
export type { HttpResponseData, HttpOutcome } from "./response";
