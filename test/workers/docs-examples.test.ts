import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import readme from "../../README.md?raw";
import apiDoc from "../../docs/api.md?raw";
import { MAX_PAYLOAD_BYTES_CEILING } from "../../src/engine/config";
import { TASK_TYPES, type JsonObject, type JsonValue } from "../../src/engine/model";
import { serviceConfig, type ServiceConfig } from "../../src/worker/config";
import { ROUTE_TABLE } from "../../src/worker/index";
import { UNSUPPORTED_CONDUCTOR_ENDPOINTS } from "../../src/worker/routes/unsupported";
import { ADMIN_KEY, api, apiOk, eventually, startWorkflow, target, waitFor, type WorkflowJson } from "./helpers";

// Users copy the examples of docs/api.md and the README: each must still be accepted, and where it needs nothing outside
// the service, run as the doc says. The docs are read as written (Vite's `?raw` import bundles them as text), so a new
// example is checked, or consciously listed below, as soon as it is written.

/** A ```json block of docs/api.md, with the heading (`##`/`###`) nearest above it. */
interface JsonBlock {
  heading: string;
  line: number;
  /** null when the block is no JSON, with `error` saying why. */
  value: JsonValue;
  error?: string;
}

/** What the docs write for an HTTP task's request they do not show. */
const ELISION = "{...}";

/**
 * Every ```json block of `markdown`. An elided HTTP request (`"inputParameters": {...}`) becomes a GET of the loopback
 * target, so the example runs; a block of tasks written as a fragment of a `tasks` list (`{...},\n{...}`) is read as
 * that list.
 */
function jsonBlocks(markdown: string): JsonBlock[] {
  const blocks: JsonBlock[] = [];
  let heading = "";
  let open: { line: number; lines: string[] } | undefined;
  markdown.split("\n").forEach((text, index) => {
    if (open) {
      if (text.startsWith("```")) {
        const source = open.lines.join("\n").replaceAll(ELISION, JSON.stringify({ uri: target("/echo/docs"), method: "GET" }));
        blocks.push({ heading, line: open.line, ...parseBlock(source) });
        open = undefined;
      } else open.lines.push(text);
    } else if (/^#{2,3} /.test(text)) heading = text.replace(/^#+ /, "");
    else if (text.startsWith("```json")) open = { line: index + 1, lines: [] };
  });
  return blocks;
}

function parseBlock(source: string): { value: JsonValue; error?: string } {
  try {
    return { value: JSON.parse(source) as JsonValue };
  } catch (error) {
    try {
      return { value: JSON.parse(`[${source}]`) as JsonValue };
    } catch {
      return { value: null, error: `not JSON: ${String(error)}` };
    }
  }
}

const isObject = (value: JsonValue | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);
const isTask = (value: JsonValue): value is JsonObject => isObject(value) && typeof value["type"] === "string" && typeof value["taskReferenceName"] === "string";

/** Every task of `tasks`, nested ones included (branches, cases, loop bodies). */
function allTasks(tasks: JsonValue[]): JsonObject[] {
  const found: JsonObject[] = [];
  const visit = (value: JsonValue): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (isObject(value)) {
      if (isTask(value)) found.push(value);
      for (const key of ["forkTasks", "decisionCases", "defaultCase", "loopOver", "conditionalBranches", "tasks"]) {
        const nested = value[key];
        if (nested === undefined) continue;
        if (isObject(nested)) Object.values(nested).forEach(visit);
        else visit(nested);
      }
    }
  };
  tasks.forEach(visit);
  return found;
}

/** Task types that need nothing outside the service (their inputs may still need a workflow input, given below). */
const SELF_CONTAINED = new Set([
  "NOOP", "INLINE", "SET_VARIABLE", "SET_CORRELATION_ID", "SWITCH", "DECISION", "WHILE", "DO_WHILE", "FORK_JOIN", "JOIN",
  "EXCLUSIVE_JOIN", "CONDITIONAL_FORK", "JSON_JQ_TRANSFORM", "WAIT", "HUMAN", "TERMINATE", "EVENT", "PULL_WORKFLOW_MESSAGES",
  "HTTP",
]);

/** Whether the example's tasks can run here: self-contained types, and HTTP only to the loopback target (an elided request). */
function runnable(tasks: JsonObject[], outcome: Outcome): boolean {
  if (outcome.runs) return true;
  return allTasks(tasks).every((task) => SELF_CONTAINED.has(String(task["type"])) && (task["type"] !== "HTTP" || JSON.stringify(task["inputParameters"]).includes(target("/"))));
}

/** An HTTP task of the loopback target answering `body`: an earlier task whose output an example reads. */
const answering = (ref: string, body: JsonObject): JsonObject => ({
  name: ref,
  taskReferenceName: ref,
  type: "HTTP",
  inputParameters: { uri: target(`/text?type=application/json&body=${JSON.stringify(body)}`), method: "GET" },
});

/** An INLINE task computing `result`: an earlier task whose output an example reads. */
const computing = (ref: string, result: JsonObject): JsonObject => ({
  name: ref,
  taskReferenceName: ref,
  type: "INLINE",
  inputParameters: { evaluatorType: "javascript", expression: "$.result", result },
});

