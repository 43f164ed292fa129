import { SELF, env, runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import type { IndexRow } from "../../src/actors/execution-index";
import type { NoticeAnswer } from "../../src/actors/owed-notices";
import type { JsonObject } from "../../src/engine/model";
import { executionStub } from "../../src/worker/executions";

/** Same value as TEST_ADMIN_KEY in vitest.config.ts. */
export const ADMIN_KEY = "test-admin:test-secret-0123456789";

/** Base URL of the loopback target server. */
export const target = (path: string) => `${env.TARGET_URL}${path}`;

/** Calls the service through the real router, as the admin unless other headers are given. */
export async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const init: RequestInit = { method, headers: { "x-api-key": ADMIN_KEY, ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] ??= "application/json";
  }
  return SELF.fetch(`https://conductor.test${path}`, init);
}

/** Like {@link api} but fails the test unless the status is `expected`; returns the parsed body. */
export async function apiOk<T = JsonObject>(method: string, path: string, body?: unknown, expected = 200): Promise<T> {
  const response = await api(method, path, body);
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${method} ${path} → ${response.status}, expected ${expected}: ${text}`);
  const type = response.headers.get("content-type") ?? "";
  return (type.includes("json") ? JSON.parse(text) : text) as T;
}

/** Registers (or overwrites) a definition. */
export async function register(definition: JsonObject): Promise<void> {
  await apiOk("POST", "/api/metadata/workflow?overwrite=true", { schemaVersion: 2, ownerEmail: "test@example.com", version: 1, ...definition });
}

/** Starts a workflow and returns its id. */
export async function startWorkflow(name: string, input: JsonObject = {}, query = ""): Promise<string> {
  return apiOk<string>("POST", `/api/workflow/${encodeURIComponent(name)}${query}`, input);
}

/** A task as the API shows it. */
export type TaskJson = JsonObject & { taskId: string; status: string; referenceTaskName: string; inputData: JsonObject; outputData: JsonObject };
/** A workflow as the API shows it. */
export type WorkflowJson = JsonObject & { workflowId: string; status: string; input: JsonObject; output: JsonObject; tasks: TaskJson[] };

/** The Workflow JSON with tasks. */
export async function getWorkflow(workflowId: string): Promise<WorkflowJson> {
  return apiOk("GET", `/api/workflow/${workflowId}?includeTasks=true`);
}

/**
 * Polls until the workflow's status is one of `statuses` (bounded: fails after `timeoutMs`).
 * Also accepts a predicate for waiting on task-level states.
 */
export async function waitFor(
  workflowId: string,
  until: string[] | ((workflow: WorkflowJson) => boolean),
  timeoutMs = 10_000,
): Promise<WorkflowJson> {
  const deadline = Date.now() + timeoutMs;
  const matches = typeof until === "function" ? until : (workflow: { status: string }) => until.includes(workflow.status);
  for (;;) {
    const workflow = await getWorkflow(workflowId);
    if (matches(workflow)) return workflow;
    if (Date.now() > deadline) throw new Error(`workflow ${workflowId} did not reach the expected state: ${JSON.stringify(workflow, null, 1).slice(0, 3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An HTTP task definition (flat placement). */
export function httpTask(ref: string, inputParameters: JsonObject, extra: JsonObject = {}): JsonObject {
  return { name: ref, taskReferenceName: ref, type: "HTTP", inputParameters, ...extra };
}

/** A WAIT task that waits until completed through the task API. */
export function waitTask(ref: string): JsonObject {
  return { name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} };
}

/** The status of each task of `workflow` by reference name (its latest instance's). */
export function statusByRef(workflow: WorkflowJson): Record<string, string> {
  return Object.fromEntries(workflow.tasks.map((task) => [task.referenceTaskName, task.status]));
}

/**
 * Registers and starts `name`: a fork of two branches (`leftBranch`, by default `l1` waiting then a counted `l2`; and
 * `r1` waiting, completed here with `{right: true}`), its JOIN on both branches' last tasks, then counted `post` and
 * `end`. Answers once the JOIN waits for the left branch alone.
 */
export async function startedWithJoinWaiting(name: string, leftBranch: JsonObject[] = [waitTask("l1"), httpTask("l2", { uri: target(`/count/${name}-l2`), method: "GET" })]): Promise<string> {
  await register({
    name,
    tasks: [
      { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [leftBranch, [waitTask("r1")]] },
      { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: [String(leftBranch.at(-1)!["taskReferenceName"]), "r1"] },
      httpTask("post", { uri: target(`/count/${name}-post`), method: "GET" }),
      httpTask("end", { uri: target(`/count/${name}-end`), method: "GET" }),
    ],
  });
  const workflowId = await startWorkflow(name);
  await waitFor(workflowId, (workflow) => statusByRef(workflow)["join"] === "IN_PROGRESS" && statusByRef(workflow)["r1"] === "IN_PROGRESS");
  await apiOk("POST", `/api/tasks/${workflowId}/r1/COMPLETED`, { right: true });
  await waitFor(workflowId, (workflow) => statusByRef(workflow)["r1"] === "COMPLETED");
  return workflowId;
}

/** Hits counted by the target for a key. */
export async function hits(key: string): Promise<number> {
  const response = await fetch(target(`/hits/${key}`));
  return ((await response.json()) as { hits: number }).hits;
}

/** Rows of a D1 table, for "nothing was written" checks. */
export async function rowCount(table: string): Promise<number> {
  const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>();
  return row?.n ?? 0;
}

/** Polls (bounded: fails after `timeoutMs`) until `accept` holds for what `read` answers; returns that answer. */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms (last: ${JSON.stringify(value)?.slice(0, 500)})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A gate crossed by polling flags. Not a promise made by the test and resolved inside a Durable Object's request:
 * after that, abortAllDurableObjects() blocks workerd for good (no timer fires, so no test timeout either), and a
 * later test of the file that evicts the objects would hang the run. Measured (a scratch file, a test then one calling
 * abortAllDurableObjects() and starting a workflow): with the object resolving the test's promise the abort returned
 * and every request after it hung until `timeout 180` killed the run; the other direction, an object awaiting a
 * promise the test made and the test resolving it (lifecycle's remove that waits for a notice), ran green, twice. A
 * promise made inside the object's request and never resolved (task-workers' lost push) is dropped by the abort.
 */
export interface Gate {
  /** Marks the gate reached (called where the staged race happens, in an object or the test). */
  hit(): void;
  /** Opens the gate. */
  release(): void;
  /** Resolves once reached; rejects after 10 s. */
  readonly reached: Promise<void>;
  /** Resolves once opened; rejects after 10 s. */
  readonly released: Promise<void>;
}

/** A new {@link Gate}. */
export function gate(): Gate {
  const state = { isHit: false, isReleased: false };
  const poll = async (flag: () => boolean) => {
    for (let i = 0; i < 2000 && !flag(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    if (!flag()) throw new Error("gate not crossed within 10 s: the race this test stages did not happen");
  };
  return {
    hit: () => void (state.isHit = true),
    release: () => void (state.isReleased = true),
    get reached() {
      return poll(() => state.isHit);
    },
    get released() {
      return poll(() => state.isReleased);
    },
  };
}

/**
 * Holds the answers limit object `limit` (an ExecutionLimit or a TaskLimit) gets from the execution objects on their way
 * (the network boundary): its binding to them is replaced by one whose `method` (`givePlace`, `holdsPlace`, `admit`) hits
 * `crossing`, waits for its release, then answers `answer` (or, a function, what it gives for the call's number, from 1).
 * Answers how many calls of `method` were made so far.
 */
export async function heldExecutionAnswers(limit: DurableObjectStub, method: string, crossing: Gate, answer: NoticeAnswer | ((call: number) => NoticeAnswer)): Promise<() => number> {
  let calls = 0;
  await runInDurableObject(limit, (instance) => {
    const object = instance as unknown as { env: Env };
    const real = object.env.WORKFLOW_EXECUTION;
    const answering = {
      idFromName: (name: string) => real.idFromName(name),
      get: () => ({
        [method]: async () => {
          const call = ++calls;
          crossing.hit();
          await crossing.released;
          return typeof answer === "function" ? answer(call) : answer;
        },
      }),
    };
    object.env = { ...object.env, WORKFLOW_EXECUTION: answering as unknown as Env["WORKFLOW_EXECUTION"] };
  });
  return () => calls;
}

/**
 * Makes the execution objects unreachable from limit object `limit` (an ExecutionLimit or a TaskLimit): its binding to
 * them (the network boundary) is replaced by one whose `methods` throw `error`.
 */
export async function unreachableExecutions(limit: DurableObjectStub, methods: readonly string[], error: Error = new Error("execution unreachable")): Promise<void> {
  await runInDurableObject(limit, (instance) => {
    const object = instance as unknown as { env: Env };
    const real = object.env.WORKFLOW_EXECUTION;
    const failing = async (): Promise<never> => {
      throw error;
    };
    const unreachable = { idFromName: (name: string) => real.idFromName(name), get: () => Object.fromEntries(methods.map((method) => [method, failing])) };
    object.env = { ...object.env, WORKFLOW_EXECUTION: unreachable as unknown as Env["WORKFLOW_EXECUTION"] };
  });
}

/**
 * Polls (bounded) until the execution's search row shows `status`. Search rows are written off the
 * hot path (a new execution's first one up to half a second after it starts, every one batched with
 * others), so tests that compare stored state wait for it first.
 */
export async function waitForIndexRow(workflowId: string, status: string, timeoutMs = 5_000): Promise<void> {
  const read = () => env.DB.prepare("SELECT status FROM executions WHERE workflow_id = ?").bind(workflowId).first<{ status: string }>();
  await eventually(read, (row) => row?.status === status, `the search row of ${workflowId} showing ${status}`, timeoutMs);
}

/**
 * What an execution's object still stores: rows of the execution itself (workflow, definition, tasks) and
 * the keys of its bookkeeping. A removed execution keeps only its tombstone (`removed`) until its alarm.
 */
export async function storedByExecutionObject(workflowId: string): Promise<{ executionRows: number; metaKeys: string[] }> {
  return runInDurableObject(executionStub(env, workflowId), (_instance, state) => {
    const tables = new Set(state.storage.sql.exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table'`).toArray().map((row) => row.name));
    const count = (table: string) => (tables.has(table) ? state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n : 0);
    const metaKeys = tables.has("meta") ? state.storage.sql.exec<{ key: string }>(`SELECT key FROM meta ORDER BY key`).toArray().map((row) => row.key) : [];
    return { executionRows: count("workflow") + count("workflow_parts") + count("definition") + count("tasks"), metaKeys };
  });
}

/** A search row of a made-up execution, as an execution object sends it to the index writer: COMPLETED now, no tasks. */
export function searchRow(workflowId: string, overrides: Partial<IndexRow> = {}): IndexRow {
  const now = Date.now();
  return {
    workflowId,
    workflowName: "indexed",
    workflowVersion: 1,
    status: "COMPLETED",
    correlationId: null,
    parentWorkflowId: null,
    reasonForIncompletion: null,
    priority: 0,
    createTime: now,
    startTime: now,
    endTime: now,
    updateTime: now,
    input: "{}",
    output: "{}",
    failedReferenceTaskNames: "",
    failedTaskNames: "[]",
    tasks: [],
    firstTaskRows: true,
    ...overrides,
  };
}

/**
 * A SWITCH (ref `pick`) whose one case, `never`, is never taken: a start still reads what its tasks name (children's
 * latest versions, task definitions, their schemas), but none of them runs. For counting a start's look-ups.
 */
export function neverTakenSwitch(tasks: JsonObject[]): JsonObject {
  return { name: "pick", taskReferenceName: "pick", type: "SWITCH", evaluatorType: "value-param", expression: "k", inputParameters: { k: "none" }, decisionCases: { never: tasks }, defaultCase: [] };
}

type Methods = Record<string, (...args: unknown[]) => unknown>;

/**
 * The D1 statements run in this isolate while `run` runs, each by its SQL (a batch's each): counted where they are run,
 * on the classes of the D1 binding, which the router and the objects share.
 */
export async function statementsOf(run: () => Promise<unknown>): Promise<string[]> {
  const database = Object.getPrototypeOf(env.DB) as Methods;
  const statement = Object.getPrototypeOf(env.DB.prepare("SELECT 1")) as Methods;
  const seen: string[] = [];
  const saved: Array<[Methods, string, Methods[string]]> = [];
  const note = (target: Methods, method: string, sqlOf: (self: unknown, args: unknown[]) => string[]) => {
    const original = target[method]!;
    saved.push([target, method, original]);
    target[method] = function (this: unknown, ...args: unknown[]) {
      seen.push(...sqlOf(this, args));
      return original.apply(this, args);
    };
  };
  const sql = (each: unknown) => String((each as { statement?: string }).statement);
  for (const method of ["first", "all", "run", "raw"]) note(statement, method, (self) => [sql(self)]);
  note(database, "batch", (_self, [list]) => (list as unknown[]).map(sql));
  try {
    await run();
  } finally {
    for (const [target, method, original] of saved) target[method] = original;
  }
  return seen;
}

/**
 * Runs `run` while each D1 statement prepared in this isolate (the router's and the objects', on the binding's class) is
 * what `prepareAs` makes of its SQL, given the real `prepare`: to make D1 refuse or answer one as the test needs.
 */
export async function whilePreparing<T>(prepareAs: (sql: string, prepare: (sql: string) => D1PreparedStatement) => D1PreparedStatement, run: () => Promise<T>): Promise<T> {
  const database = Object.getPrototypeOf(env.DB) as { prepare: (this: D1Database, sql: string) => D1PreparedStatement };
  const { prepare } = database;
  database.prepare = function (sql) {
    return prepareAs(sql, (text) => prepare.call(this, text));
  };
  try {
    return await run();
  } finally {
    database.prepare = prepare;
  }
}

/** A D1 statement as it was run: its SQL and what was bound to it. */
export interface BoundStatement {
  sql: string;
  bindings: unknown[];
}

/** The D1 statements whose SQL matches `sql` that `run` makes (see {@link whilePreparing}), each with its bindings. */
export async function boundStatementsOf(sql: RegExp, run: () => Promise<unknown>): Promise<BoundStatement[]> {
  const seen: BoundStatement[] = [];
  await whilePreparing((text, prepare) => {
    const statement = prepare(text);
    if (!sql.test(text)) return statement;
    const bind = statement.bind.bind(statement);
    statement.bind = (...bindings: unknown[]) => {
      seen.push({ sql: text, bindings });
      return bind(...bindings);
    };
    return statement;
  }, run);
  return seen;
}

/**
 * Checks a search's `totalHits` as `countHits` counts it, over 10,050 hits `${prefix}-00001` to `${prefix}-10050` that
 * `page(start)` lists newest (highest) first, 15 a page: 10,000 on the first page, its count reading no more than those
 * and the `others` rows of the table a walk of it may pass first; more than the page's end near 10,000, so a pager goes
 * on; exact on the last page.
 */
export async function expectCountStopsAt10000(prefix: string, others: number, page: (start: number) => Promise<{ totalHits: number; ids: unknown[] }>): Promise<void> {
  const searched = async (start: number) => {
    let found: { totalHits: number; ids: unknown[] } | undefined;
    const [count] = await boundStatementsOf(/COUNT\(\*\) AS total FROM/, async () => {
      found = await page(start);
    });
    return { ...found!, rowsRead: (await env.DB.prepare(count!.sql).bind(...count!.bindings).all()).meta.rows_read };
  };
  const id = (i: number) => `${prefix}-${String(i).padStart(5, "0")}`;
  const first = await searched(0);
  expect(first.totalHits).toBe(10_000);
  expect(first.ids).toEqual(Array.from({ length: 15 }, (_, k) => id(10_050 - k)));
  // Not every hit (10,050): at most the 10,000 counted, and the rows of others passed on the way.
  expect(first.rowsRead).toBeLessThanOrEqual(10_000 + others);
  const near = await searched(9_990);
  expect(near.totalHits).toBe(10_006);
  expect(near.ids).toHaveLength(15);
  const last = await searched(10_040);
  expect(last.totalHits).toBe(10_050);
  expect(last.ids).toEqual(Array.from({ length: 10 }, (_, k) => id(10 - k)));
}

/** SQLite's plan of `statement` in the tests' D1 (`EXPLAIN QUERY PLAN`), its steps joined by "; ". */
export async function queryPlan(statement: BoundStatement): Promise<string> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${statement.sql}`).bind(...statement.bindings).all<{ detail: string }>();
  return results.map((step) => step.detail).join("; ");
}

/** An error answer (`INTERNAL_ERROR`'s shape) and what `console.error` logged while it was sent. */
export interface LoggedFailure {
  status: number;
  answer: { error: string; requestId: string; message: string };
  /** The log line holding the answer's request id. */
  line: string | undefined;
  lines: string[];
}

/** Sends `send` with `console.error` kept (quiet) for the test to read: the answer and the log line of its request id. */
export async function loggedFailure(send: () => Promise<Response>): Promise<LoggedFailure> {
  const logError = console.error;
  const lines: string[] = [];
  console.error = (...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  };
  try {
    const response = await send();
    const answer = await response.json<LoggedFailure["answer"]>();
    return { status: response.status, answer, line: lines.find((found) => found.includes(answer.requestId)), lines };
  } finally {
    console.error = logError;
  }
}
