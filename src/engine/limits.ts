import { exceedsJsonDepth, MAX_JSON_DEPTH } from "./definition/checks";
import { holdsLoneSurrogate, LONE_SURROGATE_TEXT_MESSAGE } from "./http-syntax";
import { SHORT_TASK_LIST } from "./draft";
import { jsonBytesWithin } from "./json-bytes";
import type { JsonValue, TaskExecution, WorkflowDef } from "./model";

const encoder = new TextEncoder();

/**
 * How far past its limit {@link oversize} counts a value before it stops: up to this many times the limit it gives the
 * exact size (the reason a user reads says by how much a payload is over), past it only that it is more. Counting builds
 * nothing, so the bound is one of time: a few MB of strings, where a value made of references to the same large one
 * (`${workflow.input.big}` written 800 times) would be hundreds of MB written out.
 */
const EXACT_SIZE_MULTIPLE = 8;

/**
 * The size in bytes of a value as stored (UTF-8 JSON), when it exceeds `limit`; undefined when it
 * fits. Checked where a payload comes from outside the engine's control (a response, a completion,
 * a child's output, outputParameters), so an oversized one fails clearly instead of breaking the
 * write that would persist it. Counted without writing it out (see {@link jsonBytesWithin}), exactly up to
 * {@link EXACT_SIZE_MULTIPLE} times the limit, a count past that beyond it.
 */
export function oversize(value: JsonValue | WorkflowDef, limit: number): number | undefined {
  const bytes = jsonBytesWithin(value, limit * EXACT_SIZE_MULTIPLE);
  return bytes > limit ? bytes : undefined;
}

/**
 * Why a payload from outside cannot be stored, when it nests deeper than {@link MAX_JSON_DEPTH}:
 * storing, copying or walking it recursively would overflow the stack (a 200 KB `[[[…]]]` does).
 * Undefined when it is within the limit. Iterative, so the check itself cannot overflow.
 */
export function overdeepReason(what: string, value: JsonValue): string | undefined {
  return exceedsJsonDepth(value) ? `${what} nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels` : undefined;
}

/** The reason given when a payload is too large. */
export function oversizeReason(what: string, bytes: number, limit: number): string {
  // Past the multiple, `bytes` is where counting stopped (see oversize), not the whole.
  const size = bytes > limit * EXACT_SIZE_MULTIPLE ? `more than ${limit * EXACT_SIZE_MULTIPLE}` : `${bytes}`;
  return `${what} is ${size} bytes, over the limit of ${limit} bytes (MAX_PAYLOAD_BYTES)`;
}

/**
 * Why an output the engine computed from outside data (a script's value, a jq filter's) cannot be stored: it nests too
 * deep (walking it later, a template reading it or the stored copy, would overflow the stack) or is over `limit` bytes.
 * Undefined when it can. `what` names it in the reason.
 */
export function unstorableReason(what: string, value: JsonValue, limit: number): string | undefined {
  const deep = overdeepReason(what, value);
  if (deep !== undefined) return deep;
  const bytes = oversize(value, limit);
  return bytes === undefined ? undefined : oversizeReason(what, bytes, limit);
}

/**
 * Largest execution's own copy of its definition (UTF-8 JSON bytes), with the tasks its dynamic forks forked: it is
 * one SQLite row, which cannot hold more than 2 MB. A registered definition is at most a request's size (1 MiB by
 * default), so forks have at least half a megabyte.
 */
export const MAX_STORED_DEFINITION_BYTES = 1_536 * 1024;

/**
 * Why `definition` cannot be an execution's copy of its definition, as a start, a restart with the latest definitions
 * or an upgrade would store it (with the registered task definitions of its tasks copied in, each as large as a request
 * may make it): over {@link MAX_STORED_DEFINITION_BYTES}, the store refuses it and every save of the execution fails.
 * Undefined when it fits. `refused`, when given, names the refused command, which the reason follows.
 */