/** How a runnable example ends: COMPLETED unless listed here (keyed by heading, then the first task's reference name). */
interface Outcome {
  /** The workflow input the example reads (`${workflow.input.…}`). */
  input?: JsonObject;
  /** The status it reaches; RUNNING means it waits, with `waitingOn` IN_PROGRESS. */
  status?: "COMPLETED" | "FAILED" | "RUNNING";
  waitingOn?: string;
  /** Tasks ahead of the example's, whose output it reads. */
  before?: JsonObject[];
  /** Run though it names an external URL: with its input it does not call it. */
  runs?: true;
  /** What the doc says of the ended workflow (matched as a subset). */
  shows?: JsonObject;
}
const OUTCOMES: Record<string, Outcome> = {
  // Waits for a message posted to the workflow.
  "Workflow messages/wait_for_message": { status: "RUNNING", waitingOn: "wait_for_message" },
  "Workflow messages/message_loop": { status: "RUNNING", waitingOn: "pull_message__1" },
  // Its script sums the order's items.
  "INLINE/price": { input: { items: [{ qty: 2, unit: 3 }, { qty: 1, unit: 4 }] }, shows: { tasks: [{ outputData: { result: 10 } }] } },
  // Its jq adds two values of an earlier response.
  "JSON_JQ_TRANSFORM/shape": {
    before: [answering("fetch", { a: { value1: 1 }, b: { value2: 2 } })],
    shows: { tasks: [{}, { outputData: { result: { key3: 3 }, resultList: [{ key3: 3 }] } }] },
  },
  // Zero items pending: the loop checks its condition first and runs no iteration (its body calls an external URL).
  "WHILE/drain": { input: { pending: 0 }, runs: true },
  // Its first branch is a HUMAN task: an amount over 100 chooses it.
  "CONDITIONAL_FORK/route": { input: { amount: 150 }, status: "RUNNING", waitingOn: "review" },
  "EXCLUSIVE_JOIN/route": { input: { kind: "card" } },
  // Its tasks and their inputs come from an earlier task: two branches that need nothing outside.
  "FORK_JOIN_DYNAMIC/fan_out": {
    before: [
      computing("prepare", {
        tasks: [{ name: "a", taskReferenceName: "a", type: "INLINE" }, { name: "b", taskReferenceName: "b", type: "INLINE" }],
        inputs: { a: { evaluatorType: "javascript", expression: "$.n * 2", n: 1 }, b: { evaluatorType: "javascript", expression: "$.n * 2", n: 2 } },
      }),
    ],
    runs: true,
    shows: { tasks: [{}, {}, {}, {}, { referenceTaskName: "fan_in", outputData: { a: { result: 2 }, b: { result: 4 } } }] },
  },
  // The correlation id must be a non-empty string: its lookup answers one.
  "SET_CORRELATION_ID/mark_order": { before: [answering("lookup", { orderId: "A-1" })], shows: { correlationId: "A-1" } },
  "SET_VARIABLE/mark_shipped": { before: [answering("ship", { id: "T-9" })], shows: { variables: { stage: "shipped", trackingId: "T-9" } } },
  // Registered only (it writes a secret): the login call it follows, whose response it reads.
  "UPDATE_SECRET/store_token": { before: [answering("login", { access_token: "t0ken" })] },
  "WAIT/cool_off": { status: "RUNNING", waitingOn: "cool_off" },
  "HUMAN/approve_refund": { input: { amount: 20 }, status: "RUNNING", waitingOn: "approve_refund" },
  // It ends the workflow as its terminationStatus says.
  "TERMINATE/out_of_stock": { input: { sku: "A-1" }, status: "FAILED", shows: { output: { sku: "A-1" }, reasonForIncompletion: "out of stock" } },
};

/** Headings whose ```json blocks are not definitions (request or answer bodies): none today; a new one is listed here. */
const NOT_DEFINITIONS = new Set<string>([]);

/**
 * How a block is checked, by its shape: tasks registered in a workflow of their own, a workflow definition as it is, a
 * task definition, event handler, schedule or webhook sent to its route; an unknown shape (or no JSON) fails the test.
 */
type Kind = { kind: "tasks"; tasks: JsonObject[] } | { kind: "workflow"; definition: JsonObject } | { kind: "other"; path: string; body?: JsonValue } | { kind: "not a definition" } | { kind: "unknown" };

function classify(block: JsonBlock): Kind {
  const value = block.value;
  if (NOT_DEFINITIONS.has(block.heading)) return { kind: "not a definition" };
  if (isTask(value)) return { kind: "tasks", tasks: [value] };
  if (Array.isArray(value) && value.length > 0 && value.every(isTask)) return { kind: "tasks", tasks: value as JsonObject[] };
  if (isObject(value) && Array.isArray(value["tasks"])) return { kind: "workflow", definition: value };
  if (isObject(value) && typeof value["name"] === "string" && ["retryCount", "timeoutSeconds", "responseTimeoutSeconds", "inputKeys"].some((key) => key in value)) {
    return { kind: "other", path: "/api/metadata/taskdefs", body: [value] };
  }
  if (isObject(value) && Array.isArray(value["actions"]) && typeof value["event"] === "string") return { kind: "other", path: "/api/event" };
  if (isObject(value) && isObject(value["startWorkflowRequest"])) return { kind: "other", path: "/api/scheduler/schedules" };
  if (isObject(value) && isObject(value["receiverWorkflowNamesToVersions"])) return { kind: "other", path: "/api/metadata/webhook" };
  return { kind: "unknown" };
}

/** The key of a block of tasks in OUTCOMES: its heading, then its first task's reference name. */
const outcomeKey = (block: JsonBlock, kind: Kind): string => (kind.kind === "tasks" ? `${block.heading}/${String(kind.tasks[0]?.["taskReferenceName"])}` : "");

const blocks = jsonBlocks(apiDoc);

