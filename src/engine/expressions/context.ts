/** What an expression can see while it is evaluated. */
import type { JsonObject, JsonValue } from "../model";
import type { QueryBudget } from "./query";

/**
 * The fields of the `workflow` root (the engine's workflowRecord), and `secrets` (read one at a time, never in the record): every name
 * `${workflow.<field>}` can read. Registration refuses a near miss of one (`${workflow.inputs.x}`), which only resolves to null.
 */
export const WORKFLOW_FIELDS = [
  "workflowId",
  "workflowType",
  "workflowName",
  "version",
  "correlationId",
  "reasonForIncompletion",
  "schemaVersion",
  "input",
  "output",
  "variables",
  "status",
  "parentWorkflowId",
  "parentWorkflowTaskId",
  "priority",
  "taskToDomain",
  "idempotencyKey",
  "createTime",
  "startTime",
  "env",
  "secrets",
] as const;

/**
 * The data an expression resolves against. Supplied by the engine per task so evaluation
 * itself stays pure (no clock, no storage): the current time arrives as `now`, secrets
 * through the `secret` callback.
 */
export interface EvaluationContext {
  /** The `workflow` root: workflowId, correlationId, input, and any other workflow fields the engine exposes. */
  workflow: JsonObject;
  /**
   * The visible record (at least `input`, `output`, `status`, `taskId`) of the task a reference name names (for a task
   * cache key, the value of the task's input of that name); undefined for none. A lookup, not a map: building every
   * task's record for each resolution would cost what the execution holds, while an input names a few.
   */
  task(reference: string): JsonValue | undefined;
  /**
   * The record a JSONPath query over the task, or over its whole output, sees (`${ref.output..status}`): {@link task}'s,
   * but for an HTTP task's output as Conductor's is, without the top-level copies of its response's fields, so each
   * value is found once. Omitted → {@link task}'s.
   */
  queriedTask?(reference: string): JsonValue | undefined;
  /** `${system.currentTimeMillis}` */
  now: number;
  /** `${TASK_ID}` (Conductor's `${CPEWF_TASK_ID}`): id of the task whose input is being resolved; null when none. */
  taskId?: string;
  /** Looks up `${workflow.secrets.<name>}`; undefined means the secret does not exist. Omitted → every secret reference is missing. */
  secret?: (name: string) => string | undefined;
  /**
   * The keys whose values are shown masked (`_secrets`, `_masked`, the definition's `maskedFields`). A path with nested
   * `${…}` may not reach one through a step only its data names: what is shown could not be masked.
   */
  maskedKeys?: ReadonlySet<string>;
  /**
   * What the JSONPath queries of everything resolved with this context may still take, together (see MAX_QUERY_VALUES
   * in query.ts): one context, one budget, per resolution (a task's input with the defaults it falls back to, a
   * workflow's outputParameters), so that many expressions cannot each take the bound. Omitted → each `${…}` its own.
   */
  queryBudget?: QueryBudget;
  /**
   * The most bytes a value resolved with this context may be (MAX_PAYLOAD_BYTES): a text that interpolation builds
   * (`"a${x}b"`, a spliced path) fails the resolution with an ExpressionLimitError as soon as it is longer, rather than
   * being built whole first (a query's values written into text may be a thousand times the document they come from).
   * Omitted → unbounded.
   */
  maxBytes?: number;
}