export function storedDefinitionOversizeReason(definition: WorkflowDef, refused?: string): string | undefined {
  const bytes = oversize(definition, MAX_STORED_DEFINITION_BYTES);
  if (bytes === undefined) return undefined;
  // Past the multiple, `bytes` is where counting stopped (see oversize), not the whole.
  const size = bytes > MAX_STORED_DEFINITION_BYTES * EXACT_SIZE_MULTIPLE ? `more than ${MAX_STORED_DEFINITION_BYTES * EXACT_SIZE_MULTIPLE}` : `${bytes}`;
  return `${refused === undefined ? "The" : `${refused}: the`} definition with the registered task definitions of its tasks is ${size} bytes, over the limit of ${MAX_STORED_DEFINITION_BYTES} bytes of an execution's copy of it: make the task definitions smaller (their inputTemplate)`;
}

const definitionBytesCache = new WeakMap<WorkflowDef, number>();

/**
 * The size in bytes an execution's copy of its definition would be stored at (UTF-8 JSON) with registered task
 * definition `name` (`taskDef`, null for none registered) added to those it looked up: exact (up to
 * {@link EXACT_SIZE_MULTIPLE} times the limit). What a dynamic task runs by is looked up as it runs, and a task definition may be as large as a request (its
 * inputTemplate): two such made the row over 2 MB, and every save of the execution failed after. The copy is walked
 * once per object, and one that adds a task definition to one measured is known as the sum (see
 * {@link rememberDefinitionBytes}): a fork of many names walks it once, not once a name.
 */
export function definitionBytesWith(definition: WorkflowDef, name: string, taskDef: unknown): number {
  let bytes = definitionBytesCache.get(definition);
  if (bytes === undefined) {
    bytes = jsonBytesWithin(definition, MAX_STORED_DEFINITION_BYTES * EXACT_SIZE_MULTIPLE);
    definitionBytesCache.set(definition, bytes);
  }
  // The entry `"name":{...}`; a comma before it when the field holds some already, or the field itself (a comma before
  // it, its name and braces) when the copy has none. Exact: the sum is kept for the next copy, and an overcount grew.
  const known = definition.lookedUpTaskDefs;
  const around = known === undefined ? ',"lookedUpTaskDefs":{}'.length : hasOwnKey(known) ? 1 : 0;
  return bytes + jsonBytesWithin(name, MAX_STORED_DEFINITION_BYTES) + 1 + jsonBytesWithin(taskDef, MAX_STORED_DEFINITION_BYTES) + around;
}

/** True when `object` has a property of its own: asked without listing them (a fork of many names adds them one by one). */
function hasOwnKey(object: object): boolean {
  for (const key in object) if (Object.hasOwn(object, key)) return true;
  return false;
}

/** Keeps `bytes` (from {@link definitionBytesWith}) as the size of `definition`, the copy it measured. */
export function rememberDefinitionBytes(definition: WorkflowDef, bytes: number): void {
  definitionBytesCache.set(definition, bytes);
}

/** The reason a task fails whose registered task definition `name` would take its execution's copy of its definition to `bytes`. */
export function overStoredDefinitionReason(name: string, bytes: number): string {
  return `With the registered task definition ${name}, the execution's copy of its definition (with the task definitions of the tasks known only as it runs) would be ${bytes} bytes, over the limit of ${MAX_STORED_DEFINITION_BYTES} bytes: make the task definition smaller (its inputTemplate), or fork sub workflows instead`;
}

/**
 * Most characters of a task's failure reason given from outside (a task update, a webhook callback), as
 * Conductor's TaskResult keeps. Unbounded, it shares the task's stored row with an input and an output
 * each up to MAX_PAYLOAD_BYTES, and the three together can exceed the 2 MB a row may hold.
 */
export const MAX_TASK_REASON_LENGTH = 500;

/** Longest correlation id a workflow takes, however it is given (a start, a SET_CORRELATION_ID task). */
export const MAX_CORRELATION_ID_LENGTH = 512;