describe("the JSON examples of docs/api.md", () => {
  it("are found, each of one known shape", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(24);
    const unknown = blocks.filter((block) => classify(block).kind === "unknown").map((block) => `docs/api.md:${block.line} (${block.heading})${block.error ? `: ${block.error}` : ""}`);
    expect(unknown, "JSON blocks of no known shape: check them here, or list their headings in NOT_DEFINITIONS").toEqual([]);
    // An adjustment whose example was renamed or removed would silently stop applying.
    const keys = blocks.map((block) => outcomeKey(block, classify(block)));
    expect(Object.keys(OUTCOMES).filter((key) => !keys.includes(key)), "OUTCOMES entries of no example").toEqual([]);
  });

  blocks.forEach((block, index) => {
    const kind = classify(block);
    const first = kind.kind === "tasks" ? String(kind.tasks[0]?.["taskReferenceName"]) : "";
    const outcome = OUTCOMES[outcomeKey(block, kind)] ?? {};
    const runs = kind.kind === "tasks" && runnable(kind.tasks, outcome);
    it(`${block.heading} (line ${block.line}${first ? `, ${first}` : ""}) is accepted${runs ? " and runs" : ""}`, async () => {
      const where = `docs/api.md:${block.line} (${block.heading})`;
      expect(kind.kind, `${where}: a JSON block of no known shape${block.error ? ` (${block.error})` : ""}`).not.toBe("unknown");
      if (kind.kind === "not a definition" || kind.kind === "unknown") return;
      if (kind.kind === "other") {
        const response = await api("POST", kind.path, kind.body ?? block.value);
        expect(response.status, `${where}: ${await response.text()}`).toBe(200);
        return;
      }
      const definition: JsonObject =
        kind.kind === "workflow"
          ? kind.definition
          : { name: `docs_example_${index}`, version: 1, schemaVersion: 2, tasks: [...(outcome.before ?? []), ...kind.tasks] };
      const registered = await api("POST", "/api/metadata/workflow?overwrite=true", definition);
      expect(registered.status, `${where}: ${await registered.text()}`).toBe(200);
      if (!runs) return;
      const workflowId = await startWorkflow(String(definition["name"]), outcome.input ?? {});
      const expected = outcome.status ?? "COMPLETED";
      // Bounded by waitFor: a RUNNING example until the task it waits on is IN_PROGRESS, any other until it ends.
      const reached = await waitFor(workflowId, (workflow: WorkflowJson) =>
        workflow.status !== "RUNNING" ||
        (expected === "RUNNING" && workflow.tasks.some((task) => task.referenceTaskName === outcome.waitingOn && task.status === "IN_PROGRESS")),
      );
      expect(reached.status, `${where}: ${JSON.stringify(reached).slice(0, 3000)}`).toBe(expected);
      if (outcome.shows) expect(reached, where).toMatchObject(outcome.shows);
      if (expected === "RUNNING") await apiOk("DELETE", `/api/workflow/${workflowId}?reason=done`);
    });
  });
});

/** A curl command of a shell block: where it is, its method and path (after `$API`), its single-quoted body. */
interface CurlCommand {
  where: string;
  heading: string;
  /** Its -H headers, `$KEY` replaced by the admin's key. */
  headers: Record<string, string>;
  method: string;
  path: string;
  /** The body as written between single quotes; undefined when none, or when the shell builds it ("…$(…)…"). */
  body: string | undefined;
}

/** A shell word: its text (quotes removed) and, when it starts with a single-quoted part, that part as written. */
interface Word {
  text: string;
  quoted: string | undefined;
}

