/**
 * The JSONPath part of a path (Jayway's, which Conductor evaluates `${…}` with): wildcards, deep scan, unions, slices
 * and filters select any number of values, and the functions Jayway lets end a path. Pure: the evaluator supplies
 * how a filter's predicate is decided.
 */
import type { JsonValue } from "../model";
import type { Expression, PathFunction, PathSegment, QueryStep } from "./ast";
import { ExpressionLimitError } from "./errors";

/**
 * The most values the queries of one resolution may take (a task's input, a workflow's outputParameters: every `${…}`
 * of it), their steps and the queries of their filters together (a filter counts each value it tests too). Each `..`
 * or `*` multiplies what the step before it selected: `workflow.input..*..*..*..*..*` over a 200-byte input of nested
 * arrays would select some 90 million values and run the Durable Object out of its 128 MB, at every attempt to decide
 * again; a filter whose predicate is such a query multiplies the time as well; and an input of hundreds of `${…}` just
 * under the bound each would take hundreds of millions of steps (tens of milliseconds a million), which is why the bound spans
 * the resolution rather than each expression. A document within the default MAX_PAYLOAD_BYTES (768 KB) holds under
 * 400,000 values, so queries that take each of them once or twice in all pass; and a million references are some
 * 8 MB, within what an isolate holds beside its executions.
 */
export const MAX_QUERY_VALUES = 1_000_000;

/**
 * What the queries of one resolution have taken so far (see {@link MAX_QUERY_VALUES}): one per resolution (the
 * EvaluationContext's), shared by every expression of it, the queries in them and in their filters' predicates, so
 * that neither nesting, nor repetition, nor the number of expressions multiplies the bound.
 */
export class QueryBudget {
  private taken = 0;

  /**
   * Counts one value more, checked as each is taken: one step (a `..` over what the steps before selected) may be the
   * one that would not fit in memory.
   *
   * @throws ExpressionLimitError past MAX_QUERY_VALUES
   */
  take(): void {
    if (++this.taken > MAX_QUERY_VALUES) {
      throw new ExpressionLimitError(
        `the JSONPath queries resolved together select more than ${MAX_QUERY_VALUES} values (those of every expression of a task's input or a workflow's output, their steps and filters; each '..' or '*' multiplies what the step before it selected)`,
      );
    }
  }
}

/** Path segments that address an array element when the current value is an array. */
const INDEX_KEY = /^[0-9]+$/;

/**
 * The child `segment` names in `value`, or undefined when it has none. Own properties only, so `__proto__` or
 * `constructor` never reach the prototype; a negative number counts from the end of an array.
 */
export function childOf(value: JsonValue, segment: PathSegment): JsonValue | undefined {
  if (Array.isArray(value)) {
    // A negative index (a literal `[-1]`) counts from the end; a key, even "-1", is no index.
    const given = typeof segment === "number" ? segment : INDEX_KEY.test(segment) ? Number(segment) : Number.NaN;
    const index = given < 0 ? value.length + given : given;
    return index >= 0 && index < value.length ? value[index] : undefined;
  }
  if (value !== null && typeof value === "object") {
    const key = String(segment);
    return Object.hasOwn(value, key) ? value[key] : undefined;
  }
  return undefined;
}

/** True when every segment names a child, from `value` down: what Jayway's `[?(@.field)]` asks. */
export function pathExists(value: JsonValue, segments: readonly PathSegment[]): boolean {
  let current: JsonValue | undefined = value;
  for (const segment of segments) {
    current = childOf(current, segment);
    if (current === undefined) return false;
  }
  return true;
}

/**
 * Everything `steps` select from `start`, in document order. Missing children select nothing (Jayway with
 * SUPPRESS_EXCEPTIONS, as Conductor configures it), so the answer is a list, possibly empty, never null.
 *
 * @throws ExpressionLimitError once what is taken passes what `budget` allows
 */
export function selectAll(
  start: JsonValue,
  steps: readonly QueryStep[],
  matches: (predicate: Expression, value: JsonValue) => boolean,
  budget: QueryBudget,
): JsonValue[] {
  let selected: JsonValue[] = [start];
  for (const step of steps) {
    const next = stepValues(budget);
    for (const value of selected) selectFrom(value, step, matches, next);
    selected = next.values;
  }
  return selected;
}