/**
 * Why a correlation id given as `field` is one the API's starts refuse, undefined when it is fine: longer than
 * {@link MAX_CORRELATION_ID_LENGTH}, or holding a lone surrogate (stored as text, it would read back as U+FFFD). For the
 * starts that resolve one (an event handler's, a START_WORKFLOW task's) and SET_CORRELATION_ID, which the API's checks
 * do not see. Either way the execution could be found by no correlation lookup, each of which refuses such an id.
 */
export function correlationIdProblem(field: string, correlationId: string): string | undefined {
  if (correlationId.length > MAX_CORRELATION_ID_LENGTH) return `${field} must be at most ${MAX_CORRELATION_ID_LENGTH} characters, but is ${correlationId.length}`;
  return holdsLoneSurrogate(correlationId) ? `${field} ${LONE_SURROGATE_TEXT_MESSAGE}` : undefined;
}

/**
 * `text` cut to at most `maxBytes` UTF-8 bytes, at a character's boundary, ending with a note of its full size;
 * unchanged when it fits.
 */
export function cutToBytes(text: string, maxBytes: number): string {
  const encoder = new TextEncoder();
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  const note = ` … (cut: ${bytes.length} bytes)`;
  // A character split at the cut decodes as U+FFFD: dropped.
  return `${new TextDecoder().decode(bytes.subarray(0, Math.max(0, maxBytes - encoder.encode(note).length))).replace(/\uFFFD+$/u, "")}${note}`;
}

/**
 * `text` cut to at most `limit` UTF-16 units, never between the two halves of a surrogate pair: a lone half
 * is stored as U+FFFD and garbles the text. Unchanged when it fits.
 */
export function cutText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const last = text.charCodeAt(limit - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? limit - 1 : limit);
}

const taskBytesCache = new WeakMap<TaskExecution, number>();

/** The size in bytes of a task instance as stored (UTF-8 JSON). */
export function storedTaskBytes(task: TaskExecution): number {
  return encoder.encode(JSON.stringify(task)).length;
}

/**
 * What {@link storedTasksBytes} last summed of a task list (by identity): the task objects it counted, position by
 * position, and their total.
 */
interface TasksBytes {
  readonly counted: TaskExecution[];
  total: number;
}

const tasksBytesCache = new WeakMap<readonly TaskExecution[], TasksBytes>();

/** {@link storedTaskBytes} of `task`, measured once per object. */
function cachedTaskBytes(task: TaskExecution): number {
  let bytes = taskBytesCache.get(task);
  if (bytes === undefined) {
    bytes = storedTaskBytes(task);
    taskBytesCache.set(task, bytes);
  }
  return bytes;
}

/**
 * The stored size of all of an execution's task instances, each measured once: the decider replaces,
 * never changes, a task object it updates, so a size remembered per object stays right. The sum is kept per task list
 * too, and only the tasks replaced or added since are looked up again: a decision asks this for each task it adds, and
 * summed afresh each time, a dynamic fork of N tasks looked N² sizes up.
 */
export function storedTasksBytes(tasks: readonly TaskExecution[]): number {
  // A short list is summed: keeping its sum would cost more.
  if (tasks.length <= SHORT_TASK_LIST) return tasks.reduce((total, task) => total + cachedTaskBytes(task), 0);
  let kept = tasksBytesCache.get(tasks);
  if (kept === undefined || kept.counted.length > tasks.length) {
    kept = { counted: [], total: 0 };
    tasksBytesCache.set(tasks, kept);
  }
  const counted = kept.counted;
  for (let position = 0; position < tasks.length; position++) {
    const task = tasks[position]!;
    const before = counted[position];
    if (before === task) continue;
    if (before !== undefined) kept.total -= cachedTaskBytes(before);
    kept.total += cachedTaskBytes(task);
    counted[position] = task;
  }
  return kept.total;
}

/** The reason given when a new task instance would take an execution's task data over its limit. */
export function overExecutionLimitReason(bytes: number, limit: number): string {
  return `The execution's task data would be ${bytes} bytes, over the limit of ${limit} bytes (MAX_EXECUTION_BYTES): no further task instance can be stored`;
}
