/**
 * The fuzzing of every route of the router table that fuzz.test.ts does not fuzz by its schema, shared by
 * fuzz-routes-1, -2 and -3 (each its own workerd: a `SELF.fetch` gets slower with every request its workerd has served,
 * cloudflare/workers-sdk#15446). As the admin, against existing things (an execution with a waiting HTTP task, a HUMAN
 * task, a WAIT and a SIMPLE task; a schedule, a webhook, a user, a group, an application, a secret, an event handler, a
 * task definition, a user form, a schema, a role, a rule, an environment variable), each route gets bodies with the keys
 * the service's schemas read and hostile values (wrong types, null, 1e400, -0, 2^53+1, 200 levels deep, 100 KB, lone
 * surrogates, NUL, RTL, `__proto__`), garbage (not JSON, another media type, nothing) and hostile query parameters.
 * No answer may be a server error, a refusal has the contract's error shape and changes no D1 table nor the execution.
 */
import { SELF, env } from "cloudflare:test";
import fc from "fast-check";
import { expect } from "vitest";
import { ROUTE_TABLE } from "../../src/worker/index";
import { ADMIN_KEY, apiOk, httpTask, register, target, waitFor, waitForIndexRow } from "./helpers";

/** The ids and names of the things the routes' path parameters are filled with. */
type Fixtures = Record<"workflow" | "taskDef" | "workflowId" | "taskId" | "humanTaskId" | "schedule" | "webhook" | "user" | "keyId" | "group" | "application" | "accessKey" | "secret" | "handler" | "event" | "form" | "schema" | "role" | "rule" | "variable" | "correlationId", string>;

/** Creates one of everything a route may name; the execution waits in four tasks at once, and its search rows are written. */
export async function createFixtures(prefix: string): Promise<Fixtures> {
  const workflow = `${prefix}_wf`;
  const taskDef = `${prefix}_simple`;
  const correlationId = `${prefix}-corr`;
  await apiOk("POST", "/api/metadata/taskdefs", [{ name: taskDef, retryCount: 0, responseTimeoutSeconds: 600, timeoutSeconds: 1200 }]);
  await register({
    name: workflow,
    tasks: [
      {
        name: "fork",
        taskReferenceName: "fork",
        type: "FORK_JOIN",
        forkTasks: [
          [httpTask("a", { uri: target("/echo/a"), method: "GET" }, { asyncComplete: true })],
          [{ name: "approve", taskReferenceName: "approve", type: "HUMAN", inputParameters: {} }],
          [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }],
          [{ name: taskDef, taskReferenceName: "simple", type: "SIMPLE", inputParameters: {} }],
        ],
      },
      { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["a", "approve", "hold", "simple"] },
    ],
  });
  const workflowId = await apiOk<string>("POST", `/api/workflow/${workflow}?correlationId=${correlationId}`, {});
  const running = await waitFor(workflowId, (execution) => ["a", "approve"].every((ref) => execution.tasks.some((task) => task.referenceTaskName === ref && task.status === "IN_PROGRESS")));
  await waitForIndexRow(workflowId, "RUNNING");
  const taskOf = (ref: string) => running.tasks.find((task) => task.referenceTaskName === ref)!.taskId;
  const schedule = `${prefix}_schedule`;
  await apiOk("POST", "/api/scheduler/schedules", { name: schedule, cronExpression: "0 0 0 1 1 ?", startWorkflowRequest: { name: workflow, input: {} } });
  const webhook = await apiOk<{ id: string }>("POST", "/api/metadata/webhook", { name: `${prefix}-hook`, verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { [workflow]: 1 } });
  const user = `${prefix}-user`;
  const key = await apiOk<{ keyId: string }>("POST", `/api/security/users/${user}/api-keys`, undefined, 201);
  const group = `${prefix}-group`;
  await apiOk("PUT", `/api/groups/${group}`, { description: "g", roles: [] });
  await apiOk("POST", `/api/groups/${group}/users/${user}`);
  const application = await apiOk<{ id: string }>("POST", "/api/applications", { name: `${prefix}-app` });
  const accessKey = await apiOk<{ id: string }>("POST", `/api/applications/${application.id}/accessKeys`);
  const secret = `${prefix}_secret`;
  await apiOk("PUT", `/api/secrets/${secret}`, "value");
  const handler = `${prefix}_handler`;
  const event = `conductor:${prefix}:queue`;
  await apiOk("POST", "/api/event", { name: handler, event, actions: [{ action: "complete_task", complete_task: { workflowId: "${workflowId}", taskRefName: "a" } }], active: true });
  const form = `${prefix}_form`;
  await apiOk("POST", "/api/human/template", { name: form, jsonSchema: { type: "object" }, templateUI: { type: "VerticalLayout", elements: [] } });
  const schema = `${prefix}_schema`;
  await apiOk("POST", "/api/schema", { name: schema, data: { type: "object" } });
  const role = `${prefix}_role`;
  await apiOk("POST", "/api/security/roles", { name: role, description: "r", permissions: [{ action: "WORKFLOW_READ", scope: "*" }] }, 201);
  const rule = await apiOk<{ id: string }>("POST", "/api/security/rules", { apiPath: `/api/workflow/${prefix}`, methods: ["GET"], requiredPermissions: [{ action: "SYSTEM_ADMIN", scope: "*" }] }, 201);
  const variable = `${prefix}_variable`;
  await apiOk("PUT", `/api/environment/${variable}`, "value");
  return { workflow, taskDef, workflowId, taskId: taskOf("a"), humanTaskId: taskOf("approve"), schedule, webhook: webhook.id, user, keyId: key.keyId, group, application: application.id, accessKey: accessKey.id, secret, handler, event, form, schema, role, rule: rule.id, variable, correlationId };
}