/** What one step selected so far, and how it takes one more (counted) or counts one it only tested. */
type StepValues = { readonly values: JsonValue[]; readonly push: (value: JsonValue) => void; readonly test: () => void };

function stepValues(budget: QueryBudget): StepValues {
  const values: JsonValue[] = [];
  return {
    values,
    push: (value) => {
      budget.take();
      values.push(value);
    },
    test: () => budget.take(),
  };
}

function selectFrom(value: JsonValue, step: QueryStep, matches: (predicate: Expression, value: JsonValue) => boolean, into: StepValues): void {
  switch (step.kind) {
    case "child":
      pushDefined(into, childOf(value, step.key));
      return;
    case "union":
      for (const key of step.keys) pushDefined(into, childOf(value, key));
      return;
    case "wildcard":
      pushAll(into, childrenOf(value));
      return;
    case "descend":
      pushSelfAndDescendants(into, value);
      return;
    case "slice":
      if (Array.isArray(value)) pushAll(into, value.slice(step.from ?? 0, step.to ?? value.length));
      return;
    case "filter":
      // Jayway filters an array's elements, and tests an object as a whole.
      // Each value tested counts once, kept or not (a predicate without a query costs its evaluation all the same);
      // the queries of the predicate count besides.
      if (Array.isArray(value)) {
        for (const element of value) {
          into.test();
          if (matches(step.predicate, element)) into.values.push(element);
        }
      } else if (value !== null && typeof value === "object") {
        into.test();
        if (matches(step.predicate, value)) into.values.push(value);
      }
      return;
  }
}

function pushDefined(into: StepValues, value: JsonValue | undefined): void {
  if (value !== undefined) into.push(value);
}

/** One by one, each counted (and spreading a list of a hundred thousand values into push() would overflow the call stack). */
function pushAll(into: StepValues, values: readonly JsonValue[]): void {
  for (const value of values) into.push(value);
}

function childrenOf(value: JsonValue): JsonValue[] {
  if (Array.isArray(value)) return value;
  if (value !== null && typeof value === "object") return Object.values(value);
  return [];
}

/** The value, then what is below it depth first; a loop over a stack, so deep documents cannot overflow the call stack. */
function pushSelfAndDescendants(into: StepValues, value: JsonValue): void {
  const pending: JsonValue[] = [value];
  while (pending.length > 0) {
    const current = pending.pop() as JsonValue;
    into.push(current);
    const children = childrenOf(current);
    for (let index = children.length - 1; index >= 0; index--) pending.push(children[index] as JsonValue);
  }
}

/** Applies a path function to what the path selected (for a query, the list of everything selected); null when it does not apply. */
export function applyPathFunction(fn: PathFunction, value: JsonValue): JsonValue {
  switch (fn) {
    case "length":
      if (Array.isArray(value) || typeof value === "string") return value.length;
      return value !== null && typeof value === "object" ? Object.keys(value).length : null;
    case "keys":
      return value !== null && typeof value === "object" && !Array.isArray(value) ? Object.keys(value) : null;
    case "first":
      return Array.isArray(value) ? (value[0] ?? null) : null;
    case "last":
      return Array.isArray(value) ? (value.at(-1) ?? null) : null;
    default:
      return aggregate(fn, Array.isArray(value) ? value.filter((item): item is number => typeof item === "number") : []);
  }
}

/** Jayway's numeric functions over the numbers of a list; null when it holds none. */
function aggregate(fn: "min" | "max" | "avg" | "sum" | "stddev", numbers: number[]): JsonValue {
  if (numbers.length === 0) return null;
  const sum = numbers.reduce((total, number) => total + number, 0);
  const mean = sum / numbers.length;
  switch (fn) {
    case "min":
      return numbers.reduce((least, number) => Math.min(least, number));
    case "max":
      return numbers.reduce((most, number) => Math.max(most, number));
    case "sum":
      return sum;
    case "avg":
      return mean;
    case "stddev":
      return Math.sqrt(numbers.reduce((total, number) => total + (number - mean) ** 2, 0) / numbers.length);
  }
}
