import type { DecideEnv } from "../../src/engine/config";
import { decide as decideAlone, type Decision, type ExecutionEvent } from "../../src/engine/decider";
import type { WorkflowExecution } from "../../src/engine/model";

/**
 * Objects (plain objects and arrays) frozen with everything they reach: a value met again (the tasks a decision left as
 * they were, the definition) is not walked again, so freezing an execution decision after decision costs the objects
 * each decision made, not the whole execution each time.
 */
const deeplyFrozen = new WeakSet<object>();

/**
 * `value` frozen in place with every plain object and array it reaches, returned. Anything else (a Map, a Set, a class
 * instance) is left as it is: an execution and its decisions are JSON-shaped, and freezing a Map would not stop `set`.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || deeplyFrozen.has(value)) return value;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && prototype !== Object.prototype && prototype !== null) return value;
  // Marked first: a cycle ends here instead of looping.
  deeplyFrozen.add(value);
  Object.freeze(value);
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  return value;
}

/**
 * The decider's `decide`, with the execution it is given and the decision it returns deep-frozen. The engine keeps
 * walks of a task list keyed by the list (lanes.ts, draft.ts), which are right only while no task list, and no task in
 * one, is changed in place once a decision returned it or while it is a decision's input: only a Draft builds changed
 * lists, as copies. Frozen, any change in place (in the engine, or in a test reusing a state) throws a TypeError
 * (modules are strict) where it would otherwise go unseen. Production code is not frozen: this costs it nothing.
 */
export function decide(state: WorkflowExecution, event: ExecutionEvent, env: DecideEnv): Decision {
  return deepFreeze(decideAlone(deepFreeze(state), event, env));
}