/** Route `pattern` with its parameters naming the fixtures (a random id where none fits). */
export function fill(pattern: string, fixtures: Fixtures): string {
  const byPrefix: Array<[string, Record<string, string>]> = [
    ["/api/scheduler/schedules/", { name: fixtures.schedule }],
    ["/api/event/handler/", { name: fixtures.handler }],
    ["/api/event/message/", { event: fixtures.event }],
    ["/api/event/execution/", { eventHandlerName: fixtures.handler }],
    ["/api/event/", { name: fixtures.handler, event: fixtures.event }],
    ["/api/secrets/", { name: fixtures.secret }],
    ["/api/environment/", { name: fixtures.variable, key: fixtures.variable }],
    ["/api/security/roles/", { name: fixtures.role }],
    ["/api/human/template/", { name: fixtures.form, humanTaskId: fixtures.form }],
    ["/api/schema/", { name: fixtures.schema }],
    ["/api/metadata/taskdefs/", { name: fixtures.taskDef }],
    ["/api/metadata/task/", { taskName: fixtures.taskDef }],
    ["/api/applications/", { id: fixtures.application, applicationId: fixtures.application, keyId: fixtures.accessKey, accessKeyId: fixtures.accessKey, role: "USER" }],
    ["/api/users/", { id: fixtures.user, userId: fixtures.user }],
    ["/api/security/users/", { userId: fixtures.user, keyId: fixtures.keyId }],
    ["/api/groups/", { id: fixtures.group, groupId: fixtures.group, userId: fixtures.user }],
    ["/api/metadata/webhook/", { id: fixtures.webhook }],
    ["/webhook/", { id: fixtures.webhook }],
    ["/api/webhook/", { id: fixtures.webhook }],
    ["/api/security/rules/", { id: fixtures.rule }],
    ["/api/human/tasks/", { taskId: fixtures.humanTaskId, userId: fixtures.user }],
    ["/api/auth/authorization/", { type: "WORKFLOW_DEF", id: fixtures.workflow }],
    ["/api/auth/subjects/", { subjectType: "USER", subjectId: fixtures.user }],
  ];
  const values: Record<string, string> = {
    workflowId: fixtures.workflowId,
    taskId: fixtures.taskId,
    taskRefName: "a",
    taskReferenceName: "hold",
    status: "COMPLETED",
    version: "1",
    correlationId: fixtures.correlationId,
    taskType: fixtures.taskDef,
    taskDefName: fixtures.taskDef,
    name: fixtures.workflow,
    ...byPrefix.find(([prefix]) => pattern.startsWith(prefix))?.[1],
  };
  return pattern.replace(/:(\w+)/g, (_match, name: string) => encodeURIComponent(values[name] ?? crypto.randomUUID()));
}

/** A 100 KB string and a value nested 200 levels deep. */
const LONG = "x".repeat(100_000);
const DEEP = Array.from({ length: 200 }).reduce<unknown>((inner, _, level) => (level % 2 === 0 ? { a: inner } : [inner]), 1);
/** Stand-ins for numbers JSON.stringify cannot write, put back into the body text by {@link bodyText}. */
const RAW_NUMBERS: Record<string, string> = { "@@negative-zero@@": "-0", "@@past-2^53@@": "9007199254740993", "@@past-double@@": "1e400", "@@below-double@@": "-1e400" };

