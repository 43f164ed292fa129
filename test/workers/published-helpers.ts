import { expect } from "vitest";
import type { JsonObject, JsonValue } from "../../src/engine/model";
import { apiOk, target, type TaskJson, type WorkflowJson } from "./helpers";
import { pollOne, report } from "./task-worker-helpers";

// What the tests running published workflow definitions (published-definitions*.test.ts) share.

/** The definition with every `published` text (a service on the author's machine) pointed at `uri`. */
export function withUri(definition: unknown, published: string, uri: string): JsonObject {
  // Replaced in the JSON text, escaped as a JSON string's content, so nothing else of the definition is touched.
  return JSON.parse(JSON.stringify(definition).replaceAll(published, JSON.stringify(uri).slice(1, -1))) as JsonObject;
}

/** A target-server URI answering `body` as JSON. */
export function answering(body: JsonValue): string {
  return target(`/respond?h=content-type:application/json&body=${JSON.stringify(body)}`);
}

/** Registers the definitions as given (JSON imports, typed by their content: any definition's JSON is accepted here). */
export async function registerAll(...definitions: unknown[]): Promise<void> {
  // PUT, Conductor's create-or-update of a list.
  await apiOk("PUT", "/api/metadata/workflow", definitions);
}

/** Polls a task of `taskType` and reports it COMPLETED with `output`; answers the task as polled. */
export async function work(taskType: string, output: JsonObject = {}): Promise<TaskJson> {
  const task = await pollOne(taskType);
  expect((await report(task, "COMPLETED", output)).status).toBe(200);
  return task;
}

/** The workflow's task of reference name `ref`, failing the test when it has none. */
export function taskNamed(workflow: WorkflowJson, ref: string): TaskJson {
  const task = workflow.tasks.find((candidate) => candidate.referenceTaskName === ref);
  if (task === undefined) throw new Error(`no task ${ref} in ${workflow.tasks.map((candidate) => candidate.referenceTaskName).join(", ")}`);
  return task;
}
