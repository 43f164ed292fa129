/**
 * Orkes' task output cache (`cacheConfig` of an HTTP, HTTP_POLL or SIMPLE task): before such a task runs, an output cached under
 * its task name and key completes it instead (no request, no worker); otherwise its output is cached once it
 * completes. The decider marks what to look up and applies what was found; the actor reads and writes the cache.
 */
import { hasExpression, referencedSecrets, resolveValue } from "./expressions";
import { evaluationContext, workflowRecord } from "./evaluation";
import { isHttpFamilyType, type JsonObject, type JsonValue, type TaskCacheConfig, type TaskExecution, type WorkflowExecution } from "./model";
import { jsonBytesWithin } from "./json-bytes";
import { instanceTask } from "./plan";
import { resolvedTaskInput, taskInputTemplate } from "./tasks/registry";
import { isJsonObjectValue } from "./tasks/workflow-start-fields";

/** Longest key a cache key template may resolve to: a longer one caches nothing (the task simply runs). */
export const MAX_CACHE_KEY_LENGTH = 1_024;

/**
 * Most a key is built to before it is given up: UTF-8 bytes are at most 3 a UTF-16 unit, so no text or value within
 * {@link MAX_CACHE_KEY_LENGTH} characters is refused by it, and a key longer than that caches nothing anyway.
 */
const KEY_BUILD_LIMIT = 3 * MAX_CACHE_KEY_LENGTH;

/** An output to cache: what a task that missed the cache completed with. */
export interface TaskCacheWrite {
  taskId: string;
  taskName: string;
  key: string;
  output: JsonObject;
  ttlSeconds: number;
}

/**
 * The key `config` gives task `task` (its input resolved): its `${...}` name the task's input (`${uri}-${method}`, as
 * Orkes' keys do; see {@link inputNamed}) or the workflow (`${workflow.input.tenant}`). Undefined when it cannot be resolved or comes to
 * nothing (or too long): the task then runs uncached.
 */
export function taskCacheKey(state: WorkflowExecution, task: TaskExecution, config: TaskCacheConfig, now: number): string | undefined {
  const sent = sentInput(state, task, now);
  if (sent === undefined) return undefined;
  const key = resolvedKey(state, task, config, sent.input, now);
  return key === undefined ? undefined : storedKey(key, sent.secrets);
}

/** What `config`'s key resolves to for `task`, its input read as `input`, or undefined (see {@link taskCacheKey}). */
function resolvedKey(state: WorkflowExecution, task: TaskExecution, config: TaskCacheConfig, input: JsonObject, now: number): string | undefined {
  if (!hasExpression(config.key)) return config.key;
  let resolved;
  try {
    // Text past the bound is refused as it is built: a query's values written in may be many times the input they read.
    const context = { workflow: workflowRecord(state), task: (name: string) => inputNamed(task.taskType, input, name), now, maxBytes: KEY_BUILD_LIMIT };
    resolved = resolveValue(config.key, context);
  } catch {
    return undefined;
  }
  if (resolved === null) return undefined;
  // A whole value (a query's subtrees, some hundreds of KB) is measured before it is written out.
  if (typeof resolved !== "string" && jsonBytesWithin(resolved, KEY_BUILD_LIMIT) > KEY_BUILD_LIMIT) return undefined;
  const key = typeof resolved === "string" ? resolved : JSON.stringify(resolved);
  return key === "" || key.length > MAX_CACHE_KEY_LENGTH ? undefined : key;
}

/** Marks a stored key that carries the secrets its task sends (never in a secret's name, see SECRET_NAME_PATTERN). */
const SECRETS_MARK = "\u001f";

/**
 * The key as stored: `key` itself when its task sends no secret, else the names of the secrets it sends before it, so
 * that an output answered to one credential is found only by a task sending the same ones, wherever the key reads (a
 * key `${uri}` of a request whose credential is in a header reads alike for every credential). Only a definition that
 * may use those secrets names them (see `authorizeSecretUse`), so no other definition's task finds such an output, nor
 * writes one a task sending them would find. One-to-one, whatever text a key resolves to: a task sending secrets
 * stores `<mark><names><mark><key>`, a name's character after the first mark; a task sending none stores its key as it
 * is, or with a second mark in front when it starts with the mark itself.
 */
function storedKey(key: string, secrets: readonly string[]): string {
  if (secrets.length > 0) return `${SECRETS_MARK}${secrets.join(",")}${SECRETS_MARK}${key}`;
  return key.startsWith(SECRETS_MARK) ? `${SECRETS_MARK}${key}` : key;
}