const hostile = fc.constantFrom<unknown>(...Object.keys(RAW_NUMBERS), 1e308, -1, 1.5, 2147483648, "", " ", "\ud800", "a\u0000b", "\u202eabc", "__proto__", "constructor", "${workflow.input.x}", "*", "../..", "%zz", LONG, DEEP, [], {}, true, null, [null], "1");
const value = fc.oneof({ weight: 3, arbitrary: hostile }, { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) }, fc.string({ unit: "binary", maxLength: 20 }));

/** The keys the service's request schemas read (and a few that mean something to JavaScript objects). */
const BODY_KEYS = (
  "access action actions active apiPath assignee condition correlationId cronExpression data defaultAccess description directPermissions event " +
  "evaluatorType externalRef groups headers id idempotencyKey input inputParameters jsonSchema key log methods name outputData ownerEmail paused " +
  "permissions priority query reRunFromTaskId reasonForIncompletion receiverWorkflowNamesToVersions requiredPermissions retryCount roles " +
  "scheduleEndTime scheduleStartTime searchType size start startWorkflowRequest states status subject tags target taskId taskRefName tasks " +
  "templateUI timeoutSeconds type user userType value variables verifier version workflowDef workflowId workflowInput zoneId __proto__ constructor"
).split(" ");
/** The query parameters the routes read, but the waits of synchronous calls (a 2xx would wait them out). */
const QUERY_KEYS = (
  "access activeOnly apps consistency correlationId count domain from includeClosed includeOutput includeTasks includeVariables limit metadata name " +
  "newVersion overwrite priority reason requestId resumeSubworkflowTasks returnStrategy short size tag taskReferenceName taskType " +
  "triggerFailureWorkflow useLatestDefinitions version workerid workflowName scope userId start status query freeText sort startTime endTime " +
  "cronExpression scheduleStartTime scheduleEndTime zoneId searchType workflowId taskRefName complete iteration withTemplate overrideAssignment type id"
).split(" ");

const keyed = fc.dictionary(fc.constantFrom(...BODY_KEYS), value, { maxKeys: 5 });
const garbage = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom("{", "[1,", "\u0000", "null", '""', "[]", "-0", "1e400", '"\\ud800"'), fc.constant(JSON.stringify(DEEP)));
const queryValue = fc.oneof(fc.constantFrom("", "-1", "-0", "1e308", "9007199254740993", "abc", "%zz", "\ud800", "a\u0000b", "x".repeat(8_000), "1,2", "__proto__", "NaN", "Infinity"), fc.string({ maxLength: 8 }));
const queryOf = (minKeys: number) => fc.dictionary(fc.constantFrom(...QUERY_KEYS), queryValue, { minKeys, maxKeys: 3 });
const contentType = fc.constantFrom<string | undefined>("application/json", "application/json", "application/json", "text/plain", undefined);

/** A body's text: the stand-ins of {@link RAW_NUMBERS} written as the numbers. */
function bodyText(body: unknown): string {
  return Object.entries(RAW_NUMBERS).reduce((text, [standIn, number]) => text.replaceAll(JSON.stringify(standIn), number), JSON.stringify(body));
}

/** A valid body of a route, with one key's value replaced by a hostile one, one key left out or one added. */
function mutated(valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(valid);
  return fc.oneof(
    fc.tuple(fc.constantFrom(...keys), value).map(([key, replacement]) => ({ ...valid, [key]: replacement })),
    fc.constantFrom(...keys).map((key) => Object.fromEntries(Object.entries(valid).filter(([other]) => other !== key))),
    fc.tuple(fc.constantFrom(...BODY_KEYS), value).map(([key, added]) => ({ ...valid, [key]: added })),
  );
}