/** The curl commands of the ```sh/```bash blocks of `markdown`: continuation lines joined, comments dropped. */
function curlCommands(markdown: string, file: string): CurlCommand[] {
  const commands: CurlCommand[] = [];
  let open: { line: number; text: string } | undefined;
  let heading = "";
  markdown.split("\n").forEach((text, index) => {
    if (open) {
      if (text.startsWith("```")) {
        commands.push(...curlsOf(open.text, file, open.line, heading));
        open = undefined;
      } else open.text += `${text}\n`;
    } else if (/^#{2,3} /.test(text)) heading = text.replace(/^#+ /, "");
    else if (/^```(sh|bash)\s*$/.test(text)) open = { line: index + 2, text: "" };
  });
  return commands;
}

/** Splits a block into commands (a newline outside quotes ends one), each into words, as a shell would (roughly). */
function curlsOf(source: string, file: string, firstLine: number, heading: string): CurlCommand[] {
  const found: CurlCommand[] = [];
  let words: Word[] = [];
  let word: Word | undefined;
  let line = firstLine;
  let start = firstLine;
  let quote: "'" | '"' | undefined;
  let comment = false;
  const endCommand = (): void => {
    if (word) words.push(word);
    word = undefined;
    const curl = words.findIndex((w) => /(^|\$\()curl$/.test(w.text));
    if (curl >= 0) found.push(toCurl(words.slice(curl + 1), `${file}:${start}`, heading));
    words = [];
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i] ?? "";
    if (c === "\n") line++;
    if (comment) {
      if (c === "\n") {
        comment = false;
        endCommand();
        start = line;
      }
      continue;
    }
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else if (word) {
        word.text += c;
        if (word.quoted !== undefined && word.text.length === word.quoted.length + 1) word.quoted += c;
      }
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && i + 1 < source.length) word = { text: (word?.text ?? "") + source[++i], quoted: word?.quoted };
      else word = { text: (word?.text ?? "") + c, quoted: word?.quoted };
      continue;
    }
    if (c === "\\" && source[i + 1] === "\n") {
      i++;
      line++;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      word ??= { text: "", quoted: c === "'" ? "" : undefined };
      continue;
    }
    if (c === "#" && !word) {
      comment = true;
      continue;
    }
    if (c === " " || c === "\t" || c === "\n") {
      if (word) words.push(word);
      word = undefined;
      if (c === "\n") {
        endCommand();
        start = line;
      }
      continue;
    }
    word = { text: (word?.text ?? "") + c, quoted: word?.quoted };
  }
  endCommand();
  return found;
}

function toCurl(words: Word[], where: string, heading: string): CurlCommand {
  const headers: Record<string, string> = {};
  let method: string | undefined;
  let url: string | undefined;
  let body: string | undefined;
  let data = false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as Word;
    if (w.text === "-X") method = words[++i]?.text;
    else if (w.text === "-H") {
      const [name = "", ...value] = (words[++i]?.text ?? "").split(":");
      headers[name.trim().toLowerCase()] = value.join(":").trim().replaceAll("$KEY", ADMIN_KEY);
    } else if (w.text === "--data-urlencode") i++;
    else if (w.text === "-d") {
      data = true;
      const value = words[++i];
      if (value?.quoted !== undefined) body = value.quoted;
    } else if (url === undefined && /^\$API\//.test(w.text)) url = w.text;
  }
  // The README exports $API (and $KEY), and docs/api.md says its examples use them: another name would be unset.
  if (url === undefined) throw new Error(`${where}: a curl command without a $API URL (the README's variable; not $BASE)`);
  return { where, heading, headers, method: method ?? (data ? "POST" : "GET"), path: url.replace(/^\$API/, "").replace(/\)$/, ""), body };
}

/** Routes whose curl bodies are definitions: each is sent, in the order of the docs, and must be accepted. */
const DEFINITION_ROUTES: Array<[string, RegExp]> = [
  ["POST", /^\/api\/metadata\/workflow$/],
  ["POST", /^\/api\/metadata\/webhook$/],
  ["POST", /^\/api\/security\/roles$/],
  ["PUT", /^\/api\/security\/users\/[^/$<]+\/roles$/],
  ["PUT", /^\/api\/groups\/[^/$<]+$/],
  ["POST", /^\/api\/auth\/authorization$/],
  ["POST", /^\/api\/security\/rules$/],
  ["PUT", /^\/api\/secrets\/[^/$<]+$/],
];
/** Routes whose curl bodies are requests, not definitions (they name an execution, a token...): only checked to be JSON. */
const REQUEST_ROUTES: Array<[string, RegExp]> = [
  ["POST", /^\/api\/workflow\/[^/]+$/], // a start's input
  ["POST", /^\/api\/workflow\/execute\/[^/]+$/],
  ["POST", /^\/api\/workflow\/\$WORKFLOW_ID\/messages$/],
  ["POST", /^\/webhook\/<id>$/], // a webhook's sender's event
  ["POST", /^\/api\/security\/token(\/refresh|\/revoke)?$/],
];

const curls = [...curlCommands(apiDoc, "docs/api.md"), ...curlCommands(readme, "README.md")];
const bodies = curls.filter((curl) => curl.body !== undefined);
const matches = (routes: Array<[string, RegExp]>, curl: CurlCommand): boolean => routes.some(([method, path]) => method === curl.method && path.test(curl.path));

describe("the curl bodies of docs/api.md and the README", () => {
  it("are JSON, each sent to a route listed as a definition or as a request", () => {
    expect(bodies.length).toBeGreaterThanOrEqual(14);
    for (const curl of bodies) {
      expect(() => JSON.parse(curl.body as string), `${curl.where}: ${curl.body}`).not.toThrow();
      expect(matches(DEFINITION_ROUTES, curl) !== matches(REQUEST_ROUTES, curl), `${curl.where}: ${curl.method} ${curl.path}: list its route`).toBe(true);
    }
  });

  it("that are definitions are accepted, sent in the order of the docs", async () => {
    const definitions = bodies.filter((curl) => matches(DEFINITION_ROUTES, curl) && !REPLAYED.has(curl.heading));
    expect(definitions.length).toBeGreaterThanOrEqual(8);
    for (const curl of definitions) {
      const response = await api(curl.method, curl.path, curl.body);
      expect(response.ok, `${curl.where}: ${curl.method} ${curl.path} → ${response.status}: ${await response.text()}`).toBe(true);
    }
  });
});

/** Sections of docs/api.md whose curl session needs nothing outside the service: replayed whole, as written. */
const REPLAYED = new Set(["Webhooks"]);

describe("the curl sessions of docs/api.md that need nothing outside the service", () => {
  it("Webhooks: the event the sender posts completes the waiting workflow", async () => {
    const session = curls.filter((curl) => curl.where.startsWith("docs/api.md") && curl.heading === "Webhooks");
    expect(session.map((curl) => `${curl.method} ${curl.path}`)).toEqual([
      "POST /api/metadata/workflow",
      "POST /api/metadata/webhook",
      "POST /api/workflow/order_payment",
      "POST /webhook/<id>",
    ]);
    let webhookId = "";
    let workflowId = "";
    let event: JsonObject = {};
    for (const curl of session) {
      // The task's routing row follows its start by a moment (an event sent before is looked for again 1 s later).
      if (curl.path.startsWith("/webhook/")) {
        await eventually(() => env.DB.prepare("SELECT task_id FROM webhook_waits WHERE workflow_id = ?").bind(workflowId).all(), (rows) => rows.results.length === 1, "the routing row");
      }
      const response = await SELF.fetch(`https://conductor.test${curl.path.replace("<id>", webhookId)}`, { method: curl.method, headers: curl.headers, body: curl.body ?? null });
      const text = await response.text();
      expect(response.status, `${curl.where}: ${curl.method} ${curl.path} → ${text}`).toBe(200);
      if (curl.path === "/api/metadata/webhook") webhookId = String((JSON.parse(text) as JsonObject)["id"]);
      else if (curl.path.startsWith("/api/workflow/")) workflowId = text;
      else if (curl.path.startsWith("/webhook/")) event = JSON.parse(text) as JsonObject;
    }
    expect(event["completedTasks"], JSON.stringify(event)).toEqual([{ workflowId, taskId: expect.any(String) }]);
    expect((await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"])).status).toBe("COMPLETED");
  });
});

/** The README's worked example: its section, its curl commands and what its `# →` comment says the execution shows. */
const WORKED_EXAMPLE = "A worked example with curl";
/** Where the worked example's HTTP tasks call (the service's own health, the echo server on port 9000), and where here. */
const WORKED_EXAMPLE_HOSTS: Array<[string, string]> = [
  ["http://127.0.0.1:9000", "/readme/echo"],
  ["http://127.0.0.1:8787", "/readme"],
];

/** The `"output": {…}` of the README's `# → {...}` comment in its worked example (the rest of that line is elided). */
function workedExampleOutput(): JsonObject {
  const section = readme.slice(readme.indexOf(`## ${WORKED_EXAMPLE}`));
  const shown = /^# → .*"output":(\{[^{}]*\})/m.exec(section)?.[1];
  if (shown === undefined) throw new Error(`README.md, ${WORKED_EXAMPLE}: no "# → {…"output":{…}…}" comment`);
  return JSON.parse(shown) as JsonObject;
}

/** The worked example's curl commands, in the order printed. */
function workedExampleSession(): CurlCommand[] {
  return curls.filter((curl) => curl.where.startsWith("README.md") && curl.heading === WORKED_EXAMPLE);
}

/** Registers the worked example's definition, its calls sent to the loopback target (as the service's health and the echo server). */
async function registerWorkedExample(register: CurlCommand): Promise<void> {
  const definition = WORKED_EXAMPLE_HOSTS.reduce((text, [host, path]) => text.replaceAll(host, target(path)), register.body ?? "");
  const registered = await api("POST", `${register.path}?overwrite=true`, definition, register.headers);
  expect(registered.status, `${register.where}: ${await registered.text()}`).toBe(200);
}

/** The body of the README's "More to try" row `what` (its first `{…}` in backticks). */
function moreToTryBody(what: string): { where: string; body: string } {
  const lines = readme.split("\n");
  const index = lines.findIndex((line) => line.startsWith(`| ${what} |`));
  const body = /`(\{.*?\})`/.exec(lines[index] ?? "")?.[1];
  if (body === undefined) throw new Error(`README.md: no "More to try" row "${what}" with a JSON body`);
  return { where: `README.md:${index + 1}`, body };
}

describe("the README's worked example", () => {
  it("More to try: the test run with mocked results answers the finished Workflow with the worked example's output", async () => {
    const [register] = workedExampleSession() as [CurlCommand];
    await registerWorkedExample(register);
    const { where, body } = moreToTryBody("test a definition with mocked results");
    const answer = await api("POST", "/api/workflow/test", body);
    const workflow = (await answer.json()) as WorkflowJson;
    const tasks = Object.fromEntries(workflow.tasks.map((task) => [task.referenceTaskName, task.status]));
    expect({ code: answer.status, status: workflow.status, output: workflow.output, tasks }, `${where}: ${JSON.stringify(workflow).slice(0, 3000)}`).toEqual({
      code: 200,
      status: "COMPLETED",
      output: workedExampleOutput(),
      tasks: { health: "COMPLETED", post: "COMPLETED", read: "COMPLETED" },
    });
  });

  it("More to try: find by correlation id answers [] until an execution is started with it, then it, finished ones in the batch only with includeClosed=true", async () => {
    const [register] = workedExampleSession() as [CurlCommand];
    await registerWorkedExample(register);
    const lines = readme.split("\n");
    const index = lines.findIndex((line) => line.startsWith("| find by correlation id |"));
    const row = lines[index] ?? "";
    const where = `README.md:${index + 1}`;
    const path = (method: string, prefix: string) => {
      const found = new RegExp(`\`${method} (${prefix.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}[^\`]*)\``).exec(row)?.[1];
      if (found === undefined) throw new Error(`${where}: no \`${method} ${prefix}…\``);
      return found;
    };
    const byId = path("GET", "/api/workflow/greeting/correlated/");
    const start = path("POST", "/api/workflow/greeting?correlationId=");
    const batch = path("POST", "/api/workflow/correlated/batch");
    expect(batch, `${where}: the batch as a newcomer copies it finds the finished execution`).toContain("includeClosed=true");
    const correlationId = new URL(start, "https://conductor.test").searchParams.get("correlationId")!;
    const batchBody = { workflowNames: ["greeting"], correlationIds: [correlationId] };
    expect(await apiOk("GET", byId), `${where}: before any start`).toEqual([]);

    const workflowId = await apiOk<string>("POST", start, { name: "Ada" });
    await waitFor(workflowId, ["COMPLETED"]);
    const ids = (workflows: WorkflowJson[]) => workflows.map((workflow) => workflow.workflowId);
    await eventually(() => apiOk<WorkflowJson[]>("GET", byId), (found) => ids(found).includes(workflowId), `${where}: ${byId} lists the execution`);
    expect(ids((await apiOk<Record<string, WorkflowJson[]>>("POST", batch, batchBody))[correlationId] ?? []), `${where}: ${batch}`).toEqual([workflowId]);
    const withoutClosed = batch.replace(/[?&]includeClosed=true/, "");
    expect(await apiOk("POST", withoutClosed, batchBody), `${where}: ${withoutClosed} lists running ones only`).toEqual({ [correlationId]: [] });
  });

  it("runs as printed: the execution shows the output the README gives, and execute answers it for Grace", async () => {
    const session = workedExampleSession();
    expect(session.map((curl) => `${curl.method} ${curl.path}`)).toEqual([
      "POST /api/metadata/workflow",
      "POST /api/workflow/greeting",
      "GET /api/workflow/$ID",
      "POST /api/workflow/execute/greeting",
    ]);
    const [register, start, read, execute] = session as [CurlCommand, CurlCommand, CurlCommand, CurlCommand];
    await registerWorkedExample(register);

    const started = await SELF.fetch(`https://conductor.test${start.path}`, { method: start.method, headers: start.headers, body: start.body ?? null });
    const workflowId = await started.text();
    expect(started.status, `${start.where}: ${workflowId}`).toBe(200);
    await waitFor(workflowId, ["COMPLETED", "FAILED", "TERMINATED"]);
    const shown = await SELF.fetch(`https://conductor.test${read.path.replace("$ID", workflowId)}`, { headers: read.headers });
    const workflow = (await shown.json()) as WorkflowJson;
    const expected = workedExampleOutput();
    expect({ status: workflow.status, output: workflow.output }, `${read.where}: ${JSON.stringify(workflow).slice(0, 3000)}`).toEqual({ status: "COMPLETED", output: expected });
    // The post task sent what the README's definition says: the name, and the status the health task read.
    const post = workflow.tasks.find((task) => task.referenceTaskName === "post");
    expect(post?.outputData["response"], register.where).toMatchObject({ body: { method: "POST", url: "/greet", body: { who: "Ada", status: "ok" } } });

    const answer = await SELF.fetch(`https://conductor.test${execute.path}`, { method: execute.method, headers: execute.headers, body: execute.body ?? null });
    const executed = (await answer.json()) as WorkflowJson;
    const name = String(((JSON.parse(execute.body ?? "{}") as JsonObject)["input"] as JsonObject)["name"]);
    const forName = JSON.parse(JSON.stringify(expected).replaceAll("Ada", name)) as JsonObject;
    expect({ code: answer.status, status: executed.status, output: executed.output }, `${execute.where}: ${JSON.stringify(executed).slice(0, 3000)}`).toEqual({
      code: 200,
      status: "COMPLETED",
      output: forName,
    });
  });
});

/** The README's one error shape, as printed after its worked example ("Errors always have one shape: `{…}`"). */
function readmeErrorShape(): { where: string; shape: JsonObject } {
  const lines = readme.split("\n");
  const index = lines.findIndex((line) => line.startsWith("Errors always have one shape: `"));
  const shown = /`(\{.*\})`/.exec(lines[index] ?? "")?.[1];
  if (shown === undefined) throw new Error("README.md: no \"Errors always have one shape: `{…}`\" line");
  return { where: `README.md:${index + 1}`, shape: JSON.parse(shown) as JsonObject };
}

/** The header the README's Quick start says every request but `GET /health` needs ("as the header `X-API-Key: …`"). */
function quickStartHeader(): string {
  const header = /needs it, as the header `([^`]+)`/.exec(readme)?.[1];
  if (header === undefined) throw new Error("README.md, Quick start: no \"needs it, as the header `…`\"");
  return header;
}

describe("the README's first steps", () => {
  it("Quick start: GET /health needs no key, and any other request without one is a 401 saying to send the header the README names", async () => {
    const health = await SELF.fetch("https://conductor.test/health");
    expect(health.status, await health.text()).toBe(200);
    const refused = await SELF.fetch("https://conductor.test/api/metadata/workflow");
    const body = (await refused.json()) as JsonObject;
    expect({ code: refused.status, error: body["error"] }, JSON.stringify(body)).toEqual({ code: 401, error: "UNAUTHENTICATED" });
    expect(String(body["message"])).toContain(quickStartHeader());
  });

  it("the error shape printed after the worked example is the answer to its definition without tasks[1]'s uri", async () => {
    const { where, shape } = readmeErrorShape();
    const [register] = workedExampleSession() as [CurlCommand];
    const definition = JSON.parse(register.body ?? "{}") as JsonObject;
    const path = String((shape["validationErrors"] as JsonObject[])[0]?.["path"]);
    expect(path, where).toBe("tasks[1].inputParameters.uri");
    delete (((definition["tasks"] as JsonObject[])[1] as JsonObject)["inputParameters"] as JsonObject)["uri"];
    const answer = await api(register.method, register.path, definition, register.headers);
    const body = (await answer.json()) as JsonObject;
    const errors = body["validationErrors"] as JsonObject[];
    expect(
      { code: answer.status, keys: Object.keys(body).sort(), status: body["status"], error: body["error"], retryable: body["retryable"], paths: errors.map((e) => e["path"]) },
      `${where}: ${JSON.stringify(body)}`,
    ).toEqual({ code: shape["status"], keys: Object.keys(shape).sort(), status: shape["status"], error: shape["error"], retryable: shape["retryable"], paths: [path] });
    expect(Object.keys(errors[0] ?? {}).sort(), where).toEqual(Object.keys((shape["validationErrors"] as JsonObject[])[0] ?? {}).sort());
  });
});

/** The README's access-control walk-through: Alice's key, then the role that lets her read and manage billing_* executions. */
const ACCESS_CONTROL = "Authentication and access control";

/** The README's curl of `ACCESS_CONTROL` sending `method path`, in the order printed (the `index`th of them). */
function accessControlCurl(method: string, path: string, index = 0): CurlCommand {
  const found = curls.filter((curl) => curl.where.startsWith("README.md") && curl.heading === ACCESS_CONTROL && curl.method === method && curl.path.startsWith(path));
  const curl = found[index];
  if (curl === undefined) throw new Error(`README.md, ${ACCESS_CONTROL}: no curl ${method} ${path} (#${index + 1})`);
  return curl;
}

describe("the README's access control", () => {
  it("runs as printed: Alice's new key is refused (403 PERMISSION_DENIED), and once given the role her permissions at workflow:billing_daily are the role's and her direct one", async () => {
    // The definitions test above sent the README's role and its assignment already; a fresh clone has neither.
    const reset = await api("PUT", "/api/security/users/alice@example.com/roles", { roles: [], directPermissions: [] });
    expect(reset.status, await reset.text()).toBe(200);
    const dropped = await api("DELETE", "/api/security/roles/billing-operators");
    expect([200, 204, 404], await dropped.text()).toContain(dropped.status);
    const makeKey = accessControlCurl("POST", "/api/security/users/alice@example.com/api-keys");
    const made = await SELF.fetch(`https://conductor.test${makeKey.path}`, { method: makeKey.method, headers: makeKey.headers });
    const key = (await made.json()) as JsonObject;
    expect(made.ok, `${makeKey.where}: ${made.status} ${JSON.stringify(key)}`).toBe(true);
    const aliceKey = `${String(key["keyId"])}:${String(key["keySecret"])}`;

    // "→ 403 PERMISSION_DENIED for now: a new user holds no permission until given roles (below)."
    const list = curls.find((curl) => curl.heading === ACCESS_CONTROL && curl.headers["x-api-key"] === "$ALICE_KEY");
    if (list === undefined) throw new Error(`README.md, ${ACCESS_CONTROL}: no curl sent with X-API-Key: $ALICE_KEY`);
    expect(readme).toContain("→ 403 PERMISSION_DENIED for now");
    const refused = await SELF.fetch(`https://conductor.test${list.path}`, { method: list.method, headers: { ...list.headers, "x-api-key": aliceKey } });
    expect({ code: refused.status, error: ((await refused.json()) as JsonObject)["error"] }, list.where).toEqual({ code: 403, error: "PERMISSION_DENIED" });

    for (const curl of [accessControlCurl("POST", "/api/security/roles"), accessControlCurl("PUT", "/api/security/users/alice@example.com/roles")]) {
      const response = await SELF.fetch(`https://conductor.test${curl.path}`, { method: curl.method, headers: curl.headers, body: curl.body ?? null });
      expect(response.ok, `${curl.where}: ${response.status} ${await response.text()}`).toBe(true);
    }
    const issued = await api("POST", "/api/security/token", { keyId: key["keyId"], keySecret: key["keySecret"] }, { "x-api-key": "" });
    const token = String(((await issued.json()) as JsonObject)["token"]);
    const ask = accessControlCurl("GET", "/api/security/permissions");
    expect(ask.headers["x-authorization"], ask.where).toBe("$ALICE_TOKEN");
    const answer = await SELF.fetch(`https://conductor.test${ask.path}`, { headers: { "x-authorization": token } });
    const permissions = (await answer.json()) as JsonObject;
    expect({ code: answer.status, permissions: [...(permissions["permissions"] as string[])].sort() }, `${ask.where}: ${JSON.stringify(permissions)}`).toEqual({
      code: 200,
      permissions: ["TASK_EXECUTE", "WORKFLOW_ADMIN", "WORKFLOW_READ"],
    });
  });
});

/** Where each count or size var of the README's Configuration table lands in the configuration the service reads. */
const CONFIGURED: Record<string, (config: ServiceConfig) => number> = {
  MAX_REQUEST_BYTES: (config) => config.maxRequestBytes,
  HTTP_CONNECT_TIMEOUT_MS: (config) => config.engine.httpConnectTimeoutMs,
  HTTP_READ_TIMEOUT_MS: (config) => config.engine.httpReadTimeoutMs,
  HTTP_MAX_TIMEOUT_MS: (config) => config.engine.httpMaxTimeoutMs,
  HTTP_MAX_RESPONSE_BYTES: (config) => config.httpMaxResponseBytes,
  HTTP_REQUESTS_PER_INVOCATION: (config) => config.httpRequestsPerInvocation,
  CHILD_STARTS_PER_INVOCATION: (config) => config.childStartsPerInvocation,
  WEBHOOK_CALLS_PER_DELIVERY: (config) => config.webhookCallsPerDelivery,
  MAX_PAYLOAD_BYTES: (config) => config.engine.maxPayloadBytes,
  MAX_EXECUTION_BYTES: (config) => config.engine.maxExecutionBytes,
  EXECUTE_DEFAULT_WAIT_SECONDS: (config) => config.executeDefaultWaitSeconds,
  EXECUTE_MAX_WAIT_SECONDS: (config) => config.executeMaxWaitSeconds,
  MAX_SUBWORKFLOW_DEPTH: (config) => config.maxSubWorkflowDepth,
  ACCESS_TOKEN_TTL_SECONDS: (config) => config.accessTokenTtlSeconds,
  REFRESH_TOKEN_TTL_SECONDS: (config) => config.refreshTokenTtlSeconds,
  REFRESH_TOKEN_REUSE_GRACE_SECONDS: (config) => config.refreshReuseGraceSeconds,
  AUTH_FAILURES_PER_KEY: (config) => config.credentialLimits.perKeyAndAddress.limit,
  AUTH_FAILURES_PER_ADDRESS: (config) => config.credentialLimits.perAddress.limit,
  AUTH_FAILURE_WINDOW_SECONDS: (config) => config.credentialLimits.perAddress.windowMs / 1000,
  CALLBACKS_PER_TASK: (config) => config.callbackLimit.limit,
  CALLBACK_WINDOW_SECONDS: (config) => config.callbackLimit.windowMs / 1000,
  INDEX_WRITER_SHARDS: (config) => config.indexWriterShards,
};

/** The README's Configuration table: each row's names (backticked), default column and meaning, with where it is. */
function configurationRows(): Array<{ where: string; names: string[]; defaults: string; meaning: string }> {
  const lines = readme.split("\n");
  const start = lines.indexOf("## Configuration");
  const rows: Array<{ where: string; names: string[]; defaults: string; meaning: string }> = [];
  for (let index = start + 1; index < lines.length && !lines[index]!.startsWith("## "); index++) {
    const cells = lines[index]!.split(" | ");
    if (!lines[index]!.startsWith("| `") || cells.length < 3) continue;
    const names = [...cells[0]!.matchAll(/`([A-Z][A-Z_]+)`/g)].map((match) => match[1]!);
    rows.push({ where: `README.md:${index + 1}`, names, defaults: cells[1]!, meaning: cells.slice(2).join(" | ") });
  }
  return rows;
}

describe("the README's Configuration table", () => {
  it("gives each count and size var the default the service reads when it is unset, and MAX_PAYLOAD_BYTES its ceiling", () => {
    const unset = serviceConfig({} as Env);
    const rows = configurationRows();
    const listed = rows.flatMap((row) => row.names.filter((name) => name in CONFIGURED).map((name, position) => ({ row, name, position })));
    expect(listed.map(({ name }) => name).sort(), "every count or size var has a row").toEqual(Object.keys(CONFIGURED).sort());
    for (const { row, name, position } of listed) {
      // A row of several vars gives their defaults in the same order ("`10`, `100`, `300`").
      const written = [...row.defaults.matchAll(/`([0-9]+)`/g)].map((match) => Number(match[1]));
      expect(written[position], `${row.where}: ${name}'s default`).toBe(CONFIGURED[name]!(unset));
    }
    const payload = rows.find((row) => row.names.includes("MAX_PAYLOAD_BYTES"))!;
    expect(Number(/At most `([0-9]+)`/.exec(payload.meaning)?.[1]), `${payload.where}: the ceiling`).toBe(MAX_PAYLOAD_BYTES_CEILING);
  });
});

describe("the README's Not supported yet", () => {
  it("lists as served exactly the task types a definition may use", () => {
    const index = readme.split("\n").findIndex((line) => line.startsWith("- Task types other than "));
    const sentence = /^- Task types other than (.*?) \(/s.exec(readme.split("\n").slice(index, index + 4).join(" "))?.[1];
    if (sentence === undefined) throw new Error("README.md: no \"- Task types other than `…` (\" line");
    const named = [...sentence.matchAll(/`([A-Z_]+)`/g)].map((match) => match[1]!);
    expect(named.sort(), `README.md:${index + 1}`).toEqual([...TASK_TYPES].sort());
  });
});

const HTTP_METHOD = "GET|POST|PUT|DELETE|PATCH|HEAD";

/** A route pattern of the router (`/api/workflow/:workflowId`, `/api/tasks/queue/*`) as a regular expression over paths. */
const routePattern = (path: string) =>
  new RegExp(`^${path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[A-Za-z]+/g, "/[^/]+").replace(/\*/g, ".*")}/?$`);

/** A path as docs/api.md writes it, made concrete: each `[/…]` part with and without it, each placeholder one segment's text. */
function concretePaths(written: string): string[] {
  const optional = /\[(\/[^\]]*)\]/.exec(written);
  if (optional) return [...concretePaths(written.replace(optional[0], optional[1]!)), ...concretePaths(written.replace(optional[0], ""))];
  return [written.replace(/\{[^}]+\}|<[^>]+>|\$[A-Z_]+/g, "x")];
}

/**
 * Every request docs/api.md names as `METHOD /path` (`GET|PUT|DELETE /path` too), with the bare methods written before
 * one (`PUT` or `GET /path`; `PUT`, `GET`, `DELETE /path`) and `METHOD …` for the path before it on the line
 * (`POST /path`, `DELETE …`). A path may start with `…` (`DELETE …/api-keys/{keyId}`): the end of a route's.
 */
function documentedRequests(): Array<{ where: string; method: string; path: string }> {
  const requests: Array<{ where: string; method: string; path: string }> = [];
  const token = new RegExp(`\`((?:${HTTP_METHOD})(?:\\|(?:${HTTP_METHOD}))*)(?: (…?\\/[^\`\\s?]*|…))?`, "g");
  apiDoc.split("\n").forEach((line, index) => {
    const tokens = [...line.matchAll(token)].map((match) => ({ start: match.index, end: match.index + match[0].length, methods: match[1]!.split("|"), path: match[2] }));
    let previous: string | undefined;
    tokens.forEach((found, position) => {
      const written = (at: number) => tokens[at]!.path?.replace(/\[$|…$/, "");
      let path = found.path === "…" ? previous : written(position);
      if (found.path === undefined) {
        // A bare method belongs to the path it is listed with: `PUT` or `GET /path`, `PUT`, `GET`, `DELETE /path`.
        let next = position + 1;
        while (tokens[next] !== undefined && tokens[next]!.path === undefined && /^`?,? (or )?$/.test(line.slice(tokens[next - 1]!.end, tokens[next]!.start))) next++;
        const listed = tokens[next] !== undefined && /^`?,? (or )?$/.test(line.slice(tokens[next - 1]!.end, tokens[next]!.start));
        path = listed ? written(next) : undefined;
      } else if (found.path !== "…") previous = path;
      if (path === undefined || !/^(…|\/api\/|\/webhook\/|\/health)/.test(path)) return;
      for (const method of found.methods) requests.push({ where: `docs/api.md:${index + 1}`, method, path });
    });
  });
  return requests;
}

/** Routes docs/api.md names in prose only, not as `METHOD /path`: each with where it is written. */
const ROUTES_IN_PROSE: Record<string, string> = {
  "GET /webhook/:id": "`GET` on either path (its `handlePing`)",
  "GET /api/webhook/:id": "`GET` on either path (its `handlePing`)",
  "POST /api/webhook/:id": "`POST /webhook/{id}` (or `/api/webhook/{id}`, …)",
  "DELETE /api/human/template/:name/:version": "`DELETE /api/human/template/{name}` / `…/{name}/{version}`",
  "PUT /api/metadata/webhook/:id/tags": "Tags: `GET /api/metadata/webhook/{id}/tags`, `PUT` (adds those given…), `DELETE`",
  "DELETE /api/metadata/webhook/:id/tags": "Tags: `GET /api/metadata/webhook/{id}/tags`, `PUT` (adds those given…), `DELETE`",
};

describe("the routes of docs/api.md", () => {
  it("name only requests the service routes, and every route it serves is named", () => {
    // Conductor's endpoints answered 501 are listed where docs/api.md says what is not served, by path alone.
    const unsupported = new Set(UNSUPPORTED_CONDUCTOR_ENDPOINTS.map(([path, , method]) => `${method ?? "ALL"} ${path}`));
    const served = ROUTE_TABLE.filter(([method]) => method !== "ALL").map(([method, path]) => ({ route: `${method} ${path}`, method, pattern: routePattern(path) }));
    const everyMethod = ROUTE_TABLE.filter(([method]) => method === "ALL").map(([, path]) => routePattern(path));
    const named = new Set<string>();
    const unrouted: string[] = [];
    for (const request of documentedRequests()) {
      for (const path of concretePaths(request.path)) {
        const elided = path.startsWith("…");
        const matches = served.filter(({ method, pattern, route }) => {
          if (method !== request.method && !(request.method === "HEAD" && method === "GET")) return false;
          // `…/api-keys/{keyId}`: any route ending so.
          return elided ? new RegExp(`${routePattern(path.slice(1)).source.slice(1)}`).test(route.replace(/:[A-Za-z]+/g, "x")) : pattern.test(path);
        });
        for (const { route } of matches) named.add(route);
        if (matches.length === 0 && !everyMethod.some((pattern) => pattern.test(path))) unrouted.push(`${request.where}: ${request.method} ${request.path}`);
      }
    }
    // The 405 section's examples: paths served, asked with a method none of their routes takes.
    expect([...new Set(unrouted.map((request) => request.replace(/^[^ ]+ /, "")))].sort(), unrouted.join("\n")).toEqual(
      ["DELETE /api/metadata/taskdefs", "HEAD /api/security/token", "POST /api/workflow/{id}/skiptask/{ref}", "PUT /api/tasks/{taskId}"].sort(),
    );
    for (const route of Object.keys(ROUTES_IN_PROSE)) named.add(route);
    expect(served.map(({ route }) => route).filter((route) => !named.has(route) && !unsupported.has(route)), "routes docs/api.md does not name as `METHOD /path`").toEqual([]);
  });
});