/**
 * The task input `name` names in a key: the input's own; for an HTTP (HTTP_SYNC) or HTTP_POLL task, which takes its request flat or nested in
 * `http_request` (nested winning field by field), the request's field as it is sent, so that `${uri}` names the URI
 * wherever it is written (the client builders nest it).
 */
function inputNamed(taskType: string, input: JsonObject, name: string): JsonValue | undefined {
  const request = isHttpFamilyType(taskType) ? input["http_request"] : undefined;
  if (isJsonObjectValue(request) && Object.hasOwn(request, name)) return request[name];
  return Object.hasOwn(input, name) ? input[name] : undefined;
}

/**
 * The names of the secrets stored key `key` carries (see {@link storedKey}), sorted; none for a task sending none. For
 * the actor, which makes the key finer with the versions of those secrets as it looks up (a secret given a new value
 * then misses what was cached with the old).
 */
export function cacheKeySecrets(key: string): string[] {
  if (!key.startsWith(SECRETS_MARK) || key.startsWith(SECRETS_MARK, 1)) return [];
  const end = key.indexOf(SECRETS_MARK, 1);
  return end < 0 ? [] : key.slice(1, end).split(",");
}

/**
 * The input a key reads, and the secrets `task` sends (by name, sorted), or undefined when its template cannot be
 * resolved again (it then runs uncached). The input is the task's, except that where its template reads a secret, the
 * reference as written (`${workflow.secrets.token_a}`) stands in the stored `***`. Every secret reads `***` there, so a
 * key naming such input (`${uri}` with `?key=${workflow.secrets.token_a}`) would be one key for every secret, and a
 * task of the same name sending another credential would be completed with the answer to this one. The value itself
 * never enters a key (keys are stored). The secrets are those the resolution reads, as the dispatch reads them: not
 * those of a branch not taken (`${tenant == 'a' ? workflow.secrets.a : workflow.secrets.b}` sends one of two), none
 * when the input was given whole. Resolved as the task was scheduled (this runs as it is scheduled), with its variables.
 */
function sentInput(state: WorkflowExecution, task: TaskExecution, now: number): { input: JsonObject; secrets: string[] } | undefined {
  const definition = task.inputGiven === true ? undefined : instanceTask(state.definition, task);
  if (definition === undefined || referencedSecrets(taskInputTemplate(definition)).length === 0) return { input: task.inputData, secrets: [] };
  const read = new Set<string>();
  const reference = (name: string) => {
    read.add(name);
    return `\${workflow.secrets.${name}}`;
  };
  const asScheduled: WorkflowExecution = { ...state, variables: task.inputVariables ?? state.variables };
  const context = evaluationContext(asScheduled, now, task.taskId, reference);
  let resolved;
  try {
    resolved = resolvedTaskInput(definition, (template) => resolveValue(template, context));
  } catch {
    return undefined;
  }
  const input = isJsonObjectValue(resolved) ? { ...task.inputData, ...resolved } : task.inputData;
  return { input, secrets: [...read].sort() };
}

/** The tasks waiting for their cache look-up, as `{taskId, taskName, key}`. */
export function awaitedCacheLookups(state: WorkflowExecution): Array<{ taskId: string; taskName: string; key: string }> {
  return state.tasks.flatMap((task) => (task.cache?.state === "looking" && task.status === "SCHEDULED" ? [{ taskId: task.taskId, taskName: task.taskDefName, key: task.cache.key }] : []));
}

/**
 * The outputs to cache after `next` was decided on `previous`: those of tasks that missed the cache and have just
 * COMPLETED (not COMPLETED_WITH_ERRORS, nor a completion seen before).
 */
export function taskCacheWrites(previous: WorkflowExecution | null, next: WorkflowExecution): TaskCacheWrite[] {
  const writes: TaskCacheWrite[] = [];
  for (const task of next.tasks) {
    if (task.cache?.state !== "missed" || task.status !== "COMPLETED") continue;
    const before = previous?.tasks.find((candidate) => candidate.taskId === task.taskId);
    if (before === task || before?.status === "COMPLETED") continue;
    const config = instanceTask(next.definition, task)?.cacheConfig;
    if (config === undefined) continue;
    writes.push({ taskId: task.taskId, taskName: task.taskDefName, key: task.cache.key, output: task.outputData, ttlSeconds: config.ttlInSecond });
  }
  return writes;
}
