import type { TaskType } from "../model";
import { httpTask } from "./http";
import type { TaskTypeModule } from "./task-type";

/** Task types the engine can run, by type name. */
const MODULES: Partial<Record<TaskType, TaskTypeModule>> = {
  HTTP: httpTask,
};

/** The module running tasks of `type`, or undefined when this build cannot run it. */
export function taskModule(type: TaskType): TaskTypeModule | undefined {
  return MODULES[type];
}
