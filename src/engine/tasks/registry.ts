import type { TaskType } from "../model";
import { httpTask } from "./http";
import type { TaskTypeModule } from "./task-type";
import { waitForWebhookTask } from "./wait-for-webhook";

/** Task types the engine can run, by type name. */
const MODULES: Partial<Record<TaskType, TaskTypeModule>> = {
  HTTP: httpTask,
  WAIT_FOR_WEBHOOK: waitForWebhookTask,
};

/** The module running tasks of `type`, or undefined when this build cannot run it. */
export function taskModule(type: TaskType): TaskTypeModule | undefined {
  return MODULES[type];
}