/** Valid bodies of the routes whose schemas are the richest, mutated so each of their fields is reached. */
function validBodies(fixtures: Fixtures): Record<string, Record<string, unknown>> {
  const grant = { subject: { type: "USER", id: fixtures.user }, target: { type: "WORKFLOW_DEF", id: fixtures.workflow }, access: ["READ"] };
  const handler = { name: fixtures.handler, event: fixtures.event, actions: [{ action: "start_workflow", start_workflow: { name: fixtures.workflow } }], active: true };
  const webhook = { name: "fuzzed-hook", verifier: "HEADER_BASED", headers: { "X-Token": "t" }, receiverWorkflowNamesToVersions: { [fixtures.workflow]: 1 } };
  const result = { workflowInstanceId: fixtures.workflowId, taskId: fixtures.taskId, status: "IN_PROGRESS", outputData: { a: 1 } };
  return {
    "POST /api/metadata/taskdefs": { name: "fuzzed_task", retryCount: 1 },
    "PUT /api/metadata/taskdefs": { name: fixtures.taskDef, retryCount: 1 },
    "POST /api/event": { ...handler, name: "fuzzed_handler" },
    "PUT /api/event": handler,
    "POST /api/scheduler/schedules": { name: "fuzzed_schedule", cronExpression: "0 0 0 1 1 ?", startWorkflowRequest: { name: fixtures.workflow, input: {} } },
    "POST /api/metadata/webhook": webhook,
    "PUT /api/metadata/webhook/:id": webhook,
    "POST /api/applications": { name: "fuzzed-app" },
    "PUT /api/applications/:id": { name: "fuzzed-app" },
    "PUT /api/groups/:id": { description: "g", roles: ["USER"] },
    "PUT /api/users/:id": { name: "N", roles: ["USER"], groups: [fixtures.group] },
    "POST /api/human/template": { name: "fuzzed_form", jsonSchema: { type: "object" }, templateUI: { type: "VerticalLayout" } },
    "POST /api/schema": { name: "fuzzed_schema", data: { type: "object" } },
    "PUT /api/security/roles/:name": { description: "r", permissions: [{ action: "WORKFLOW_READ", scope: "*" }] },
    "POST /api/tasks/update-v2": result,
    "POST /api/auth/authorization": grant,
    "DELETE /api/auth/authorization": grant,
    "POST /api/human/tasks/search": { searchType: "ADMIN", states: ["ASSIGNED"], size: 10 },
    "POST /api/workflow/:workflowId/upgrade": { name: fixtures.workflow, version: 1 },
    "POST /api/metadata/workflow/:name/tags": { key: "k", value: "v" },
    "POST /api/workflow/bulk/search": { query: "", start: 0, size: 5 },
  };
}

/** The routes fuzz.test.ts fuzzes by their schemas, and those answering without credentials that it fuzzes too. */
const FUZZED_ELSEWHERE = new Set([
  "POST /api/metadata/workflow", "PUT /api/metadata/workflow", "POST /api/workflow", "POST /api/workflow/:name", "POST /api/workflow/:workflowId/rerun",
  "POST /api/tasks", "POST /api/tasks/:workflowId/:taskRefName/:status", "POST /api/security/roles", "PUT /api/security/users/:userId/roles",
  "POST /api/security/rules", "POST /api/security/token", "POST /api/security/token/refresh", "PUT /api/secrets/:name",
]);

/** The parts the routes are fuzzed in, each in a file (and workerd) of its own: one took 70 s on a loaded machine. */
export const FUZZ_PARTS = 3;

/**
 * The routes fuzzed in `part`: every FUZZ_PARTS-th route but the catch-alls and those fuzzed in fuzz.test.ts. The
 * removals come last: one that succeeds removes a fixture the routes after it would name.
 */
export function routesOfPart(part: number): Array<readonly [string, string]> {
  const removes = ([method, pattern]: readonly [string, string]) => method === "DELETE" || /remove|terminate|bulk\//.test(pattern);
  const fuzzed = ROUTE_TABLE.filter(([method, pattern]) => method !== "ALL" && pattern !== "*" && !FUZZED_ELSEWHERE.has(`${method} ${pattern}`));
  return fuzzed.filter((_route, index) => index % FUZZ_PARTS === part).sort((a, b) => Number(removes(a)) - Number(removes(b)));
}

/**
 * The tables written in the background, each a projection of what executions' objects hold: the search index, the
 * human task inbox and the metric counts. Their rows of an execution an accepted request started or changed (execute,
 * a poll, a claim) may land after any wait. The fixture execution is compared as its object answers it instead (its
 * tasks, the HUMAN one's state included); the routes that start executions are fuzzed by fuzz.test.ts.
 */
const WRITTEN_IN_BACKGROUND = new Set(["executions", "task_index", "human_tasks", "metric_counts"]);

/** Every D1 table but the migrations' own and those written in the background. */
async function tableNames(): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'").all<{ name: string }>();
  return results.map((row) => row.name).filter((name) => !WRITTEN_IN_BACKGROUND.has(name));
}

/** What a refused request must leave as it was: the rows of those tables, and the fixture execution as the API answers it. */
async function storedState(tables: readonly string[], workflowId: string): Promise<string> {
  const rows = await env.DB.batch(tables.map((table) => env.DB.prepare(`SELECT * FROM "${table}" ORDER BY 1`)));
  const execution = await SELF.fetch(`https://conductor.test/api/workflow/${workflowId}?includeTasks=true`, { headers: { "x-api-key": ADMIN_KEY } });
  return `${tables.map((table, index) => `${table}:${JSON.stringify(rows[index]!.results)}`).join("\n")}\nexecution:${await execution.text()}`;
}

/**
 * The stored state once what an accepted request changed has settled (a task it scheduled, a schedule's next run):
 * two reads 200 ms apart that agree, within 5 s.
 */
async function settledState(tables: readonly string[], workflowId: string): Promise<string> {
  let last = await storedState(tables, workflowId);
  for (let attempt = 0; attempt < 25; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = await storedState(tables, workflowId);
    if (now === last) return now;
    last = now;
  }
  throw new Error("the stored state did not settle within 5 s");
}

/** The lists of everything an accepted request may have stored: each must still be readable afterwards. */
const LISTS = ["/api/metadata/workflow", "/api/metadata/taskdefs", "/api/event", "/api/scheduler/schedules", "/api/secrets", "/api/security/roles", "/api/security/rules", "/api/security/users", "/api/applications", "/api/users", "/api/groups", "/api/metadata/webhook", "/api/human/template", "/api/schema", "/api/environment", "/api/metadata/tags", "/api/workflow/search?size=1000", "/api/tasks/search?size=1000"];

/** Runs per route with a body (a GET gets one run of hostile query parameters), and the seed of every route. */
const RUNS = 3;
const SEED = 20261206;

/**
 * Fuzzes the routes of `part` as the admin: no answer is a server error (501 is a route documented as not implemented
 * here), a refusal has the contract's error shape and changes no D1 table nor the fixture execution, and what the
 * accepted ones stored can be listed afterwards. Fixtures are created once: a route that succeeds in removing one leaves those after it to answer 404, which is checked the same.
 */
export async function fuzzPart(part: number): Promise<void> {
  const fixtures = await createFixtures(`fuzz${part}`);
  const tables = await tableNames();
  const bodies = validBodies(fixtures);
  let before = await settledState(tables, fixtures.workflowId);
  for (const [method, pattern] of routesOfPart(part)) {
    const route = `${method} ${pattern}`;
    const path = fill(pattern, fixtures);
    const valid = bodies[route];
    const body = fc.oneof({ weight: 3, arbitrary: keyed.map(bodyText) }, garbage, ...(valid === undefined ? [] : [{ weight: 3, arbitrary: mutated(valid).map(bodyText) }]));
    const synchronous = /execute|\/sync$|\/state$/.test(pattern);
    await fc.assert(
      fc.asyncProperty(body, queryOf(method === "GET" ? 1 : 0), contentType, async (text, parameters, type) => {
        const search = new URLSearchParams(parameters);
        if (synchronous) search.set("waitForSeconds", "1");
        const url = `https://conductor.test${path}${search.size > 0 ? `?${search}` : ""}`;
        const headers: Record<string, string> = { "x-api-key": ADMIN_KEY, ...(type === undefined ? {} : { "content-type": type }) };
        const response = await SELF.fetch(url, { method, headers, body: method === "GET" ? null : text });
        const answer = await response.text();
        const what = `${route}: ${method} ${url.slice(0, 200)} (${type}) ${text.slice(0, 200)} → ${response.status} ${answer.slice(0, 300)}`;
        expect([500, 502, 503, 504], what).not.toContain(response.status);
        if (response.status < 400) {
          before = await settledState(tables, fixtures.workflowId);
          return;
        }
        if (response.status !== 405) expect(JSON.parse(answer), what).toMatchObject({ status: response.status, error: expect.any(String), message: expect.any(String) });
        const after = await storedState(tables, fixtures.workflowId);
        const changed = after.split("\n").filter((line) => !before.split("\n").includes(line));
        expect(changed, `${what} was refused but changed stored state`).toEqual([]);
      }),
      { numRuns: method === "GET" ? 1 : RUNS, seed: SEED, endOnFailure: true },
    );
  }
  for (const list of LISTS) {
    const response = await SELF.fetch(`https://conductor.test${list}`, { headers: { "x-api-key": ADMIN_KEY } });
    expect(response.status, `GET ${list} → ${await response.text()}`).toBe(200);
  }
}
