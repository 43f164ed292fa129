/// <reference types="node" />
/**
 * The web UI in headless Chromium against the real `wrangler dev`, as a user clicks through it: log in with an
 * API key, run a workflow whose asyncComplete HTTP task waits, complete that task by hand, follow a SIMPLE task
 * from waiting for a worker to polled and complete it by hand, see a SWITCH's branches on a definition and an
 * execution (the branch taken marked, its tasks selectable with their actions), a FORK_JOIN's branches side by side
 * and what its JOIN still waits for, read a task's logs, rerun from a task,
 * act on several executions of the list at once, register a definition with a mistake and see the error at its
 * line, create, pause, resume and delete a schedule, manage roles, users, applications and their keys, and see that a
 * read-only user is not offered what it may not do, that markup in names and inputs shows as text, and that a
 * confirmation does not outlive its page. Every page must keep a clean console.
 *
 * `SCREENSHOT_DIR=docs/screenshots npx vitest run --project e2e test/e2e/ui.test.ts` also saves the screenshots
 * the README links to.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_TASK_REASON_LENGTH } from "../../src/engine/limits";
import { launchBrowser, openPage, type WatchedPage } from "./browser";
import {
  applyMigrations,
  call,
  callOk,
  copyProject,
  generateAdminKey,
  removeDir,
  startDevServer,
  startTarget,
  tempDir,
  waitForStatus,
  type DevServer,
  type Target,
} from "./dev-server";

const SCREENSHOT_DIR = process.env["SCREENSHOT_DIR"];
const STEP_TIMEOUT_MS = 30_000;

let project: string;
let persistTo: string;
let target: Target;
let server: DevServer;
let browser: Browser;
let adminKey: string;
let admin: WatchedPage;
const parentName = `ui_approval_${Date.now().toString(36)}`;
const childName = `${parentName}_child`;
/** The execution the UI started, shared by the tests that follow it. */
let workflowId = "";
/** A top-level execution whose SUB_WORKFLOW task's child waits for a webhook, and that child. */
const heldParentName = `${parentName}_held_parent`;
const heldChildName = `${parentName}_held_child`;
let hookParentId = "";
let hookChildId = "";

/** Saves a screenshot when SCREENSHOT_DIR is set. */
async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOT_DIR) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** Logs in through the form, by keyboard (type, then Enter). */
async function logIn(page: Page, credential: string): Promise<void> {
  await page.goto(`${server.url}/`);
  await page.getByLabel("API key or token").fill(credential);
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Executions" }).waitFor({ timeout: STEP_TIMEOUT_MS });
}

/**
 * A new page logged in as `userId`, who holds `directPermissions` only (no role), with a key made for it. With
 * `landingRefusals`, waits until the Executions page where a login lands has been refused that many loads (a user
 * who may read no workflow is refused its search and its list of definitions).
 */
async function logInAsNew(userId: string, directPermissions: Array<{ action: string; scope: string }>, landingRefusals = 0): Promise<WatchedPage> {
  await callOk(server.url, "PUT", `/api/security/users/${userId}/roles`, { key: adminKey, body: { roles: [], directPermissions } });
  const key = (await callOk(server.url, "POST", `/api/security/users/${userId}/api-keys`, { key: adminKey }, 201)).json();
  const opened = await openPage(browser);
  await logIn(opened.page, `${key.keyId}:${key.keySecret}`);
  if (landingRefusals > 0) await expect.poll(() => opened.refusedLoads.length, { timeout: STEP_TIMEOUT_MS }).toBe(landingRefusals);
  return opened;
}

/** The status badge of the execution page's heading. */
function workflowStatus(page: Page) {
  return page.locator("h1 .badge");
}

/** The diagram step of a task reference. */
function step(page: Page, ref: string) {
  return page.locator(`.diagram-panel > .diagram > .node > .node-body[data-ref="${ref}"]`);
}

/**
 * The requests among `requests` (a WatchedPage's apiRequests) for a listing of workflow or task definitions: the
 * unpaginated ones (every definition, unless narrowed; every task definition) and their lighter forms.
 */
function definitionListings(requests: readonly string[]): string[] {
  return requests.filter((request) => /^GET \/api\/metadata\/(workflow|taskdefs)(\/names|\/list|\/names-and-versions|\/latest-versions)?(\?|$)/.test(request));
}

/** Answers the page's requests `matching` with the 413 of a listing over what one answers, in the service's shape. */
async function answerTooLarge(page: Page, matching: (url: URL) => boolean, message: string): Promise<void> {
  await page.route(matching, (route) => route.fulfill({ status: 413, contentType: "application/json", body: JSON.stringify({ status: 413, error: "PAYLOAD_TOO_LARGE", message }) }));
}

beforeAll(async () => {
  project = copyProject();
  persistTo = tempDir("ui-state");
  target = await startTarget();
  adminKey = generateAdminKey();
  await applyMigrations(project, persistTo);
  // With a secrets key, as `npm start` gives the service one (webhooks keep their secrets encrypted with it).
  server = await startDevServer({ root: project, persistTo, adminKey, vars: { SECRETS_ENCRYPTION_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64") } });
  browser = await launchBrowser();
  const key = target.url("/count");
  await callOk(server.url, "POST", "/api/metadata/workflow", {
    key: adminKey,
    body: {
      name: childName, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
      tasks: [{ name: "child_call", taskReferenceName: "child_call", type: "HTTP", inputParameters: { http_request: { uri: `${key}/${childName}`, method: "GET" } } }],
    },
  });
  await callOk(server.url, "POST", "/api/metadata/workflow", {
    key: adminKey,
    body: {
      name: parentName, description: "An order that waits for a person's approval", version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
      inputParameters: ["orderId"],
      variables: { region: "eu" },
      tasks: [
        { name: "notify", taskReferenceName: "notify", type: "HTTP", inputParameters: { http_request: { uri: `${key}/${parentName}-notify?order=\${workflow.input.orderId}`, method: "GET" } } },
        { name: "approve", taskReferenceName: "approve", type: "HTTP", asyncComplete: true, inputParameters: { http_request: { uri: `${key}/${parentName}-approve`, method: "POST", body: { orderId: "${workflow.input.orderId}" } } } },
        { name: "fulfil", taskReferenceName: "fulfil", type: "SUB_WORKFLOW", subWorkflowParam: { name: childName } },
      ],
      outputParameters: { approvedBy: "${approve.output.approvedBy}" },
    },
  });
  admin = await openPage(browser);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await target?.close();
  removeDir(project);
  removeDir(persistTo);
});

describe("web UI", () => {
  it("serves the page with its security headers and refuses a wrong key without storing anything", async () => {
    const page = await call(server.url, "GET", "/");
    expect(page.status).toBe(200);
    expect(page.contentType).toContain("text/html");
    const headers = await fetch(`${server.url}/app.js`).then((response) => response.headers);
    expect(headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(headers.get("x-content-type-options")).toBe("nosniff");

    const { page: tab, problems, refusedLoads } = await openPage(browser);
    await tab.goto(`${server.url}/`);
    await tab.getByLabel("API key or token").waitFor({ timeout: STEP_TIMEOUT_MS });
    // Logged out, the navigation (hidden) is not shown: nothing there to open yet.
    expect(await tab.locator("#nav").isVisible()).toBe(false);
    await tab.getByLabel("API key or token").fill(`${adminKey.split(":")[0]}:wrong-secret`);
    await tab.getByRole("button", { name: "Log in" }).click();
    await expect.poll(() => tab.getByRole("alert").textContent(), { timeout: STEP_TIMEOUT_MS }).toMatch(/invalid|unknown|wrong/i);
    expect(await tab.evaluate("sessionStorage.length")).toBe(0);
    expect(problems).toEqual([]);
    expect(refusedLoads).toEqual([expect.stringContaining("status of 401")]);
    await tab.context().close();
  });

  it("shows markup in a definition's name, description and an execution's input as text, and the page takes no HTML strings (Trusted Types)", async () => {
    // Each would run its handler if the page put it in as HTML.
    const markup = (where: string) => `<img src=x onerror="window.injected='${where}'">`;
    const name = `${parentName}_${markup("name")}`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name, description: markup("description"), version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: "note", taskReferenceName: "note", type: "SET_VARIABLE", inputParameters: { note: "${workflow.input.note}" } }] },
    });
    const id = (await callOk(server.url, "POST", `/api/workflow/${encodeURIComponent(name)}`, { key: adminKey, body: { note: markup("input") } })).text.trim();
    await waitForStatus(server.url, adminKey, id, ["COMPLETED"]);

    const { page, problems } = await openPage(browser);
    await logIn(page, adminKey);
    await page.goto(`${server.url}/#/definitions/${encodeURIComponent(name)}/1`);
    await page.getByText(markup("description")).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.goto(`${server.url}/#/executions/${id}`);
    await page.getByRole("heading", { name }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByLabel("Workflow input", { exact: true }).textContent()).toContain(JSON.stringify(markup("input")));
    expect(await page.locator("#view img").count()).toBe(0);
    expect(await page.evaluate("window.injected")).toBeUndefined();

    // The page's policy (the HTML's own answer, not only its scripts') makes a markup sink refuse a string outright:
    // a view that one day wrote API data as HTML would fail loudly instead of running what the data holds.
    const headers = (await fetch(`${server.url}/`)).headers;
    expect(headers.get("content-security-policy")).toContain("require-trusted-types-for 'script'");
    expect(headers.get("x-frame-options")).toBe("DENY");
    expect(headers.get("referrer-policy")).toBe("no-referrer");
    const assigned = await page.evaluate(`(() => {
      try {
        document.createElement("div").innerHTML = ${JSON.stringify(markup("sink"))};
        return "assigned";
      } catch (error) {
        return error.name;
      }
    })()`);
    expect(assigned).toBe("TypeError");
    expect(problems).toEqual([expect.stringContaining("requires 'TrustedHTML' assignment")]);
    await page.context().close();
    await callOk(server.url, "DELETE", `/api/workflow/${id}/remove`, { key: adminKey });
  });

  it("cancels a confirmation left open when the page changes (Back), so it cannot act on the page left while another shows", async () => {
    const create = async (name: string) => (await callOk(server.url, "POST", "/api/applications", { key: adminKey, body: { name } })).json() as Promise<{ id: string }>;
    const [kept, left] = [await create(`${parentName}-kept`), await create(`${parentName}-left`)];
    const { page, problems } = await openPage(browser);
    await logIn(page, adminKey);
    const nameFact = page.locator(".facts .fact").first();
    await page.goto(`${server.url}/#/access/applications/${kept.id}`);
    await expect.poll(() => nameFact.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe(`Name ${parentName}-kept`);
    await page.goto(`${server.url}/#/access/applications/${left.id}`);
    await expect.poll(() => nameFact.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe(`Name ${parentName}-left`);
    // Its question names no application: over the page Back shows, it would read as the deletion of that one.
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("dialog", { name: "Delete this application?" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.goBack();
    await expect.poll(() => nameFact.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe(`Name ${parentName}-kept`);
    expect(await page.locator("dialog").count()).toBe(0);
    // Nothing was deleted, and the page shown is usable (no modal left making it inert).
    await callOk(server.url, "GET", `/api/applications/${left.id}`, { key: adminKey });
    await callOk(server.url, "GET", `/api/applications/${kept.id}`, { key: adminKey });
    await page.getByRole("link", { name: "Users", exact: true }).click({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("heading", { name: "Users" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(problems).toEqual([]);
    await page.context().close();
    for (const { id } of [kept, left]) await callOk(server.url, "DELETE", `/api/applications/${id}`, { key: adminKey });
  });

  it("runs a workflow, shows its waiting task IN_PROGRESS, completes it by hand and ends COMPLETED", async () => {
    const { page } = admin;
    await logIn(page, adminKey);
    // At 1280 px the header is one band: the user and "Log out" sit beside the navigation, not on a row of their own.
    // Measured once both show: they do when the user's identity is read, which may come after the page's heading.
    await page.getByRole("button", { name: "Log out" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    const [navBox, userBox] = [await page.locator("#nav").boundingBox(), await page.locator("#user").boundingBox()];
    expect(userBox!.y).toBeLessThan(navBox!.y + navBox!.height);
    expect(userBox!.x).toBeGreaterThanOrEqual(navBox!.x + navBox!.width);
    await screenshot(page, "executions-empty");
    expect(await page.evaluate('Object.values(sessionStorage).some((value) => value.includes(":"))')).toBe(false);

    await page.getByRole("link", { name: "Definitions", exact: true }).click();
    await page.getByRole("link", { name: parentName, exact: true }).click();
    await page.getByRole("button", { name: "Run…" }).click();
    await page.getByLabel("Input (JSON object)").fill(JSON.stringify({ orderId: "A-17" }));
    await page.getByLabel("Correlation id (optional)").fill("order-A-17");
    // The service refuses a longer correlation id; the box stops there and says so.
    expect(await page.getByLabel("Correlation id (optional)").getAttribute("maxlength")).toBe("512");
    expect(await page.locator("#run-correlation-hint").textContent()).toBe("At most 512 characters. 10 / 512");
    await page.getByRole("dialog").getByRole("button", { name: "Start", exact: true }).click();

    await expect.poll(() => step(page, "approve").getAttribute("data-status"), { timeout: STEP_TIMEOUT_MS }).toBe("IN_PROGRESS");
    expect(await step(page, "notify").getAttribute("data-status")).toBe("COMPLETED");
    expect(await step(page, "fulfil").getAttribute("data-status")).toBe("NOT_STARTED");
    workflowId = page.url().split("#/executions/")[1]?.split("?")[0] ?? "";
    expect(workflowId).toMatch(/^[0-9a-f-]{36}$/);

    // Choose the waiting step by keyboard.
    await step(page, "approve").focus();
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Complete…" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await screenshot(page, "execution-waiting");
    await page.getByRole("button", { name: "Complete…" }).click();
    const output = page.getByLabel("Output (JSON object, merged into the task's output)");
    await output.fill("{ not json");
    await page.getByRole("button", { name: "Complete task" }).click();
    await expect.poll(() => page.locator("dialog .editor-errors").textContent()).toMatch(/Line 1: Not valid JSON/);
    await output.fill(JSON.stringify({ approvedBy: "dana" }));
    await page.getByRole("button", { name: "Complete task" }).click();

    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    expect(await step(page, "fulfil").getAttribute("data-status")).toBe("COMPLETED");
    const finished = await waitForStatus(server.url, adminKey, workflowId, ["COMPLETED"]);
    expect(finished.output).toEqual({ approvedBy: "dana" });
    expect(finished.correlationId).toBe("order-A-17");
    expect(await target.hits(`${parentName}-approve`)).toBe(1);

    // The child's steps show nested inside the SUB_WORKFLOW step.
    await step(page, "fulfil").locator("xpath=..").getByText("show child steps").click();
    await expect.poll(() => page.locator(`.nested .node-body[data-ref="child_call"]`).getAttribute("data-status"), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    await screenshot(page, "execution-completed");
    // Its variables (from the definition) show beside its input and output.
    expect(await page.getByLabel("Workflow variables", { exact: true }).textContent()).toBe(JSON.stringify({ region: "eu" }, null, 2));

    // The list finds it by correlation id.
    await page.getByRole("link", { name: "Executions" }).click();
    await page.getByLabel("Correlation id").fill("order-A-17");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.locator(`tr[data-workflow-id="${workflowId}"] .badge`).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    // The child inherits the correlation id, as in Conductor; nothing else matches. Polled: the unfiltered
    // page may still be on screen (it shows the parent too) until the search's page replaces it.
    // The column is found by its heading: a user who may act has a checkbox column first.
    const listedRows = () => page.locator("tbody tr").evaluateAll((found) => found.map((row) => {
      const column = [...(row.closest("table")?.querySelectorAll("thead th") ?? [])].findIndex((heading) => heading.textContent === "Correlation id");
      return [row.getAttribute("data-workflow-id"), row.children[column]?.textContent];
    }));
    // Polled whole: the page shown before the search's may also hold two rows, and is replaced (emptied, then drawn)
    // once the search answers.
    const onlyThisOrder = (rows: Array<Array<string | null | undefined>>) => rows.length === 2 && rows.every(([, correlationId]) => correlationId === "order-A-17");
    await expect.poll(async () => onlyThisOrder(await listedRows()), { timeout: STEP_TIMEOUT_MS }).toBe(true);
    await screenshot(page, "executions");
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("reruns a finished workflow from a chosen task", async () => {
    const { page } = admin;
    await page.locator(`tr[data-workflow-id="${workflowId}"] a`).click();
    await step(page, "approve").click();
    await page.getByRole("button", { name: "Rerun from here" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Rerun" }).click();
    await expect.poll(() => step(page, "approve").getAttribute("data-status"), { timeout: STEP_TIMEOUT_MS }).toBe("IN_PROGRESS");
    expect(await workflowStatus(page).textContent()).toBe("RUNNING");
    // Tasks before the rerun point keep their results: notify ran once, approve twice.
    expect(await target.hits(`${parentName}-notify`)).toBe(1);
    expect(await target.hits(`${parentName}-approve`)).toBe(2);
    await page.getByRole("button", { name: "Fail…" }).click();
    await page.getByLabel("Reason").fill("rejected by dana");
    await page.getByRole("button", { name: "Fail task" }).click();
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("FAILED");
    await expect.poll(() => page.locator(".facts").first().textContent()).toContain("rejected by dana");
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("pauses, resumes and completes a waiting webhook by hand, showing its callback URL, skips another and terminates a third", async () => {
    const { page } = admin;
    const name = `${parentName}_hook`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
        tasks: [{ name: "payment", taskReferenceName: "payment", type: "WAIT_FOR_WEBHOOK", inputParameters: { timeoutSeconds: 600, headers: { "X-Sender": "payments" } } }],
        outputParameters: { paid: "${payment.output.paid}" },
      },
    });
    const hooked = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text;
    await page.goto(`${server.url}/#/executions/${hooked}?task=payment`);
    const callbackUrl = page.locator(".callback-url");
    await expect.poll(() => callbackUrl.textContent(), { timeout: STEP_TIMEOUT_MS }).toMatch(new RegExp(`/api/tasks/webhook/${hooked}/payment/[0-9a-f-]{36}$`));

    await page.getByRole("button", { name: "Pause" }).click();
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("PAUSED");
    await page.getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("RUNNING");

    await page.getByRole("button", { name: "Complete…" }).click();
    await page.getByLabel("Output (JSON object, merged into the task's output)").fill(JSON.stringify({ paid: 42 }));
    // By keyboard: Enter on the focused button submits the dialog.
    await page.getByRole("button", { name: "Complete task" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    expect((await waitForStatus(server.url, adminKey, hooked, ["COMPLETED"])).output).toEqual({ paid: 42 });

    // Skip a waiting webhook task: it ends SKIPPED with the output typed, and the workflow moves on.
    const skipped = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text;
    await page.goto(`${server.url}/#/executions/${skipped}?task=payment`);
    await page.getByRole("button", { name: "Skip…" }).click({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("Output (JSON object: the skipped task's output, which later tasks read)").fill(JSON.stringify({ paid: 0 }));
    await page.getByRole("button", { name: "Skip task" }).click();
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    expect(await step(page, "payment").getAttribute("data-status")).toBe("SKIPPED");
    expect((await waitForStatus(server.url, adminKey, skipped, ["COMPLETED"])).output).toEqual({ paid: 0 });

    const other = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text;
    await page.goto(`${server.url}/#/executions/${other}`);
    await page.getByRole("button", { name: "Terminate" }).click();
    await page.getByLabel("Reason").fill("customer cancelled");
    await page.getByRole("dialog").getByRole("button", { name: "Terminate" }).click();
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("TERMINATED");
    expect((await waitForStatus(server.url, adminKey, other, ["TERMINATED"])).reasonForIncompletion).toContain("customer cancelled");
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("upgrades a waiting execution to a new version of its definition, then jumps it past its waiting task", async () => {
    const { page } = admin;
    const name = `${parentName}_versions`;
    const hold = { name: "hold", taskReferenceName: "hold", type: "WAIT_FOR_WEBHOOK", inputParameters: {} };
    const counted = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { http_request: { uri: target.url(`/count/${name}-${ref}`), method: "GET" } } });
    const define = (version: number, tasks: unknown[]) => callOk(server.url, "POST", "/api/metadata/workflow", { key: adminKey, body: { name, version, schemaVersion: 2, ownerEmail: "ui@example.com", tasks } });
    await define(1, [hold, counted("after")]);
    await define(2, [counted("prepare"), hold, counted("after")]);
    const started = (await callOk(server.url, "POST", `/api/workflow/${name}?version=1`, { key: adminKey, body: {} })).text;
    await page.goto(`${server.url}/#/executions/${started}`);
    await expect.poll(() => step(page, "hold").getAttribute("data-status"), { timeout: STEP_TIMEOUT_MS }).toBe("IN_PROGRESS");

    const requestsBefore = admin.apiRequests.length;
    await page.getByRole("button", { name: "Upgrade…" }).click();
    await page.getByLabel("Version", { exact: true }).selectOption("2");
    // The versions offered are read as this workflow's alone, without their tasks: not every definition whole.
    expect(definitionListings(admin.apiRequests.slice(requestsBefore))).toEqual([`GET /api/metadata/workflow?name=${name}&short=true`]);
    await page.getByLabel("Outputs of the tasks it skips (JSON object: reference name → output)").fill(JSON.stringify({ prepare: { ready: true } }));
    await screenshot(page, "execution-upgrade");
    await page.getByRole("dialog").getByRole("button", { name: "Upgrade" }).click();
    await page.getByText("Upgraded to version 2").waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("heading", { name: `${name} v2` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await step(page, "prepare").getAttribute("data-status")).toBe("SKIPPED");
    const upgraded = await waitForStatus(server.url, adminKey, started, ["RUNNING"]);
    expect((upgraded.tasks as Array<Record<string, unknown>>).map((task) => [task["referenceTaskName"], task["status"], task["outputData"]])).toEqual([
      ["prepare", "SKIPPED", { ready: true }],
      ["hold", "IN_PROGRESS", {}],
    ]);

    await step(page, "after").click();
    await page.getByRole("button", { name: "Jump here…" }).click({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("dialog").getByRole("button", { name: "Jump" }).click();
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    expect(await step(page, "hold").getAttribute("data-status")).toBe("SKIPPED");
    expect([await target.hits(`${name}-prepare`), await target.hits(`${name}-after`)]).toEqual([0, 1]);
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("reads the lightest listing each page shows, and says in the page when a listing is over what one answers", async () => {
    const { page } = admin;
    const [requestsBefore, refusedBefore, problemsBefore] = [admin.apiRequests.length, admin.refusedLoads.length, admin.problems.length];
    await page.goto(`${server.url}/#/executions`);
    await expect.poll(() => page.locator(`#workflow-names option[value="${parentName}"]`).count(), { timeout: STEP_TIMEOUT_MS }).toBe(1);
    await page.goto(`${server.url}/#/definitions`);
    await page.getByRole("link", { name: parentName, exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.locator(".results th").allTextContents()).toEqual(["Name", "Version", "Tags", "Description", "Owner"]);
    expect(await page.locator("tr", { has: page.getByRole("link", { name: parentName, exact: true }) }).locator("td").nth(3).textContent()).toBe("An order that waits for a person's approval");
    await page.goto(`${server.url}/#/taskdefs`);
    await page.locator(".results").locator("table, p.empty").first().waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.goto(`${server.url}/#/queues`);
    await page.getByRole("heading", { name: "Workers" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    // The executions' filter suggests names; the definitions list shows no task; the task definitions list shows their
    // settings (whole), and the queues link the names that have one (read as names alone).
    expect(definitionListings(admin.apiRequests.slice(requestsBefore))).toEqual([
      "GET /api/metadata/workflow/names",
      "GET /api/metadata/workflow?short=true&metadata=true",
      "GET /api/metadata/taskdefs?metadata=true",
      "GET /api/metadata/taskdefs?short=true",
    ]);

    expect(admin.refusedLoads.slice(refusedBefore)).toEqual([]);
    expect(admin.problems.slice(problemsBefore)).toEqual([]);

    // Over what one listing answers (past 16 MiB of stored definitions, answered here by the browser's network), each
    // page says so in its own place, in the service's words, rather than staying blank. On a page of its own, whose
    // refused loads are these alone.
    const refused = await openPage(browser);
    await logIn(refused.page, adminKey);
    const tooLarge = "The workflow definitions listed come to 16777300 characters, over the 16777216 one listing answers; ask for fewer";
    const tooManyTaskDefs = "The task definitions come to 16777300 characters, over the 16777216 one listing answers; ask for fewer";
    const tooManyHandlers = "The event handlers come to 16777300 characters, over the 16777216 one listing answers";
    await answerTooLarge(refused.page, (url) => url.pathname === "/api/metadata/workflow" && url.searchParams.get("short") === "true", tooLarge);
    await answerTooLarge(refused.page, (url) => url.pathname === "/api/metadata/taskdefs", tooManyTaskDefs);
    await answerTooLarge(refused.page, (url) => url.pathname === "/api/event", tooManyHandlers);
    const alert = refused.page.locator("#view").getByRole("alert");
    await refused.page.goto(`${server.url}/#/definitions`);
    await expect.poll(() => alert.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe(tooLarge);
    await refused.page.goto(`${server.url}/#/taskdefs`);
    await expect.poll(() => alert.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe(tooManyTaskDefs);
    await refused.page.goto(`${server.url}/#/events`);
    await expect.poll(() => alert.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe(tooManyHandlers);
    // The queues are still shown, their names unlinked, saying why.
    await refused.page.goto(`${server.url}/#/queues`);
    await refused.page.getByRole("heading", { name: "Workers" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await refused.page.locator("#view .warning").allTextContents()).toEqual([`Task names are not linked to their definitions: ${tooManyTaskDefs}`]);
    expect(refused.refusedLoads).toEqual(Array.from({ length: 4 }, () => expect.stringContaining("status of 413")));
    expect(refused.problems).toEqual([]);
    await refused.page.context().close();
  });

  it("offers to start the failure workflow when terminating, and links the ended execution to it", async () => {
    const { page } = admin;
    const name = `${parentName}_guarded`;
    const handler = `${name}_handler`;
    const define = (body: Record<string, unknown>) => callOk(server.url, "POST", "/api/metadata/workflow", { key: adminKey, body: { version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", ...body } });
    await define({ name: handler, tasks: [{ name: "page", taskReferenceName: "page", type: "HTTP", inputParameters: { http_request: { uri: target.url(`/count/${handler}`), method: "GET" } } }] });
    await define({ name, failureWorkflow: handler, tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] });
    const guarded = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text;
    await page.goto(`${server.url}/#/executions/${guarded}`);
    await page.getByRole("button", { name: "Terminate" }).click({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel(`Start its failure workflow (${handler})`).check();
    await page.getByRole("dialog").getByRole("button", { name: "Terminate" }).click();
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("TERMINATED");
    const link = page.locator(".fact", { hasText: "Failure workflow" }).getByRole("link");
    await link.waitFor({ timeout: STEP_TIMEOUT_MS });
    const handlerId = (await link.textContent()) ?? "";
    expect((await waitForStatus(server.url, adminKey, handlerId, ["COMPLETED"])).input).toMatchObject({ workflowId: guarded, failureStatus: "TERMINATED" });
    await link.click();
    await expect.poll(() => page.locator("h1").textContent(), { timeout: STEP_TIMEOUT_MS }).toContain(handler);
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("shows an execution waiting for its rate limit's place, and running once the one before it ended", async () => {
    const { page } = admin;
    const name = `${parentName}_limited`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", rateLimitConfig: { concurrentExecLimit: 1 }, tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }] },
    });
    const first = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text;
    const second = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text;
    await page.goto(`${server.url}/#/executions/${second}`);
    const limit = page.locator(".fact", { hasText: "Rate limit" });
    await expect.poll(() => limit.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe(`Rate limit${name} — waiting for a place`);
    await screenshot(page, "execution-rate-limited");
    await callOk(server.url, "POST", `/api/tasks/${first}/hold/COMPLETED`, { key: adminKey, body: {} });
    await expect.poll(() => limit.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe(`Rate limit${name}`);
    await step(page, "hold").waitFor({ timeout: STEP_TIMEOUT_MS });
    await callOk(server.url, "POST", `/api/tasks/${second}/hold/COMPLETED`, { key: adminKey, body: {} });
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("shows when a finished execution's retention removes it", async () => {
    const { page } = admin;
    const name = `${parentName}_retained`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", retentionSeconds: 7 * 24 * 3600, tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }] },
    });
    const retained = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text;
    await page.goto(`${server.url}/#/executions/${retained}`);
    await step(page, "hold").waitFor({ timeout: STEP_TIMEOUT_MS });
    const removal = page.locator(".fact", { hasText: "Removed" });
    expect(await removal.count()).toBe(0);
    await callOk(server.url, "POST", `/api/tasks/${retained}/hold/COMPLETED`, { key: adminKey, body: {} });
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    const ended = await waitForStatus(server.url, adminKey, retained, ["COMPLETED"]);
    expect(ended["removalTime"]).toBe(Number(ended["endTime"]) + 7 * 24 * 3600 * 1000);
    await expect.poll(() => removal.textContent(), { timeout: STEP_TIMEOUT_MS }).toMatch(/^Removed.+ — its retention ends then$/);
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("shows an HTTP_POLL between its calls: how many it made and when the next one is", async () => {
    const { page } = admin;
    const name = `${parentName}_polling`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
        tasks: [{ name: "await_job", taskReferenceName: "await_job", type: "HTTP_POLL", inputParameters: { http_request: { uri: target.url(`/count/${name}`), method: "GET", terminationCondition: "false", pollingInterval: 3600 } } }],
      },
    });
    const polling = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text;
    await expect.poll(async () => (await waitForStatus(server.url, adminKey, polling, ["RUNNING"])).tasks?.[0]?.["pollCount"], { timeout: STEP_TIMEOUT_MS }).toBe(1);
    await page.goto(`${server.url}/#/executions/${polling}`);
    await step(page, "await_job").click({ timeout: STEP_TIMEOUT_MS });
    await expect.poll(() => page.locator(".fact", { hasText: "Polls" }).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("Polls1");
    expect(await page.locator(".fact", { hasText: "Next call" }).count()).toBe(1);
    await callOk(server.url, "DELETE", `/api/workflow/${polling}`, { key: adminKey });
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("takes at most the characters of a Fail reason the service keeps, counting them, so the reason typed is the one stored", async () => {
    const { page } = admin;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name: heldChildName, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
        tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT_FOR_WEBHOOK", inputParameters: { timeoutSeconds: 600, headers: { "X-Sender": "payments" } } }],
      },
    });
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name: heldParentName, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
        tasks: [{ name: "delegate", taskReferenceName: "delegate", type: "SUB_WORKFLOW", subWorkflowParam: { name: heldChildName } }],
      },
    });
    hookParentId = (await callOk(server.url, "POST", `/api/workflow/${heldParentName}`, { key: adminKey, body: {} })).text;
    const childOf = async () => ((await callOk(server.url, "GET", `/api/workflow/${hookParentId}`, { key: adminKey })).json().tasks[0]?.subWorkflowId ?? "") as string;
    await expect.poll(childOf, { timeout: STEP_TIMEOUT_MS }).not.toBe("");
    hookChildId = await childOf();

    await page.goto(`${server.url}/#/executions/${hookChildId}?task=hold`);
    await page.getByRole("heading", { name: `${heldChildName} v1 RUNNING` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("button", { name: "Fail…" }).click({ timeout: STEP_TIMEOUT_MS });
    const reason = page.getByLabel("Reason");
    expect(await reason.getAttribute("maxlength")).toBe(String(MAX_TASK_REASON_LENGTH));
    const hint = page.locator("#manual-reason-hint");
    expect(await hint.textContent()).toBe(`The service keeps at most ${MAX_TASK_REASON_LENGTH} characters of a reason. 0 / ${MAX_TASK_REASON_LENGTH}`);
    const full = `${"r".repeat(MAX_TASK_REASON_LENGTH - 1)}!`;
    await reason.fill(full);
    // The next character typed is refused, not kept and then cut by the service.
    await reason.press("End");
    await page.keyboard.type("Z");
    expect(await reason.inputValue()).toBe(full);
    expect(await hint.textContent()).toContain(`${MAX_TASK_REASON_LENGTH} / ${MAX_TASK_REASON_LENGTH}`);
    await page.getByRole("button", { name: "Fail task" }).click();
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("FAILED");
    const child = await waitForStatus(server.url, adminKey, hookChildId, ["FAILED"]);
    expect(child.tasks.at(-1).reasonForIncompletion).toBe(full);
    // A long reason without spaces wraps on the page instead of widening it.
    await expect.poll(() => page.locator("dd").filter({ hasText: full }).count(), { timeout: STEP_TIMEOUT_MS }).toBeGreaterThan(0);
    expect(await page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")).toBe(true);
    await waitForStatus(server.url, adminKey, hookParentId, ["FAILED"]);
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("warns before a sub workflow's Retry, Restart and Rerun that its parent may reopen, linking to it, and not for a top-level one", async () => {
    const { page } = admin;
    const dialog = page.getByRole("dialog");
    const warning = dialog.locator(".reopen-warning");
    const parentLink = warning.getByRole("link", { name: hookParentId });
    await page.goto(`${server.url}/#/executions/${hookChildId}?task=hold`);
    await page.getByRole("heading", { name: `${heldChildName} v1 FAILED` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    for (const action of ["Retry", "Restart", "Rerun from here"]) {
      await page.getByRole("button", { name: action, exact: true }).click();
      await expect.poll(() => warning.textContent(), { timeout: STEP_TIMEOUT_MS }).toMatch(/^This is a sub workflow: running it again may also reopen its parent workflow /);
      expect(await parentLink.getAttribute("href"), action).toBe(`#/executions/${hookParentId}`);
      if (action === "Rerun from here") break;
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await expect.poll(() => dialog.count()).toBe(0);
    }
    // The link leads to the parent and closes the dialog rather than leaving it open over the parent's page.
    await parentLink.click();
    await expect.poll(() => page.url()).toBe(`${server.url}/#/executions/${hookParentId}`);
    await expect.poll(() => dialog.count()).toBe(0);
    await page.getByRole("heading", { name: `${heldParentName} v1 FAILED` }).waitFor({ timeout: STEP_TIMEOUT_MS });

    // The parent has no parent: the same confirmations carry no such warning.
    await page.getByRole("button", { name: "Restart", exact: true }).click();
    await dialog.getByText("Run the workflow again from its first task, with the same input?").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await warning.count()).toBe(0);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await step(page, "delegate").click();
    await page.getByRole("button", { name: "Rerun from here" }).click();
    await dialog.getByText(/^Run the workflow again from delegate\?/).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await warning.count()).toBe(0);
    await dialog.getByRole("button", { name: "Cancel" }).click();

    // What the warning says happens: the child's retry reopens its parent.
    await page.goto(`${server.url}/#/executions/${hookChildId}`);
    await page.getByRole("heading", { name: `${heldChildName} v1 FAILED` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("button", { name: "Retry", exact: true }).click();
    await dialog.getByRole("button", { name: "Retry" }).click();
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("RUNNING");
    await waitForStatus(server.url, adminKey, hookParentId, ["RUNNING"]);
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("registers a workflow with a SIMPLE task, shows it waiting for a worker, then the worker that polled it, and completes it by hand", async () => {
    const { page } = admin;
    const name = `${parentName}_worker`;
    const taskName = `${parentName}_pack`;
    const fact = (term: string) => page.locator(".task-panel .fact").filter({ has: page.locator("dt").getByText(term, { exact: true }) }).locator("dd");
    // Written in the editor, which accepts a SIMPLE task and draws it with its type and its task name.
    await page.getByRole("link", { name: "Definitions", exact: true }).click();
    await page.getByRole("link", { name: "New definition" }).click();
    await page.getByLabel("Workflow definition (JSON)").fill(JSON.stringify({
      name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
      tasks: [{ name: taskName, taskReferenceName: "pack", type: "SIMPLE", inputParameters: { orderId: "${workflow.input.orderId}" } }],
      outputParameters: { parcel: "${pack.output.parcel}" },
    }));
    await page.getByRole("button", { name: "Register" }).click();
    await page.getByRole("heading", { name: `${name} v1` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    const drawn = page.locator('.diagram .node-body[data-ref="pack"]');
    expect(await drawn.locator(".node-type").textContent()).toBe("SIMPLE");
    expect(await drawn.locator(".node-name").textContent()).toBe(taskName);

    // Started with its task name mapped to a domain: its task waits in that domain's queue.
    const started = (await callOk(server.url, "POST", "/api/workflow", {
      key: adminKey, body: { name, input: { orderId: "C-3" }, taskToDomain: { [taskName]: "ui-pool" } },
    })).text.trim();
    await page.goto(`${server.url}/#/executions/${started}?task=pack`);
    await expect.poll(() => step(page, "pack").getAttribute("data-status"), { timeout: STEP_TIMEOUT_MS }).toBe("SCHEDULED");
    // It reads as waiting for a worker (a SIMPLE task's taskType is its name; its type is the definition's).
    expect(await step(page, "pack").locator("xpath=..").locator(".node-note").textContent()).toBe(`waiting for a worker to poll ${taskName}`);
    await expect.poll(() => page.locator(".task-panel .worker-note").textContent(), { timeout: STEP_TIMEOUT_MS })
      .toBe(`Waiting for a worker to poll ${taskName} in domain ui-pool (GET /api/tasks/poll/${taskName}?domain=ui-pool).`);
    expect(await fact("Type").textContent()).toBe("SIMPLE");
    expect(await fact("Task name").textContent()).toBe(taskName);
    expect(await fact("Domain").textContent()).toBe("ui-pool");
    expect(await fact("Worker").textContent()).toBe("none yet");
    expect(await fact("Poll count").textContent()).toBe("0");
    // Still queued, it may already be completed or failed by hand.
    await page.getByRole("button", { name: "Complete…" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByRole("button", { name: "Fail…" }).count()).toBe(1);
    await screenshot(page, "execution-simple-waiting");

    // A worker polls it, as the official clients do.
    const polled = (await callOk(server.url, "GET", `/api/tasks/poll/batch/${encodeURIComponent(taskName)}?workerid=ui-worker-7&count=1&timeout=5000&domain=ui-pool`, { key: adminKey })).json();
    expect(polled).toMatchObject([{ workflowInstanceId: started, referenceTaskName: "pack", taskType: taskName, workerId: "ui-worker-7", status: "IN_PROGRESS" }]);
    await page.reload();
    await expect.poll(() => step(page, "pack").getAttribute("data-status"), { timeout: STEP_TIMEOUT_MS }).toBe("IN_PROGRESS");
    expect(await step(page, "pack").locator("xpath=..").locator(".node-note").textContent()).toBe("polled by ui-worker-7");
    await expect.poll(() => fact("Worker").textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("ui-worker-7");
    expect(await fact("Poll count").textContent()).toBe("1");
    expect(await fact("Callback after").textContent()).toBe("0 s");
    expect(await fact("Response timeout").textContent()).toBe("3600 s");
    expect(await page.locator(".task-panel .worker-note").textContent()).toBe("Polled by worker ui-worker-7, which reports its result with POST /api/tasks within 3600 s.");
    // The worker reports it still in progress and asks to have it back later: it waits in its queue again, SCHEDULED
    // (as Conductor's updateTask puts it), held back from polls until then.
    await callOk(server.url, "POST", "/api/tasks", {
      key: adminKey, body: { workflowInstanceId: started, taskId: polled[0].taskId, status: "IN_PROGRESS", callbackAfterSeconds: 600, outputData: { packed: 1 } },
    });
    await page.reload();
    await expect.poll(() => fact("Callback after").textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("600 s");
    expect(await step(page, "pack").getAttribute("data-status")).toBe("SCHEDULED");
    expect(await fact("Poll count").textContent()).toBe("1");
    const time = String.raw`\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}`;
    const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    expect(await page.locator(".task-panel .worker-note").textContent()).toMatch(new RegExp(`^${escaped("Held back from polls until ")}${time}${escaped(`, 10 min 0 s after its last update (a worker's update asked to have it back then; callbackAfterSeconds 600). POST /api/workflow/${started}/resetcallbacks releases it at once. Then waiting for a worker to poll ${taskName} in domain ui-pool (GET /api/tasks/poll/${taskName}?domain=ui-pool).`)}$`));
    expect(await step(page, "pack").locator("xpath=..").locator(".node-note").textContent()).toMatch(new RegExp(`^held back from polls until ${time}$`));

    // The worker is gone: a person completes it instead, allowed to execute tasks of that name only (a worker's
    // grant, on the task name rather than its reference) and to read workflows.
    await callOk(server.url, "POST", "/api/security/roles", {
      key: adminKey,
      body: { name: "ui-packers", description: "execute pack tasks", permissions: [{ action: "WORKFLOW_READ", scope: "*" }, { action: "TASK_EXECUTE", scope: `task:${taskName}` }] },
    }, 201);
    await callOk(server.url, "PUT", "/api/security/users/packer-1/roles", { key: adminKey, body: { roles: ["ui-packers"], directPermissions: [] } });
    const { keyId, keySecret } = (await callOk(server.url, "POST", "/api/security/users/packer-1/api-keys", { key: adminKey }, 201)).json();
    const packer = await openPage(browser);
    await logIn(packer.page, `${keyId}:${keySecret}`);
    await packer.page.goto(`${server.url}/#/executions/${started}?task=pack`);
    await packer.page.getByRole("button", { name: "Complete…" }).click({ timeout: STEP_TIMEOUT_MS });
    expect(await packer.page.getByRole("button", { name: "Pause" }).count()).toBe(0);
    await packer.page.getByLabel("Output (JSON object, merged into the task's output)").fill(JSON.stringify({ parcel: "P-9" }));
    await packer.page.getByRole("button", { name: "Complete task" }).click();
    await expect.poll(() => workflowStatus(packer.page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    expect(await step(packer.page, "pack").getAttribute("data-status")).toBe("COMPLETED");
    expect(packer.problems).toEqual([]);
    expect(packer.refusedLoads).toEqual([]);
    await packer.page.context().close();
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    const finished = await waitForStatus(server.url, adminKey, started, ["COMPLETED"]);
    expect(finished.output).toEqual({ parcel: "P-9" });
    expect(finished.tasks[0].outputData).toEqual({ packed: 1, parcel: "P-9" });
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("says a SIMPLE task held back by its startDelay or a retry delay is held until then, that resetcallbacks releases it, and then waits for a worker", async () => {
    // Its own tab and login, so it also runs alone (-t).
    const watched = await openPage(browser);
    const { page } = watched;
    await logIn(page, adminKey);
    const name = `${parentName}_delayed`;
    const taskName = `${parentName}_ship`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: taskName, taskReferenceName: "ship", type: "SIMPLE", startDelay: 3600 }] },
    });
    const started = (await callOk(server.url, "POST", "/api/workflow", { key: adminKey, body: { name } })).text.trim();
    await page.goto(`${server.url}/#/executions/${started}?task=ship`);
    await expect.poll(() => step(page, "ship").getAttribute("data-status"), { timeout: STEP_TIMEOUT_MS }).toBe("SCHEDULED");
    // Workers polling meanwhile get nothing: the note says until when, and how to release it, not just "waiting for a worker".
    const note = page.locator(".task-panel .worker-note");
    await note.waitFor({ timeout: STEP_TIMEOUT_MS });
    const time = String.raw`\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}`;
    const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    const held = (await note.textContent()) ?? "";
    expect(held).toMatch(new RegExp(`^${escaped("Held back from polls until ")}${time}${escaped(`, 1 h 0 min after its last update (its startDelay; callbackAfterSeconds 3600). POST /api/workflow/${started}/resetcallbacks releases it at once. Then waiting for a worker to poll ${taskName} (GET /api/tasks/poll/${taskName}).`)}$`));
    // The time shown (the browser's local time) is the task's last update plus its delay.
    const { tasks } = (await callOk(server.url, "GET", `/api/workflow/${started}?includeTasks=true`, { key: adminKey })).json();
    const shown = held.match(new RegExp(time))?.[0] ?? "";
    expect(await page.evaluate((local) => new Date(local.replace(" ", "T")).getTime(), shown)).toBe(tasks[0].updateTime + 3_600_000);
    // The diagram's step says so in a few words too.
    const stepNote = step(page, "ship").locator("xpath=..").locator(".node-note");
    expect(await stepNote.textContent()).toBe(`held back from polls until ${shown}`);
    await callOk(server.url, "POST", `/api/workflow/${started}/resetcallbacks`, { key: adminKey }, 204);
    await expect.poll(() => note.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe(`Waiting for a worker to poll ${taskName} (GET /api/tasks/poll/${taskName}).`);
    expect(await stepNote.textContent()).toBe(`waiting for a worker to poll ${taskName}`);
    await callOk(server.url, "DELETE", `/api/workflow/${started}`, { key: adminKey });

    // A retry's delay holds it back the same way; once that time has passed the note says it waits for a worker,
    // though nothing in the execution changed.
    const retried = `${parentName}_retried`;
    const retriedTask = `${parentName}_label`;
    await callOk(server.url, "PUT", "/api/metadata/taskdefs", { key: adminKey, body: { name: retriedTask, ownerEmail: "ui@example.com", retryCount: 1, retryLogic: "FIXED", retryDelaySeconds: 8 } });
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name: retried, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: retriedTask, taskReferenceName: "label", type: "SIMPLE" }] },
    });
    const failing = (await callOk(server.url, "POST", "/api/workflow", { key: adminKey, body: { name: retried } })).text.trim();
    const [first] = (await callOk(server.url, "GET", `/api/tasks/poll/batch/${retriedTask}?workerid=ui-labeller&count=1&timeout=5000`, { key: adminKey })).json();
    await callOk(server.url, "POST", "/api/tasks", { key: adminKey, body: { workflowInstanceId: failing, taskId: first.taskId, status: "FAILED", reasonForIncompletion: "printer jammed" } });
    await page.goto(`${server.url}/#/executions/${failing}?task=label`);
    await expect.poll(() => note.textContent(), { timeout: STEP_TIMEOUT_MS }).toMatch(new RegExp(`^${escaped("Held back from polls until ")}${time}${escaped(`, 8.0 s after its last update (its retry delay; callbackAfterSeconds 8). POST /api/workflow/${failing}/resetcallbacks releases it at once. Then waiting for a worker to poll ${retriedTask} (GET /api/tasks/poll/${retriedTask}).`)}$`));
    await expect.poll(() => note.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe(`Waiting for a worker to poll ${retriedTask} (GET /api/tasks/poll/${retriedTask}).`);
    await callOk(server.url, "DELETE", `/api/workflow/${failing}`, { key: adminKey });
    // The task definitions page's test expects to find none registered.
    await callOk(server.url, "DELETE", `/api/metadata/taskdefs/${retriedTask}`, { key: adminKey });
    expect(watched.problems).toEqual([]);
    expect(watched.refusedLoads).toEqual([]);
    await page.context().close();
  });

  it("shows a task's logs when asked: a worker's lines in order, a multi-line one kept whole; none for a task without", async () => {
    const name = `${parentName}_logs`;
    const taskName = `${parentName}_logger`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
        tasks: [{ name: taskName, taskReferenceName: "work", type: "SIMPLE", inputParameters: {} }, { name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }],
      },
    });
    const started = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text.trim();
    const polled = (await callOk(server.url, "GET", `/api/tasks/poll/batch/${encodeURIComponent(taskName)}?workerid=ui-logger&count=1&timeout=5000`, { key: adminKey })).json();
    const taskId: string = polled[0].taskId;
    const stack = "Error: retrying\n    at pack (worker.js:1:1)";
    await callOk(server.url, "POST", "/api/tasks", {
      key: adminKey,
      body: { workflowInstanceId: started, taskId, status: "COMPLETED", outputData: {}, logs: [{ log: "packing 3 items" }, { log: stack }] },
    });
    // A task's log is read through its execution's search row, written within a second of the start.
    await expect.poll(async () => (await call(server.url, "GET", `/api/tasks/${taskId}/log`, { key: adminKey })).status, { timeout: STEP_TIMEOUT_MS }).toBe(200);

    const watched = await openPage(browser);
    const { page } = watched;
    await logIn(page, adminKey);
    await page.goto(`${server.url}/#/executions/${started}?task=work`);
    await expect.poll(() => step(page, "hold").getAttribute("data-status"), { timeout: STEP_TIMEOUT_MS }).toBe("IN_PROGRESS");
    // Read only when asked: not with every refresh of the page.
    expect(await page.locator(".task-panel .task-log").count()).toBe(0);
    await page.getByRole("button", { name: "Show logs" }).click({ timeout: STEP_TIMEOUT_MS });
    const lines = page.locator(".task-panel .task-log li pre");
    await expect.poll(() => lines.allTextContents(), { timeout: STEP_TIMEOUT_MS }).toEqual(["packing 3 items", stack]);
    await step(page, "hold").click();
    await page.getByRole("button", { name: "Show logs" }).click({ timeout: STEP_TIMEOUT_MS });
    await page.locator(".task-panel .task-logs").getByText("No log lines", { exact: false }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(watched.problems).toEqual([]);
    expect(watched.refusedLoads).toEqual([]);
    await page.context().close();
  });

  it("draws a SWITCH's branches with their cases, marks the branch an execution took and the others not taken, and makes branch tasks selectable with their actions", async () => {
    const { page } = admin;
    const name = `${parentName}_switch`;
    const key = target.url("/count");
    const http = (ref: string, extra: Record<string, unknown> = {}) => ({
      name: ref, taskReferenceName: ref, type: "HTTP", ...extra, inputParameters: { http_request: { uri: `${key}/${name}-${ref}`, method: "GET" } },
    });
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", inputParameters: ["kind", "amount"],
        tasks: [
          {
            name: "route", taskReferenceName: "route", type: "SWITCH", evaluatorType: "value-param", expression: "kind",
            inputParameters: { kind: "${workflow.input.kind}" },
            decisionCases: {
              express: [http("ship_fast", { asyncComplete: true }), http("label_fast")],
              priority: [{
                name: "size", taskReferenceName: "size", type: "SWITCH", evaluatorType: "javascript", expression: "$.amount > 100 ? 'large' : 'small'",
                inputParameters: { amount: "${workflow.input.amount}" },
                decisionCases: { large: [http("escort")] },
              }],
              none: [],
            },
            defaultCase: [http("ship")],
          },
          http("confirm"),
        ],
      },
    });
    const panel = page.locator(".diagram-panel");
    const branchesOf = (ref: string) => panel.getByRole("list", { name: `Branches of ${ref}`, exact: true });
    const labels = (ref: string) => branchesOf(ref).locator(":scope > .branch > .branch-label").allTextContents();
    const branch = (ref: string, caseValue: string | null) => branchesOf(ref).locator(caseValue === null ? ':scope > .branch[data-default="true"]' : `:scope > .branch[data-case="${caseValue}"]`);
    const refsIn = (ref: string, caseValue: string | null) => branch(ref, caseValue).locator(":scope > .diagram > .node > .node-body").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-ref")));
    const anyStep = (ref: string) => panel.locator(`.node-body[data-ref="${ref}"]`);

    // The definition: the SWITCH's expression, then each branch under its case, nested ones too, then what follows.
    await page.goto(`${server.url}/#/definitions/${name}/1`);
    await page.getByRole("heading", { name: `${name} v1` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await panel.locator(":scope > .diagram > .node > .node-body").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-ref")))).toEqual(["route", "confirm"]);
    expect(await anyStep("route").locator("xpath=..").locator(":scope > .switch-expression").textContent()).toBe("value-param: kind");
    expect(await labels("route")).toEqual(["case express", "case priority", "case none", "default"]);
    expect(await refsIn("route", "express")).toEqual(["ship_fast", "label_fast"]);
    expect(await refsIn("route", null)).toEqual(["ship"]);
    expect(await branch("route", "none").locator(":scope > .empty").textContent()).toBe("No tasks: this case runs the default branch.");
    expect(await labels("size")).toEqual(["case large", "default"]);
    expect(await refsIn("size", "large")).toEqual(["escort"]);
    // Nothing ran: no branch is said taken or not.
    expect(await panel.locator(".branch-state").count()).toBe(0);
    // At 1280 px the branches stand side by side.
    const [expressBox, priorityBox] = [await branch("route", "express").boundingBox(), await branch("route", "priority").boundingBox()];
    expect(expressBox?.y).toBe(priorityBox?.y);
    expect(expressBox!.x).toBeLessThan(priorityBox!.x);

    // An execution takes the express case: its first task waits to be completed by hand.
    const started = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: { kind: "express", amount: 5 } })).text;
    await page.goto(`${server.url}/#/executions/${started}`);
    await expect.poll(() => anyStep("ship_fast").getAttribute("data-status"), { timeout: STEP_TIMEOUT_MS }).toBe("IN_PROGRESS");
    expect(await step(page, "route").getAttribute("data-status")).toBe("COMPLETED");
    expect(await branch("route", "express").locator(":scope > .branch-label").textContent()).toBe("case express taken");
    for (const other of ["priority", "none", null]) {
      expect(await branch("route", other).locator(":scope > .branch-label .branch-state").textContent(), String(other)).toBe("not taken");
      expect(await branch("route", other).getAttribute("class"), String(other)).toBe("branch not-taken");
    }
    // Inside a branch not taken, a nested SWITCH's branches are not taken either.
    expect(await branchesOf("size").locator(".branch-state").allTextContents()).toEqual(["not taken", "not taken"]);
    expect(await anyStep("ship").getAttribute("data-status")).toBe("NOT_STARTED");

    // A branch task is a step like any other: chosen by keyboard, it offers its actions.
    await anyStep("ship_fast").focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: /^ship_fast/ }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("button", { name: "Complete…" }).click({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("Output (JSON object, merged into the task's output)").fill(JSON.stringify({ tracking: "T-1" }));
    await page.getByRole("button", { name: "Complete task" }).click();
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    expect(await anyStep("label_fast").getAttribute("data-status")).toBe("COMPLETED");
    expect(await step(page, "confirm").getAttribute("data-status")).toBe("COMPLETED");
    expect(await anyStep("ship").getAttribute("data-status")).toBe("NOT_STARTED");
    expect(await target.hits(`${name}-ship`)).toBe(0);

    await anyStep("label_fast").click();
    await page.getByRole("heading", { name: "label_fast COMPLETED" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByLabel("Task input", { exact: true }).textContent()).toContain(`${name}-label_fast`);
    expect(await page.getByRole("button", { name: "Rerun from here" }).count()).toBe(1);
    // The timeline lists the branch tasks that ran, and only those.
    expect(await page.locator(".timeline-label").allTextContents()).toEqual(["route", "ship_fast", "label_fast", "confirm"]);
    await screenshot(page, "execution-switch");
    // A task of a branch not taken says it does not run, and offers nothing.
    await anyStep("ship").click();
    await page.getByText("This step is in a branch its SWITCH did not take: it does not run.").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByRole("toolbar", { name: "Task actions" }).count()).toBe(0);

    // On a phone-sized screen the branches stack, and nothing overflows.
    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(async () => (await branch("route", "priority").boundingBox())?.x).toBe((await branch("route", "express").boundingBox())?.x);
    expect(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")).toBe(true);
    await page.setViewportSize({ width: 1280, height: 800 });

    // In a parent, the child's nested diagram shows the branch the child took, its tasks selectable.
    const parent = `${name}_parent`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name: parent, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
        tasks: [{ name: "delegate", taskReferenceName: "delegate", type: "SUB_WORKFLOW", subWorkflowParam: { name }, inputParameters: { kind: "priority", amount: 500 } }],
      },
    });
    const parentId = (await callOk(server.url, "POST", `/api/workflow/${parent}`, { key: adminKey, body: {} })).text;
    await waitForStatus(server.url, adminKey, parentId, ["COMPLETED"]);
    await page.goto(`${server.url}/#/executions/${parentId}`);
    await step(page, "delegate").locator("xpath=..").getByText("show child steps").click({ timeout: STEP_TIMEOUT_MS });
    const nested = page.locator(".nested");
    await expect.poll(() => nested.locator('.node-body[data-ref="escort"]').getAttribute("data-status"), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    expect(await nested.getByRole("list", { name: "Branches of route", exact: true }).locator(":scope > .branch.taken").getAttribute("data-case")).toBe("priority");
    expect(await nested.getByRole("list", { name: "Branches of size", exact: true }).locator(":scope > .branch.taken").getAttribute("data-case")).toBe("large");
    await nested.locator('.node-body[data-ref="escort"]').click();
    await page.getByRole("heading", { name: "escort COMPLETED" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(page.url()).toContain("?task=escort");
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("shows a FORK_JOIN's branches side by side with their tasks' statuses, a branch task selectable with its details, and what its JOIN still waits for", async () => {
    // A page of its own, logged in here: the test does not depend on the ones before it.
    const watched = await openPage(browser);
    const { page } = watched;
    await logIn(page, adminKey);
    const name = `${parentName}_fork`;
    const key = target.url("/count");
    const http = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { http_request: { uri: `${key}/${name}-${ref}`, method: "GET" } } });
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
        tasks: [
          { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[http("pick"), { name: "gate", taskReferenceName: "gate", type: "WAIT", inputParameters: {} }], [http("pack")]] },
          { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", joinOn: ["gate", "pack"] },
          http("ship"),
        ],
      },
    });
    const panel = page.locator(".diagram-panel");
    const anyStep = (ref: string) => panel.locator(`.node-body[data-ref="${ref}"]`);
    const notesOf = (ref: string) => anyStep(ref).locator("xpath=..").locator(":scope > .node-note").allTextContents();
    const branches = panel.getByRole("list", { name: "Branches of fan", exact: true });
    const branch = (number: number) => branches.locator(`:scope > .branch[data-branch="${number}"]`);
    const refsIn = (number: number) => branch(number).locator(":scope > .diagram > .node > .node-body").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-ref")));

    // One branch waits on a WAIT task, the other has ended: the JOIN waits for the first only.
    const started = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text.trim();
    await page.goto(`${server.url}/#/executions/${started}`);
    await expect.poll(() => notesOf("fan_join"), { timeout: STEP_TIMEOUT_MS }).toEqual(["waits for gate, pack", "still waiting for gate"]);
    const statuses = () => Promise.all(["fan", "pick", "gate", "pack", "fan_join", "ship"].map((ref) => anyStep(ref).getAttribute("data-status")));
    expect(await statuses()).toEqual(["COMPLETED", "COMPLETED", "IN_PROGRESS", "COMPLETED", "IN_PROGRESS", "NOT_STARTED"]);
    expect(await panel.locator(":scope > .diagram > .node > .node-body").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-ref")))).toEqual(["fan", "fan_join", "ship"]);
    expect(await notesOf("fan")).toEqual(["runs 2 branches in parallel"]);
    expect(await branches.locator(":scope > .branch > .branch-label").allTextContents()).toEqual(["branch 1", "branch 2"]);
    expect([await refsIn(1), await refsIn(2)]).toEqual([["pick", "gate"], ["pack"]]);
    // Every branch runs: none is marked taken or not.
    expect(await branches.locator(".branch-state").count()).toBe(0);
    const [first, second] = [await branch(1).boundingBox(), await branch(2).boundingBox()];
    expect(first?.y).toBe(second?.y);
    expect(first!.x).toBeLessThan(second!.x);

    // A branch task is a step like any other: selected, its details show.
    await anyStep("pack").click();
    await page.getByRole("heading", { name: "pack COMPLETED" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(page.url()).toContain("?task=pack");
    expect(await page.getByLabel("Task input", { exact: true }).textContent()).toContain(`${name}-pack`);
    // The waiting one, chosen by keyboard, offers to be completed by hand.
    await anyStep("gate").focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: /^gate/ }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("button", { name: "Complete…" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await screenshot(page, "execution-fork");
    await page.getByRole("button", { name: "Complete…" }).click();
    await page.getByLabel("Output (JSON object, merged into the task's output)").fill(JSON.stringify({ checked: "yes" }));
    await page.getByRole("button", { name: "Complete task" }).click();

    // The JOIN then completes with both outputs, and the workflow goes on.
    await expect.poll(() => workflowStatus(page).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    expect(await statuses()).toEqual(["COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED"]);
    expect(await notesOf("fan_join")).toEqual(["waits for gate, pack"]);
    const finished = await waitForStatus(server.url, adminKey, started, ["COMPLETED"]);
    const join = finished.tasks.find((task: { referenceTaskName: string }) => task.referenceTaskName === "fan_join");
    expect(Object.keys(join.outputData).sort()).toEqual(["gate", "pack"]);
    expect(join.outputData.gate).toMatchObject({ checked: "yes" });
    expect(watched.problems).toEqual([]);
    expect(watched.refusedLoads).toEqual([]);
    await page.context().close();
  });

  it("offers a template with a SWITCH in the definition editor, which registers as it is", async () => {
    const { page } = admin;
    await page.getByRole("link", { name: "Definitions", exact: true }).click();
    await page.getByRole("link", { name: "New definition" }).click();
    const editor = page.getByLabel("Workflow definition (JSON)");
    await expect.poll(() => editor.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain('"type": "SWITCH"');
    const template = JSON.parse(await editor.inputValue()) as { name: string };
    await page.getByRole("button", { name: "Register" }).click();
    await page.getByRole("heading", { name: `${template.name} v1` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByRole("list", { name: "Branches of route_by_status", exact: true }).locator(":scope > .branch > .branch-label").allTextContents()).toEqual(["case cancelled", "default"]);
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("acts on selected executions of the list at once, keeping the selection through a live refresh and listing each refusal with the server's message", async () => {
    const { page } = admin;
    const name = `${parentName}_bulk`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
        tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT_FOR_WEBHOOK", inputParameters: { timeoutSeconds: 600, headers: { "X-Sender": "payments" } } }],
      },
    });
    const start = async () => (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text;
    const running = [await start(), await start()];
    const completed = await start();
    const held = (await waitForStatus(server.url, adminKey, completed, ["RUNNING"])).tasks[0];
    await callOk(server.url, "POST", "/api/tasks", { key: adminKey, body: { workflowInstanceId: completed, taskId: held.taskId, status: "COMPLETED", outputData: {} } });
    await waitForStatus(server.url, adminKey, completed, ["COMPLETED"]);

    await page.goto(`${server.url}/#/executions?workflowName=${name}`);
    const badge = (id: string) => page.locator(`tr[data-workflow-id="${id}"] .badge`);
    await expect.poll(() => badge(completed).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    await expect.poll(() => page.locator("tbody tr").count(), { timeout: STEP_TIMEOUT_MS }).toBe(3);
    const box = (id: string) => page.getByRole("checkbox", { name: `Select execution ${id}` });
    const toolbar = page.getByRole("toolbar", { name: "Selected executions" });
    const dialog = page.getByRole("dialog");
    expect(await toolbar.isVisible()).toBe(false);
    for (const id of [...running, completed]) await box(id).check();
    await expect.poll(() => toolbar.textContent()).toContain("3 selected");
    expect(await page.getByRole("checkbox", { name: "Select all executions on this page" }).isChecked()).toBe(true);

    // The running rows are redrawn by every live refresh; the selection stays, and so does the focus.
    const updated = page.locator(".live .help");
    const before = await updated.textContent();
    await box(completed).focus();
    await expect.poll(() => updated.textContent(), { timeout: STEP_TIMEOUT_MS }).not.toBe(before);
    for (const id of [...running, completed]) expect(await box(id).isChecked(), id).toBe(true);
    expect(await page.evaluate('document.activeElement?.getAttribute("aria-label")')).toBe(`Select execution ${completed}`);

    await toolbar.getByRole("button", { name: "Pause" }).click();
    await dialog.getByRole("heading", { name: "Pause 3 executions" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await dialog.getByRole("button", { name: "Pause" }).click();
    const outcome = page.locator(".bulk-outcome");
    await expect.poll(() => outcome.locator("h2").textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("Pause: 2 succeeded, 1 failed");
    // The message is the one the single-id request answers (the refusal changes nothing).
    const refusal = (await call(server.url, "PUT", `/api/workflow/${completed}/pause`, { key: adminKey })).json().message as string;
    expect(refusal).toMatch(/COMPLETED/);
    expect(await outcome.locator("li").allTextContents()).toEqual([`${completed}: ${refusal}`]);
    for (const id of running) await waitForStatus(server.url, adminKey, id, ["PAUSED"]);
    // The failed one stays selected, the rest are cleared.
    await expect.poll(() => toolbar.textContent()).toContain("1 selected");
    expect(await box(completed).isChecked()).toBe(true);
    for (const id of running) expect(await box(id).isChecked(), id).toBe(false);
    for (const id of running) await expect.poll(() => badge(id).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("PAUSED");
    expect(await box(completed).isChecked()).toBe(true);
    await screenshot(page, "executions-bulk-outcome");

    await page.getByRole("checkbox", { name: "Select all executions on this page" }).check();
    await expect.poll(() => toolbar.textContent()).toContain("3 selected");
    await toolbar.getByRole("button", { name: "Terminate" }).click();
    await dialog.getByRole("heading", { name: "Terminate 3 executions" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await dialog.getByLabel("Reason (optional)").fill("bulk cleanup");
    await dialog.getByRole("button", { name: "Terminate" }).click();
    await expect.poll(() => outcome.locator("h2").textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("Terminate: 2 succeeded, 1 failed");
    expect(await outcome.locator("li").count()).toBe(1);
    for (const id of running) {
      expect((await waitForStatus(server.url, adminKey, id, ["TERMINATED"])).reasonForIncompletion, id).toContain("bulk cleanup");
    }
    expect((await waitForStatus(server.url, adminKey, completed, ["COMPLETED"])).status).toBe("COMPLETED");
    expect(admin.problems).toEqual([]);
    expect(admin.refusedLoads).toEqual([]);
  });

  it("shows a definition's validation errors at the offending line and registers it once fixed", async () => {
    const { page } = admin;
    await page.getByRole("link", { name: "Definitions", exact: true }).click();
    await page.getByRole("link", { name: "New definition" }).click();
    const name = `${parentName}_new`;
    const definition = {
      name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com",
      tasks: [
        { name: "ok", taskReferenceName: "ok", type: "HTTP", inputParameters: { http_request: { uri: target.url("/echo"), method: "GET" } } },
        { name: "broken", taskReferenceName: "broken", type: "HTTP", inputParameters: { http_request: { uri: target.url("/echo"), method: "FETCH" } } },
      ],
    };
    const editor = page.getByLabel("Workflow definition (JSON)");
    await editor.fill(JSON.stringify(definition));
    await page.getByRole("button", { name: "Register" }).click();
    const errors = page.locator(".editor-errors li");
    await expect.poll(() => errors.first().textContent(), { timeout: STEP_TIMEOUT_MS }).toMatch(/tasks\[1\]\.inputParameters\.http_request\.method/);
    // The marked line is the one holding "method": "FETCH" in the reformatted text.
    const text = await editor.inputValue();
    const methodLine = text.split("\n").findIndex((line) => line.includes('"FETCH"')) + 1;
    expect(await errors.first().textContent()).toContain(`Line ${methodLine}:`);
    expect(await page.locator(".gutter-line.marked").allTextContents()).toEqual([String(methodLine)]);
    await screenshot(page, "definition-errors");
    expect((await call(server.url, "GET", `/api/metadata/workflow/${name}`, { key: adminKey })).status).toBe(404);

    await editor.fill(text.replace('"FETCH"', '"GET"'));
    await page.getByRole("button", { name: "Register" }).click();
    await page.getByRole("heading", { name: `${name} v1` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.locator(".diagram .node-body").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-ref")))).toEqual(["ok", "broken"]);
    await screenshot(page, "definition");

    // Edit it in place (Conductor's update): the new description is stored and shown.
    await page.getByRole("link", { name: "Edit" }).click();
    const edited = page.getByLabel("Workflow definition (JSON)");
    await expect.poll(() => edited.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain(`"name": "${name}"`);
    const current = JSON.parse(await edited.inputValue()) as Record<string, unknown>;
    await edited.fill(JSON.stringify({ ...current, description: "edited in the UI" }));
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("edited in the UI", { exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect((await callOk(server.url, "GET", `/api/metadata/workflow/${name}`, { key: adminKey })).json().description).toBe("edited in the UI");
    expect(admin.refusedLoads).toEqual([expect.stringContaining("status of 400")]);
    expect((await callOk(server.url, "GET", `/api/metadata/workflow/${name}`, { key: adminKey })).json().tasks[1].inputParameters.http_request.method).toBe("GET");
    // Tagged (the MetadataClient's setWorkflowTags): the list shows its tags, and the filter finds it by one; the edit
    // above, which did not name tags, kept none away.
    await callOk(server.url, "PUT", `/api/metadata/workflow/${name}/tags`, { key: adminKey, body: [{ key: "team", value: "ui" }, { key: "tier", value: "gold" }] });
    await page.getByRole("link", { name: "Definitions", exact: true }).click();
    const row = page.locator("tr", { has: page.getByRole("link", { name, exact: true }) });
    await expect.poll(() => row.locator(".tag").allTextContents(), { timeout: STEP_TIMEOUT_MS }).toEqual(["team=ui", "tier=gold"]);
    await page.getByLabel("Filter").fill("TIER=GO");
    await expect.poll(() => page.locator("tbody tr").count(), { timeout: STEP_TIMEOUT_MS }).toBe(1);
    await row.waitFor();
    await page.getByLabel("Filter").fill("tier=silver");
    await page.getByText("No definition matches.").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(admin.problems).toEqual([]);

    // A team member who may read and write this workflow only: the list shows it alone, and an edit saves (the list
    // was a 403, and the save's PUT needed WORKFLOW_WRITE on every workflow).
    const team = await logInAsNew("definition-team-1", [{ action: "WORKFLOW_READ", scope: `workflow:${name}` }, { action: "WORKFLOW_WRITE", scope: `workflow:${name}` }]);
    await team.page.goto(`${server.url}/#/definitions`);
    await team.page.getByRole("link", { name, exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await team.page.locator("tbody tr").count()).toBe(1);
    await team.page.getByRole("link", { name, exact: true }).click();
    await team.page.getByRole("link", { name: "Edit" }).click({ timeout: STEP_TIMEOUT_MS });
    const teamEditor = team.page.getByLabel("Workflow definition (JSON)");
    await expect.poll(() => teamEditor.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain(`"name": "${name}"`);
    await teamEditor.fill(JSON.stringify({ ...(JSON.parse(await teamEditor.inputValue()) as Record<string, unknown>), description: "edited by its team" }));
    await team.page.getByRole("button", { name: "Save" }).click();
    await team.page.getByText("edited by its team", { exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect((await callOk(server.url, "GET", `/api/metadata/workflow/${name}`, { key: adminKey })).json()).toMatchObject({ description: "edited by its team", updatedBy: "definition-team-1" });
    expect(team.problems).toEqual([]);
    expect(team.refusedLoads).toEqual([]);
    await team.page.context().close();
  });

  it("opens what is named `new` at its own address, while the New buttons, and the `…/new` addresses they wrote before, open the create pages", async () => {
    // Each kind with a create page, one of it named `new`: its link was `#/<section>/new`, the create page's address.
    const named = "new";
    await callOk(server.url, "POST", "/api/metadata/taskdefs", { key: adminKey, body: [{ name: named, retryCount: 5, timeoutSeconds: 0 }] });
    await callOk(server.url, "POST", "/api/metadata/workflow", { key: adminKey, body: { name: named, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: "note", taskReferenceName: "note", type: "SET_VARIABLE", inputParameters: { note: "x" } }] } });
    await callOk(server.url, "POST", "/api/event", { key: adminKey, body: { name: named, event: `conductor:${parentName}:new`, active: false, actions: [{ action: "start_workflow", start_workflow: { name: childName } }] } });
    await callOk(server.url, "POST", "/api/security/roles", { key: adminKey, body: { name: named, description: "", permissions: [{ action: "WORKFLOW_READ", scope: `workflow:${childName}` }] } }, 201);
    await callOk(server.url, "POST", "/api/scheduler/schedules", { key: adminKey, body: { name: named, cronExpression: "0 0 1 1 * ?", paused: true, startWorkflowRequest: { name: childName } } });
    const { page, problems, refusedLoads } = await openPage(browser);
    await logIn(page, adminKey);
    const opens = async (list: string, linkName: string, heading: string | RegExp) => {
      await page.goto(`${server.url}/#/${list}`);
      await page.getByRole("link", { name: linkName, exact: true }).click({ timeout: STEP_TIMEOUT_MS });
      await page.getByRole("heading", { name: heading, exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    };
    for (const [list, heading] of [["taskdefs", "Task definition new"], ["events", "Event handler new"], ["access/roles", "Role new"], ["schedules", "Schedule new"]] as const) {
      await opens(list, named, heading);
      expect(page.url()).toBe(`${server.url}/#/${list}/new`);
    }
    await opens("definitions", named, "new v1");
    // The create pages, from each list's New button.
    for (const [list, button, heading] of [["taskdefs", "New task definition", "New task definition"], ["events", "New event handler", "New event handler"], ["access/roles", "New role", "New role"],
      ["schedules", "New schedule", "New schedule"], ["definitions", "New definition", "New definition"], ["webhooks", "New webhook", "New webhook"]] as const) {
      await opens(list, button, heading);
      expect(page.url()).toBe(`${server.url}/#/${list}/+new`);
    }
    // A bookmark of the create page as it was addressed still opens it while nothing of that kind is named `new`.
    await page.goto(`${server.url}/#/webhooks/new`);
    await page.getByRole("heading", { name: "New webhook", exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await expect.poll(() => page.url(), { timeout: STEP_TIMEOUT_MS }).toBe(`${server.url}/#/webhooks/+new`);
    expect(refusedLoads).toEqual([expect.stringContaining("status of 404")]);
    expect(problems).toEqual([]);
    await page.context().close();
    for (const path of ["/api/metadata/taskdefs/new", "/api/metadata/workflow/new/1", "/api/event/new", "/api/security/roles/new", "/api/scheduler/schedules/new"]) await callOk(server.url, "DELETE", path, { key: adminKey });
  });

  it("says in the page why a page could not be shown, in the service's words, where it was blank with the reason only in the status line", async () => {
    const { page, problems, refusedLoads } = await openPage(browser);
    await logIn(page, adminKey);
    const notice = page.locator("#view [role=alert]");
    await page.goto(`${server.url}/#/access/roles/${parentName}_no_such_role`);
    await page.getByRole("heading", { name: "This page could not be shown" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await notice.textContent()).toBe(`No role named ${parentName}_no_such_role`);
    // A name the service refuses outright: its message, naming the field and what is wrong with it.
    await page.goto(`${server.url}/#/access/roles/${encodeURIComponent("no such role")}`);
    await expect.poll(() => notice.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("Invalid name: name: must be 1 to 128 letters, digits or _ . @ + : -");
    // A page that opens clears it.
    await page.goto(`${server.url}/#/access/roles`);
    await page.getByRole("heading", { name: "Roles", exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByRole("heading", { name: "This page could not be shown" }).count()).toBe(0);
    expect(refusedLoads).toEqual([expect.stringContaining("status of 404"), expect.stringContaining("status of 400")]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("refuses to save an edited workflow definition over another name or version that exists, which the service's update would replace", async () => {
    const name = `${parentName}_renamed`;
    const define = (version: number, description: string) => callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey, body: { name, version, description, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: "note", taskReferenceName: "note", type: "SET_VARIABLE", inputParameters: { note: "x" } }] },
    });
    await define(1, "first");
    await define(2, "second");
    const { page, problems, refusedLoads } = await openPage(browser);
    await logIn(page, adminKey);
    await page.goto(`${server.url}/#/definitions/${name}/1/edit`);
    const editor = page.getByLabel("Workflow definition (JSON)");
    await expect.poll(() => editor.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain('"description": "first"');
    const opened = JSON.parse(await editor.inputValue()) as Record<string, unknown>;
    const message = page.locator(".definition-editor .error");
    // Version 1 saved as version 2, which exists; then under the name of another definition, which exists.
    await editor.fill(JSON.stringify({ ...opened, version: 2, description: "over the second" }));
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => message.textContent(), { timeout: STEP_TIMEOUT_MS }).toContain(`${name} v2 exists already`);
    await editor.fill(JSON.stringify({ ...opened, name: childName, description: "over another" }));
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => message.textContent(), { timeout: STEP_TIMEOUT_MS }).toContain(`${childName} v1 exists already`);
    expect((await callOk(server.url, "GET", `/api/metadata/workflow/${name}?version=2`, { key: adminKey })).json().description).toBe("second");
    expect((await callOk(server.url, "GET", `/api/metadata/workflow/${childName}?version=1`, { key: adminKey })).json().description).toBeUndefined();
    // A version not taken is registered beside the one opened, which stays as it was.
    await editor.fill(JSON.stringify({ ...opened, version: 3, description: "third" }));
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("heading", { name: `${name} v3` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    // What the save says stays shown on the page it leads to.
    expect(await page.getByRole("status").textContent()).toBe(`Saved ${name} v3`);
    expect((await callOk(server.url, "GET", `/api/metadata/workflow/${name}?version=1`, { key: adminKey })).json().description).toBe("first");
    expect(refusedLoads).toEqual([expect.stringContaining("status of 409"), expect.stringContaining("status of 409")]);
    expect(problems).toEqual([]);
    await page.context().close();
    for (const version of [1, 2, 3]) await callOk(server.url, "DELETE", `/api/metadata/workflow/${name}/${version}`, { key: adminKey });
  });

  it("refuses to register a new task definition under a name in use, which the service's save would overwrite", async () => {
    const name = `${parentName}_taken`;
    await callOk(server.url, "POST", "/api/metadata/taskdefs", { key: adminKey, body: [{ name, retryCount: 7, timeoutSeconds: 0 }] });
    const { page, problems, apiRequests } = await openPage(browser);
    await logIn(page, adminKey);
    await page.goto(`${server.url}/#/taskdefs/+new`);
    const editor = page.getByLabel("Task definition (JSON)");
    await expect.poll(() => editor.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain('"retryCount": 3');
    await editor.fill(JSON.stringify({ name, retryCount: 1, timeoutSeconds: 0 }));
    await page.getByRole("button", { name: "Register" }).click();
    await expect.poll(() => page.locator(".definition-editor .error").textContent(), { timeout: STEP_TIMEOUT_MS }).toContain(`"${name}" exists already`);
    expect((await callOk(server.url, "GET", `/api/metadata/taskdefs/${name}`, { key: adminKey })).json()).toMatchObject({ retryCount: 7 });
    // With the task definitions over what one listing answers (a 413), the name is looked up alone, and still refused.
    await answerTooLarge(page, (url) => url.pathname === "/api/metadata/taskdefs", "The task definitions come to 16777300 characters, over the 16777216 one listing answers");
    await page.getByRole("button", { name: "Register" }).click();
    await expect.poll(() => apiRequests.includes(`GET /api/metadata/taskdefs/${name}`), { timeout: STEP_TIMEOUT_MS }).toBe(true);
    await expect.poll(() => page.locator(".definition-editor .error").textContent(), { timeout: STEP_TIMEOUT_MS }).toContain(`"${name}" exists already`);
    expect((await callOk(server.url, "GET", `/api/metadata/taskdefs/${name}`, { key: adminKey })).json()).toMatchObject({ retryCount: 7 });
    expect(problems).toEqual([]);
    await page.context().close();
    await callOk(server.url, "DELETE", `/api/metadata/taskdefs/${name}`, { key: adminKey });
  });

  it("does not add a task definition's workers panel to the page shown when its answer arrives after the user left", async () => {
    const name = `${parentName}_left`;
    await callOk(server.url, "POST", "/api/metadata/taskdefs", { key: adminKey, body: [{ name, retryCount: 0, timeoutSeconds: 0 }] });
    const { page, problems } = await openPage(browser);
    await logIn(page, adminKey);
    // The workers' look-up is held until the user has gone on to the list.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/api/tasks/queue/polldata**", async (route) => {
      await held;
      await route.continue();
    });
    const answered = page.waitForResponse((response) => response.url().includes("/api/tasks/queue/polldata"));
    await page.goto(`${server.url}/#/taskdefs/${name}`);
    await page.getByRole("heading", { name: `Task definition ${name}` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("link", { name: "Definitions", exact: true }).click();
    await page.getByRole("heading", { name: "Definitions", exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    release();
    await (await answered).finished();
    // The page has read the answer (its resource entry is complete) and run what follows it.
    await page.waitForFunction(`performance.getEntriesByType("resource").some((entry) => entry.name.includes("/api/tasks/queue/polldata") && entry.responseEnd > 0)`, undefined, { timeout: STEP_TIMEOUT_MS });
    await page.evaluate("new Promise((resolve) => setTimeout(resolve, 0))");
    expect(await page.locator("#view h2", { hasText: "Workers" }).count()).toBe(0);
    expect(await page.getByRole("heading", { name: "Definitions", exact: true }).count()).toBe(1);
    expect(problems).toEqual([]);
    await page.context().close();
    await callOk(server.url, "DELETE", `/api/metadata/taskdefs/${name}`, { key: adminKey });
  });

  it("registers a task definition, marks a refused field at its line, lists its settings, edits and deletes it", async () => {
    const { page } = admin;
    const name = `${parentName}_taskdef`;
    await page.getByRole("link", { name: "Task definitions" }).click();
    await page.getByRole("link", { name: "New task definition" }).click();
    const editor = page.getByLabel("Task definition (JSON)");
    await expect.poll(() => editor.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain('"retryCount": 3');
    await editor.fill(JSON.stringify({ name, retryCount: 2, retryLogic: "SOMETIMES", retryDelaySeconds: 5, timeoutSeconds: 0 }));
    await page.getByRole("button", { name: "Register" }).click();
    const errors = page.locator(".editor-errors li");
    await expect.poll(() => errors.first().textContent(), { timeout: STEP_TIMEOUT_MS }).toMatch(/retryLogic/);
    const text = await editor.inputValue();
    const logicLine = text.split("\n").findIndex((line) => line.includes('"SOMETIMES"')) + 1;
    expect(await page.locator(".gutter-line.marked").allTextContents()).toEqual([String(logicLine)]);
    expect((await call(server.url, "GET", `/api/metadata/taskdefs/${name}`, { key: adminKey })).status).toBe(404);

    await editor.fill(text.replace('"SOMETIMES"', '"LINEAR_BACKOFF"'));
    await page.getByRole("button", { name: "Register" }).click();
    const row = page.locator("tr", { has: page.getByRole("link", { name, exact: true }) });
    await expect.poll(() => row.textContent(), { timeout: STEP_TIMEOUT_MS }).toContain("2 × LINEAR_BACKOFF, 5 s");
    await screenshot(page, "task-definitions");

    await page.getByRole("link", { name, exact: true }).click();
    const edited = page.getByLabel("Task definition (JSON)");
    await expect.poll(() => edited.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain(`"name": "${name}"`);
    const current = JSON.parse(await edited.inputValue()) as Record<string, unknown>;
    await edited.fill(JSON.stringify({ ...current, timeoutSeconds: 120, responseTimeoutSeconds: 60, timeoutPolicy: "RETRY", concurrentExecLimit: 2 }));
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => row.textContent(), { timeout: STEP_TIMEOUT_MS }).toContain("120 s, RETRY");
    expect(await row.textContent()).toContain("2 at once");
    expect((await callOk(server.url, "GET", `/api/metadata/taskdefs/${name}`, { key: adminKey })).json()).toMatchObject({ retryCount: 2, timeoutSeconds: 120 });
    // Tagged (the MetadataClient's setTaskTags): the list shows its tags, and the filter finds it by one.
    await callOk(server.url, "PUT", `/api/metadata/task/${name}/tags`, { key: adminKey, body: [{ key: "lang", value: "go" }] });
    await page.reload();
    await expect.poll(() => row.locator(".tag").allTextContents(), { timeout: STEP_TIMEOUT_MS }).toEqual(["lang=go"]);
    await page.getByLabel("Filter").fill("lang=g");
    await row.waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("Filter").fill("lang=rust");
    await page.getByText("No task definition matches.").waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("Filter").fill("");

    // A worker polls for it: the definition's page shows the worker and the empty queue.
    expect((await call(server.url, "GET", `/api/tasks/poll/batch/${name}?workerid=ui-worker-1&timeout=0`, { key: adminKey })).status).toBe(200);
    await page.getByRole("link", { name, exact: true }).click();
    const workers = page.getByRole("table", { name: `Workers polling ${name}` });
    await expect.poll(() => workers.textContent(), { timeout: STEP_TIMEOUT_MS }).toContain("ui-worker-1");
    expect(await workers.textContent()).toContain("default");
    await page.getByText("0 tasks wait for a worker (default domain).").waitFor({ timeout: STEP_TIMEOUT_MS });
    await screenshot(page, "task-definition-workers");
    await page.getByRole("link", { name: "Task definitions" }).click();

    await page.getByRole("link", { name, exact: true }).click();
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.getByText("No task definition is registered yet.").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect((await call(server.url, "GET", `/api/metadata/taskdefs/${name}`, { key: adminKey })).status).toBe(404);
    expect(admin.refusedLoads).toEqual([expect.stringContaining("status of 400"), expect.stringContaining("status of 400")]);
    expect(admin.problems).toEqual([]);
  });

  it("creates a schedule on the Schedules page after a refused save, lists it, previews its next fires, pauses, resumes and deletes it", async () => {
    // Its own tab and login, so it also runs alone (-t).
    const own = await openPage(browser);
    const { page } = own;
    await logIn(page, adminKey);
    const name = `${parentName}_yearly`;
    const schedulePath = `/api/scheduler/schedules/${name}`;
    await page.getByRole("link", { name: "Schedules", exact: true }).click();
    await page.getByText("No schedule yet.").waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("link", { name: "New schedule" }).click();
    const editor = page.getByLabel("Schedule (JSON)");
    await expect.poll(() => editor.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain('"cronExpression": "0 0 * * * ?"');
    // The template's fires are previewed at once: every hour, in UTC.
    const fires = page.locator("ol.fires li");
    await expect.poll(() => fires.count(), { timeout: STEP_TIMEOUT_MS }).toBe(5);
    expect(await fires.first().textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:00:00 UTC/);

    // Five fields: the preview says why, and so does the save, at the expression's line; nothing is stored.
    const schedule = { name, description: "new year's order", cronExpression: "0 0 1 1 ?", zoneId: "Europe/Berlin", startWorkflowRequest: { name: parentName, input: { orderId: "NY-1" } } };
    await editor.fill(JSON.stringify(schedule));
    await page.getByRole("button", { name: "Preview the edited schedule" }).click();
    const firesSection = page.getByRole("region", { name: "Next fires" });
    await expect.poll(() => firesSection.getByRole("alert").textContent(), { timeout: STEP_TIMEOUT_MS }).toContain("cronExpression must have 6 fields");
    expect(await fires.count()).toBe(0);
    await page.getByRole("button", { name: "Create" }).click();
    const errors = page.locator(".editor-errors li");
    await expect.poll(() => errors.first().textContent(), { timeout: STEP_TIMEOUT_MS }).toMatch(/^Line \d+: cronExpression: must have 6 fields/);
    const text = await editor.inputValue();
    const cronLine = text.split("\n").findIndex((line) => line.includes('"0 0 1 1 ?"')) + 1;
    expect(await page.locator(".gutter-line.marked").allTextContents()).toEqual([String(cronLine)]);
    expect(await page.locator("form .error[role=alert]").textContent()).toMatch(/^Invalid schedule: cronExpression: must have 6 fields/);
    expect((await call(server.url, "GET", schedulePath, { key: adminKey })).status).toBe(404);

    // Once a year at midnight in Berlin: the preview of the edited expression lists the service's next fires there.
    await editor.fill(text.replace('"0 0 1 1 ?"', '"0 0 0 1 1 ?"'));
    await page.getByRole("button", { name: "Preview the edited schedule" }).click();
    const expected: number[] = (await callOk(server.url, "GET", `/api/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 0 0 1 1 ?")}&zoneId=Europe/Berlin&limit=5`, { key: adminKey })).json();
    const isoTimes = () => fires.locator("time").evaluateAll((times) => times.map((time) => time.getAttribute("datetime")));
    await expect.poll(isoTimes, { timeout: STEP_TIMEOUT_MS }).toEqual(expected.map((ms) => new Date(ms).toISOString()));
    // Berlin is an hour ahead of UTC in winter.
    const firstYear = new Date(expected[0]! + 3_600_000).getUTCFullYear();
    expect(await fires.first().textContent()).toMatch(new RegExp(`^${firstYear}-01-01 00:00:00 Europe/Berlin`));
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("heading", { name: `Schedule ${name}` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect((await callOk(server.url, "GET", schedulePath, { key: adminKey })).json()).toMatchObject({
      name, cronExpression: "0 0 0 1 1 ?", zoneId: "Europe/Berlin", paused: false, nextRunTime: expected[0], startWorkflowRequest: { name: parentName, input: { orderId: "NY-1" } },
    });
    await expect.poll(isoTimes, { timeout: STEP_TIMEOUT_MS }).toEqual(expected.map((ms) => new Date(ms).toISOString()));
    await screenshot(page, "schedule");

    // Listed with its workflow, expression, zone, state and next fire; the filter finds it by name.
    await page.getByRole("link", { name: "Schedules", exact: true }).click();
    const row = page.locator("tr", { has: page.getByRole("link", { name, exact: true }) });
    await expect.poll(() => row.locator("td").allTextContents(), { timeout: STEP_TIMEOUT_MS }).toEqual([
      name, `${parentName} (latest version)`, "0 0 0 1 1 ? Europe/Berlin", "ACTIVE", expect.stringMatching(new RegExp(`^${firstYear}-01-01 00:00:00 Europe/Berlin`)), "new year's order",
    ]);
    await page.getByLabel("Filter").fill("no-such-schedule");
    await page.getByText("No schedule matches.").waitFor();
    await page.getByLabel("Filter").fill("yearly");
    await row.waitFor();
    await screenshot(page, "schedules");

    // A new schedule may not take the name of another (a save would replace it).
    await page.getByRole("link", { name: "New schedule" }).click();
    await expect.poll(() => editor.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain('"name": "my_schedule"');
    await editor.fill(JSON.stringify({ ...schedule, cronExpression: "0 0 * * * ?", description: "a copy" }));
    await page.getByRole("button", { name: "Create" }).click();
    await expect.poll(() => page.locator("form .error[role=alert]").textContent(), { timeout: STEP_TIMEOUT_MS }).toContain(`A schedule named "${name}" exists already`);
    expect((await callOk(server.url, "GET", schedulePath, { key: adminKey })).json().description).toBe("new year's order");

    // Pause and resume: the state shown, the service's and the editor's JSON follow.
    await page.goto(`${server.url}/#/schedules/${name}`);
    const state = page.locator(".facts .badge");
    await expect.poll(() => state.textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("ACTIVE");
    await page.getByRole("button", { name: "Pause" }).click();
    await page.getByRole("button", { name: "Resume" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await state.textContent()).toBe("PAUSED");
    expect((await callOk(server.url, "GET", schedulePath, { key: adminKey })).json()).toMatchObject({ paused: true });
    expect(await editor.inputValue()).toContain('"paused": true');
    await page.getByRole("button", { name: "Resume" }).click();
    await page.getByRole("button", { name: "Pause" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await state.textContent()).toBe("ACTIVE");
    expect((await callOk(server.url, "GET", schedulePath, { key: adminKey })).json()).toMatchObject({ paused: false, nextRunTime: expected[0] });

    // A user who may only read workflows sees it, and is offered nothing to change it with.
    await callOk(server.url, "POST", "/api/security/roles", {
      key: adminKey,
      body: { name: "ui-schedule-readers", description: "read workflows", permissions: [{ action: "WORKFLOW_READ", scope: "*" }] },
    }, 201);
    await callOk(server.url, "PUT", "/api/security/users/schedule-reader/roles", { key: adminKey, body: { roles: ["ui-schedule-readers"], directPermissions: [] } });
    const reader = (await callOk(server.url, "POST", "/api/security/users/schedule-reader/api-keys", { key: adminKey }, 201)).json();
    const readerTab = await openPage(browser);
    await logIn(readerTab.page, `${reader.keyId}:${reader.keySecret}`);
    await readerTab.page.goto(`${server.url}/#/schedules`);
    await readerTab.page.getByRole("link", { name, exact: true }).click();
    await readerTab.page.getByRole("heading", { name: `Schedule ${name}` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await expect.poll(() => readerTab.page.locator("ol.fires li").count(), { timeout: STEP_TIMEOUT_MS }).toBe(5);
    for (const action of ["Pause", "Resume", "Delete…", "Save", "Preview the edited schedule"]) {
      expect(await readerTab.page.getByRole("button", { name: action }).count(), action).toBe(0);
    }
    expect(await readerTab.page.getByLabel("Schedule (JSON)").getAttribute("readonly")).toBe("");
    await readerTab.page.getByRole("link", { name: "Back" }).click();
    await readerTab.page.getByRole("link", { name, exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await readerTab.page.getByRole("link", { name: "New schedule" }).count()).toBe(0);
    expect(readerTab.problems).toEqual([]);
    expect(readerTab.refusedLoads).toEqual([]);
    await readerTab.page.context().close();

    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.getByText("No schedule yet.").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect((await call(server.url, "GET", schedulePath, { key: adminKey })).status).toBe(404);
    expect(own.refusedLoads).toEqual([expect.stringContaining("status of 400"), expect.stringContaining("status of 400")]);
    expect(own.problems).toEqual([]);
    await page.context().close();
  });

  it("shows a schedule's recent fires: the execution each started, or why none started", async () => {
    const { page } = admin;
    const [refusedBefore, problemsBefore] = [admin.refusedLoads.length, admin.problems.length];
    const register = (flow: string) => callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name: flow, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: "tick", taskReferenceName: "tick", type: "SET_VARIABLE", inputParameters: { at: "${workflow.input._scheduledTime}" } }] },
    });
    const [ticking, gone] = [`${parentName}_ticking`, `${parentName}_gone`];
    const [starts, fails] = [`${parentName}-starts`, `${parentName}-fails`];
    await register(ticking);
    await register(gone);
    // Every 10 seconds (the shortest period allowed): the dev server's alarms fire both while the test watches. The
    // second one's workflow definition is deleted once it is saved, so its fires start nothing.
    for (const [name, flow] of [[starts, ticking], [fails, gone]] as const) {
      await callOk(server.url, "POST", "/api/scheduler/schedules", { key: adminKey, body: { name, cronExpression: "*/10 * * * * ?", startWorkflowRequest: { name: flow } } });
    }
    await callOk(server.url, "DELETE", `/api/metadata/workflow/${gone}/1`, { key: adminKey });
    const fired = async (name: string) => (await callOk(server.url, "GET", `/api/scheduler/search/executions?query=${encodeURIComponent(`scheduleName = '${name}'`)}`, { key: adminKey })).json().totalHits as number;
    await expect.poll(async () => Math.min(await fired(starts), await fired(fails)), { timeout: STEP_TIMEOUT_MS }).toBeGreaterThan(0);
    for (const name of [starts, fails]) await callOk(server.url, "PUT", `/api/scheduler/schedules/${name}/pause`, { key: adminKey });

    const history = page.getByRole("table", { name: "Recent fires" });
    await page.goto(`${server.url}/#/schedules/${fails}`);
    await history.waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await history.locator("tbody tr").first().locator("td").nth(2).textContent()).toBe(`not started No such workflow found by name: ${gone}, version: null`);
    await page.goto(`${server.url}/#/schedules/${starts}`);
    await history.waitFor({ timeout: STEP_TIMEOUT_MS });
    const outcome = (await history.locator("tbody tr").first().locator("td").nth(2).textContent()) ?? "";
    expect(outcome).toMatch(/^started [0-9a-f-]{36}$/);
    await screenshot(page, "schedule-fires");
    // A started one links to its execution.
    await history.getByRole("link", { name: outcome.slice("started ".length) }).click();
    await expect.poll(() => page.locator("h1").textContent(), { timeout: STEP_TIMEOUT_MS }).toContain(ticking);
    for (const name of [starts, fails]) await callOk(server.url, "DELETE", `/api/scheduler/schedules/${name}`, { key: adminKey });
    expect(admin.refusedLoads.slice(refusedBefore)).toEqual([]);
    expect(admin.problems.slice(problemsBefore)).toEqual([]);
  });

  it("stores a secret on the Secrets page, tags it, replaces its value and deletes it, never showing a value", async () => {
    const { page } = admin;
    const [refusedBefore, problemsBefore] = [admin.refusedLoads.length, admin.problems.length];
    const name = `${parentName}_token`;
    const [first, second] = [`first-${Date.now().toString(36)}`, `second-${Date.now().toString(36)}`];
    const user = `${parentName}_secret_user`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name: user, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { http_request: { uri: `${target.url("/count")}/${parentName}-\${workflow.secrets.${name}}`, method: "GET" } } }] },
    });
    await page.getByRole("link", { name: "Secrets", exact: true }).click();
    await page.getByRole("heading", { name: "Add or replace a secret" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("Name").fill(name);
    await page.getByLabel("Value").fill(first);
    await page.getByRole("button", { name: "Save secret" }).click();
    await page.getByRole("heading", { name: `Secret ${name}` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.locator("main").textContent()).toContain(`\${workflow.secrets.${name}}`);

    // Tags: added by key and value, shown as chips.
    const tags = page.getByRole("region", { name: "Tags" });
    await page.getByLabel("Key").fill("team");
    await page.getByLabel("Value", { exact: true }).fill("billing");
    await page.getByRole("button", { name: "Add tag" }).click();
    await expect.poll(() => tags.locator(".tag").allTextContents(), { timeout: STEP_TIMEOUT_MS }).toEqual(["team=billing"]);

    // A workflow sends the value the page stored; then a new value, and the next run sends that.
    const run = async (value: string) => {
      const workflowId = (await callOk(server.url, "POST", `/api/workflow/${user}`, { key: adminKey, body: {} })).text.trim();
      await waitForStatus(server.url, adminKey, workflowId, ["COMPLETED"]);
      expect(await target.hits(`${parentName}-${value}`)).toBe(1);
    };
    await run(first);
    await page.getByLabel("New value").fill(second);
    await page.getByRole("button", { name: "Replace value" }).click();
    await expect.poll(() => page.locator("#status-line").textContent(), { timeout: STEP_TIMEOUT_MS }).toContain(`Replaced the value of ${name}`);
    await run(second);
    await screenshot(page, "secret");

    await page.getByRole("link", { name: "Secrets", exact: true }).first().click();
    const row = page.locator("tr", { has: page.getByRole("link", { name, exact: true }) });
    await expect.poll(() => row.locator("td").allTextContents(), { timeout: STEP_TIMEOUT_MS }).toEqual([name, "team=billing", `\${workflow.secrets.${name}} Copy`]);
    await screenshot(page, "secrets");
    for (const value of [first, second]) expect(await page.content()).not.toContain(value);

    await page.getByRole("link", { name, exact: true }).click();
    await page.getByRole("button", { name: "Remove tag team=billing" }).click();
    await tags.getByText("No tags.").waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.getByRole("heading", { name: "Add or replace a secret" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await expect.poll(() => row.count(), { timeout: STEP_TIMEOUT_MS }).toBe(0);
    expect((await callOk(server.url, "GET", `/api/secrets/${name}/exists`, { key: adminKey })).text).toBe("false");
    expect(admin.refusedLoads.slice(refusedBefore)).toEqual([]);
    expect(admin.problems.slice(problemsBefore)).toEqual([]);
  });

  it("sets an environment variable on the Environment page, which the next run of a workflow reads, and deletes it", async () => {
    const { page } = admin;
    const [refusedBefore, problemsBefore] = [admin.refusedLoads.length, admin.problems.length];
    const name = `${parentName}_base`;
    const flow = `${parentName}_env_user`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name: flow, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { http_request: { uri: `\${workflow.env.${name}}/${parentName}-env`, method: "GET" } } }] },
    });
    await page.getByRole("link", { name: "Environment", exact: true }).click();
    await page.getByRole("heading", { name: "Add or replace a variable" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("Name").fill(name);
    await page.getByLabel("Value").fill(target.url("/count"));
    await page.getByRole("button", { name: "Save variable" }).click();
    const row = page.locator("tr", { has: page.getByRole("cell", { name, exact: true }) });
    await expect.poll(() => row.locator("td").allTextContents(), { timeout: STEP_TIMEOUT_MS }).toEqual([name, target.url("/count"), "", `\${workflow.env.${name}} Copy`, "Delete…"]);
    // Tagged through the API (Orkes' EnvironmentClient), the list shows its tags.
    await callOk(server.url, "PUT", `/api/environment/${name}/tags`, { key: adminKey, body: [{ key: "team", value: "payments" }] });
    await page.getByRole("link", { name: "Executions", exact: true }).click();
    await page.getByRole("link", { name: "Environment", exact: true }).click();
    await expect.poll(() => row.locator("td").nth(2).textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("team=payments");
    await screenshot(page, "environment");
    const workflowId = (await callOk(server.url, "POST", `/api/workflow/${flow}`, { key: adminKey, body: {} })).text.trim();
    await waitForStatus(server.url, adminKey, workflowId, ["COMPLETED"]);
    expect(await target.hits(`${parentName}-env`)).toBe(1);

    await row.getByRole("button", { name: `Delete ${name}` }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await expect.poll(() => row.count(), { timeout: STEP_TIMEOUT_MS }).toBe(0);
    expect((await call(server.url, "GET", `/api/environment/${name}`, { key: adminKey })).status).toBe(404);
    expect(admin.refusedLoads.slice(refusedBefore)).toEqual([]);
    expect(admin.problems.slice(problemsBefore)).toEqual([]);
  });

  it("registers a webhook on the Webhooks page, shows where its events go and that one has verified, keeps its secret on a save", async () => {
    const { page } = admin;
    const [refusedBefore, problemsBefore] = [admin.refusedLoads.length, admin.problems.length];
    const receiver = `${parentName}_paid`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name: receiver, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: "paid", taskReferenceName: "paid", type: "WAIT_FOR_WEBHOOK", inputParameters: { matches: { "$.event.type": "payment.completed", "$.orderId": "${workflow.input.orderId}" } } }] },
    });
    const name = `${parentName}-payments`;
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByRole("link", { name: "New webhook" }).click();
    const editor = page.getByLabel("Webhook (JSON)");
    await expect.poll(() => editor.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain('"HEADER_BASED"');
    await editor.fill(JSON.stringify({ name, verifier: "HEADER_BASED", headers: { "X-Webhook-Secret": "ui-secret" }, receiverWorkflowNamesToVersions: { [receiver]: 1 }, sourcePlatform: "Custom" }));
    await page.getByRole("button", { name: "Register" }).click();
    const row = page.locator("tr", { has: page.getByRole("link", { name, exact: true }) });
    await expect.poll(() => row.textContent(), { timeout: STEP_TIMEOUT_MS }).toContain(`${receiver} v1`);
    const cells = await row.locator("td").allTextContents();
    expect(cells.slice(1)).toEqual(["HEADER_BASED", expect.any(String), "not yet", `${receiver} v1`, "none"]);
    expect(cells[2]!.slice(0, -36)).toBe(`${server.url}/webhook/`);
    const url = cells[2]!;

    // An outside system sends the event: the waiting task completes, and the page shows the URL verified.
    const workflowId = (await callOk(server.url, "POST", `/api/workflow/${receiver}`, { key: adminKey, body: { orderId: "UI-1" } })).text.trim();
    const event = { event: { type: "payment.completed" }, orderId: "UI-1" };
    await expect
      .poll(async () => ((await (await fetch(url, { method: "POST", headers: { "content-type": "application/json", "X-Webhook-Secret": "ui-secret" }, body: JSON.stringify(event) })).json()) as { completedTasks: unknown[] }).completedTasks.length, { timeout: STEP_TIMEOUT_MS })
      .toBe(1);
    await waitForStatus(server.url, adminKey, workflowId, ["COMPLETED"]);

    // Its page: the URL, verified now, and the config with its secret as ***, which a save keeps.
    await page.getByRole("link", { name, exact: true }).click();
    const edited = page.getByLabel("Webhook (JSON)");
    await expect.poll(() => edited.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain('"***"');
    const where = await page.getByRole("region", { name: "Where events are sent" }).textContent();
    expect(where).toContain(url);
    expect(where).toContain("An event has passed its verifier.");
    // The event it received: matched, the execution it completed a task of linked.
    const events = page.getByRole("table", { name: "Recent events" });
    const eventCells = await events.locator("tbody tr").first().locator("td").allTextContents();
    expect(eventCells.slice(1)).toEqual(["yes", workflowId, JSON.stringify(event)]);
    await screenshot(page, "webhook");
    await page.getByRole("link", { name: "Webhooks" }).click();
    await expect.poll(() => row.textContent(), { timeout: STEP_TIMEOUT_MS }).toContain("yes");
    await screenshot(page, "webhooks");
    await page.getByRole("link", { name, exact: true }).click();
    await expect.poll(() => edited.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain('"***"');
    expect(await edited.inputValue()).not.toContain("ui-secret");
    const current = JSON.parse(await edited.inputValue()) as Record<string, unknown>;
    await edited.fill(JSON.stringify({ ...current, sourcePlatform: "Stripe-like" }));
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => row.isVisible(), { timeout: STEP_TIMEOUT_MS }).toBe(true);
    const second = (await callOk(server.url, "POST", `/api/workflow/${receiver}`, { key: adminKey, body: { orderId: "UI-2" } })).text.trim();
    await expect
      .poll(async () => ((await (await fetch(url, { method: "POST", headers: { "content-type": "application/json", "X-Webhook-Secret": "ui-secret" }, body: JSON.stringify({ ...event, orderId: "UI-2" }) })).json()) as { completedTasks: unknown[] }).completedTasks.length, { timeout: STEP_TIMEOUT_MS })
      .toBe(1);
    await waitForStatus(server.url, adminKey, second, ["COMPLETED"]);

    await page.getByRole("link", { name, exact: true }).click();
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.getByText("No webhook is registered yet.").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect((await fetch(url, { method: "POST", headers: { "content-type": "application/json", "X-Webhook-Secret": "ui-secret" }, body: "{}" })).status).toBe(404);
    expect(admin.refusedLoads.slice(refusedBefore)).toEqual([]);
    expect(admin.problems.slice(problemsBefore)).toEqual([]);
  });

  it("registers an event handler on the Event handlers page, lists what it does, makes it inactive and deletes it", async () => {
    const { page } = admin;
    const name = `${parentName}_handler`;
    // The admin's page is shared with the tests before (the task definition's two refused saves are counted there).
    const [refusedBefore, problemsBefore] = [admin.refusedLoads.length, admin.problems.length];
    await page.getByRole("link", { name: "Event handlers" }).click();
    await page.getByRole("link", { name: "New event handler" }).click();
    const editor = page.getByLabel("Event handler (JSON)");
    await expect.poll(() => editor.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain('"complete_task"');
    const handler = { name, event: `conductor:${parentName}:approvals`, active: true, condition: "$.approved", actions: [{ action: "start_workflow", start_workflow: { name: parentName } }] };
    await editor.fill(JSON.stringify(handler));
    await page.getByRole("button", { name: "Register" }).click();
    const row = page.locator("tr", { has: page.getByRole("link", { name, exact: true }) });
    await expect.poll(() => row.textContent(), { timeout: STEP_TIMEOUT_MS }).toContain(`start_workflow ${parentName}`);
    expect(await row.textContent()).toContain("$.approved");
    await screenshot(page, "event-handlers");

    // An EVENT task publishes to it: the handler's page shows what its action did (the workflow it started, linked).
    const publisher = `${parentName}_publisher`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name: publisher, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: "announce", taskReferenceName: "announce", type: "EVENT", sink: "conductor:approvals", inputParameters: { approved: true } }] },
    });
    await callOk(server.url, "PUT", "/api/event", { key: adminKey, body: { ...handler, event: `conductor:${publisher}:approvals` } });
    const published = (await callOk(server.url, "POST", "/api/workflow", { key: adminKey, body: { name: publisher } })).text.trim();
    await waitForStatus(server.url, adminKey, published, ["COMPLETED"]);
    await page.getByRole("link", { name, exact: true }).click();
    const history = page.getByRole("table", { name: "Recent actions" });
    await history.waitFor({ timeout: STEP_TIMEOUT_MS });
    const cells = await history.locator("tbody tr").first().locator("td").allTextContents();
    expect(cells.slice(1, 3)).toEqual([expect.any(String), "start_workflow"]);
    expect(cells[3]).toMatch(/^completed [0-9a-f-]{36}$/);
    await screenshot(page, "event-handler-actions");
    await callOk(server.url, "PUT", "/api/event", { key: adminKey, body: handler });
    await page.getByRole("link", { name: "Event handlers" }).click();

    await page.getByRole("link", { name, exact: true }).click();
    const edited = page.getByLabel("Event handler (JSON)");
    await expect.poll(() => edited.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain(`"name": "${name}"`);
    const current = JSON.parse(await edited.inputValue()) as Record<string, unknown>;
    await edited.fill(JSON.stringify({ ...current, active: false }));
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => row.textContent(), { timeout: STEP_TIMEOUT_MS }).toContain("inactive");
    expect((await callOk(server.url, "GET", `/api/event/handler/${name}`, { key: adminKey })).json()).toMatchObject({ active: false, condition: "$.approved" });

    await page.getByRole("link", { name, exact: true }).click();
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.getByText("No event handler is registered yet.").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect((await call(server.url, "GET", `/api/event/handler/${name}`, { key: adminKey })).status).toBe(404);
    expect(admin.refusedLoads.slice(refusedBefore)).toEqual([]);
    expect(admin.problems.slice(problemsBefore)).toEqual([]);
  });

  it("manages access on the Access pages: defines a role, gives it to an application, a user and a group, makes their keys, stops and revokes one", async () => {
    const { page } = admin;
    const [refusedBefore, problemsBefore] = [admin.refusedLoads.length, admin.problems.length];
    const role = `${parentName}_runners`;
    await page.getByRole("link", { name: "Access" }).click();
    await page.getByRole("heading", { name: "Roles" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("link", { name: "ADMIN", exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("link", { name: "New role" }).click();
    const roleEditor = page.getByLabel("Role (JSON)");
    await expect.poll(() => roleEditor.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain("workflow-operators");
    await roleEditor.fill(JSON.stringify({ name: role, description: "runs the approval workflow", permissions: [{ action: "WORKFLOW_ADMIN", scope: `workflow:${parentName}` }, { action: "WORKFLOW_READ", scope: `workflow:${parentName}` }] }));
    await page.getByRole("button", { name: "Register" }).click();
    const roleRow = page.locator("tr", { has: page.getByRole("link", { name: role, exact: true }) });
    await expect.poll(() => roleRow.textContent(), { timeout: STEP_TIMEOUT_MS }).toContain(`WORKFLOW_ADMIN on workflow:${parentName}, WORKFLOW_READ on workflow:${parentName}`);

    // An application: the role added, a key made and used, stopped, revoked.
    await page.getByRole("navigation", { name: "Access" }).getByRole("link", { name: "Applications" }).click();
    await page.getByLabel("New application").fill(`${parentName}-worker`);
    await page.getByRole("button", { name: "Create", exact: true }).click();
    // Exactly: a heading named "Application" is also found in the list's "Applications", so that wait ended at once,
    // before the new application's page was shown.
    await page.getByRole("heading", { name: "Application", exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.locator(".facts .fact").first().textContent()).toBe(`Name ${parentName}-worker`);
    await page.getByText("No role yet: its keys can sign in and do nothing.").waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("Role", { exact: true }).selectOption(role);
    await page.getByRole("button", { name: "Add role" }).click();
    await page.getByRole("button", { name: `Remove ${role}` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = page.locator(".secret-key");
    await secret.waitFor({ timeout: STEP_TIMEOUT_MS });
    const applicationKey = (await secret.textContent()) ?? "";
    expect(applicationKey).toMatch(/^[0-9a-f-]{36}:.{20,}$/);
    // Access to one more definition, given on the application's page (an Orkes per-resource grant), then taken back.
    const readChild = async () => (await call(server.url, "GET", `/api/metadata/workflow/${childName}`, { key: applicationKey })).status;
    expect(await readChild()).toBe(403);
    const give = async (type: string, name: string) => {
      await page.getByLabel("Definition or secret", { exact: true }).selectOption(type);
      await page.getByLabel("Name", { exact: true }).fill(name);
      await page.getByLabel("Read (a secret: use it in definitions)", { exact: true }).check();
      await page.getByRole("button", { name: "Give access" }).click();
    };
    await give("WORKFLOW_DEF", childName);
    await page.getByRole("button", { name: `Remove access to workflow ${childName}` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await expect.poll(readChild, { timeout: STEP_TIMEOUT_MS }).toBe(200);
    // The right to use a secret in definitions, given the same way.
    await give("SECRET_NAME", `${parentName}_app_secret`);
    await page.getByRole("button", { name: `Remove access to secret ${parentName}_app_secret` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await screenshot(page, "access-application");
    await page.getByRole("button", { name: `Remove access to secret ${parentName}_app_secret` }).click();
    await page.getByRole("button", { name: `Remove access to secret ${parentName}_app_secret` }).waitFor({ state: "detached", timeout: STEP_TIMEOUT_MS });
    await page.getByRole("button", { name: `Remove access to workflow ${childName}` }).click();
    await page.getByText("None given here: its keys have what its roles give.").waitFor({ timeout: STEP_TIMEOUT_MS });
    await expect.poll(readChild, { timeout: STEP_TIMEOUT_MS }).toBe(403);
    const started = await call(server.url, "POST", `/api/workflow/${parentName}`, { key: applicationKey, body: { orderId: "APP-1" } });
    expect(started.status).toBe(200);
    expect((await call(server.url, "POST", `/api/workflow/${childName}`, { key: applicationKey, body: {} })).status).toBe(403);
    const keyRow = page.locator("tr", { hasText: applicationKey.split(":")[0]! });
    expect(await keyRow.textContent()).toContain("active");
    await keyRow.getByRole("button", { name: "Deactivate" }).click();
    await expect.poll(() => keyRow.textContent(), { timeout: STEP_TIMEOUT_MS }).toContain("inactive");
    expect((await call(server.url, "GET", `/api/workflow/${started.text}`, { key: applicationKey })).status).toBe(401);
    await keyRow.getByRole("button", { name: "Revoke…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await page.getByText("No key yet.").waitFor({ timeout: STEP_TIMEOUT_MS });

    // A user: the role given through the JSON editor, a key made for them.
    await page.getByRole("navigation", { name: "Access" }).getByRole("link", { name: "Users" }).click();
    await page.getByLabel("User id").fill("ui-operator");
    await page.getByRole("button", { name: "Open" }).click();
    await page.getByRole("heading", { name: "User ui-operator" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    const assignment = page.getByLabel("Roles and direct permissions (JSON)");
    await expect.poll(() => assignment.inputValue(), { timeout: STEP_TIMEOUT_MS }).toContain('"roles": []');
    await assignment.fill(JSON.stringify({ roles: ["NO_SUCH_ROLE"], directPermissions: [] }));
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText(/no role named NO_SUCH_ROLE/).first().waitFor({ timeout: STEP_TIMEOUT_MS });
    expect((await callOk(server.url, "GET", "/api/security/users/ui-operator", { key: adminKey })).json()).toEqual({ userId: "ui-operator", roles: [], directPermissions: [], groups: [] });
    await assignment.fill(JSON.stringify({ roles: [role], directPermissions: [] }));
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved what ui-operator holds").waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("button", { name: "Create key" }).click();
    const userKey = (await page.locator(".secret-key").textContent()) ?? "";
    expect((await call(server.url, "GET", `/api/workflow/${started.text}`, { key: userKey })).status).toBe(200);
    await page.getByRole("navigation", { name: "Access" }).getByRole("link", { name: "Users" }).click();
    const userRow = page.locator("tr", { has: page.getByRole("link", { name: "ui-operator", exact: true }) });
    await expect.poll(() => userRow.locator("td").allTextContents(), { timeout: STEP_TIMEOUT_MS }).toEqual(["ui-operator", role, "none", "nothing", "1"]);
    await screenshot(page, "access-users");

    // A group: the role given to it reaches the member added.
    await page.getByRole("navigation", { name: "Access" }).getByRole("link", { name: "Groups" }).click();
    await page.getByLabel("New group").fill("ui-ops");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("heading", { name: "Group ui-ops" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("Role", { exact: true }).selectOption(role);
    await page.getByRole("button", { name: "Add role" }).click();
    await page.getByRole("button", { name: `Remove ${role}` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("User id").fill("ui-grouped");
    await page.getByRole("button", { name: "Add member" }).click();
    await page.getByRole("button", { name: "Remove ui-grouped" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await screenshot(page, "access-group");
    const grouped = (await callOk(server.url, "POST", "/api/security/users/ui-grouped/api-keys", { key: adminKey }, 201)).json();
    expect((await call(server.url, "GET", `/api/workflow/${started.text}`, { key: `${grouped.keyId}:${grouped.keySecret}` })).status).toBe(200);
    // The member's groups show on the Users page and on their own page, linked to the group's.
    await page.getByRole("navigation", { name: "Access" }).getByRole("link", { name: "Users" }).click();
    const groupedRow = page.locator("tr", { has: page.getByRole("link", { name: "ui-grouped", exact: true }) });
    await expect.poll(() => groupedRow.locator("td").allTextContents(), { timeout: STEP_TIMEOUT_MS }).toEqual(["ui-grouped", "none", "ui-ops", "nothing", "1"]);
    await groupedRow.getByRole("link", { name: "ui-grouped", exact: true }).click();
    await page.getByRole("heading", { name: "User ui-grouped" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("link", { name: "ui-ops", exact: true }).click();
    await page.getByRole("heading", { name: "Group ui-ops" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByRole("button", { name: "Remove ui-grouped" }).click();
    await page.getByText("No member yet.").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect((await call(server.url, "GET", `/api/workflow/${started.text}`, { key: `${grouped.keyId}:${grouped.keySecret}` })).status).toBe(403);
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.getByText("No group yet.").waitFor({ timeout: STEP_TIMEOUT_MS });

    await page.getByRole("navigation", { name: "Access" }).getByRole("link", { name: "Applications" }).click();
    await page.getByRole("link", { name: `${parentName}-worker`, exact: true }).click();
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.getByLabel("New application").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByRole("link", { name: `${parentName}-worker`, exact: true }).count()).toBe(0);
    // The refused save of an unknown role is the one refused load.
    expect(admin.refusedLoads.slice(refusedBefore)).toEqual([expect.stringContaining("status of 400")]);
    expect(admin.problems.slice(problemsBefore)).toEqual([]);
  });

  it("lists every worker queue on the Worker queues page: what waits in it, its active workers, and each worker's latest poll", async () => {
    const { page } = admin;
    const [refusedBefore, problemsBefore] = [admin.refusedLoads.length, admin.problems.length];
    const taskName = `${parentName}_sort`;
    const flow = `${parentName}_sorting`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name: flow, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: taskName, taskReferenceName: "sort", type: "SIMPLE" }] },
    });
    await callOk(server.url, "PUT", "/api/metadata/taskdefs", { key: adminKey, body: { name: taskName, ownerEmail: "ui@example.com", responseTimeoutSeconds: 60 } });
    for (let run = 0; run < 2; run++) await callOk(server.url, "POST", "/api/workflow", { key: adminKey, body: { name: flow } });
    // A worker of another domain polls (and finds nothing): its queue is listed with it.
    expect((await callOk(server.url, "GET", `/api/tasks/poll/batch/${taskName}?workerid=ui-sorter-1&count=1&timeout=0&domain=ui-east`, { key: adminKey })).json()).toEqual([]);
    await page.getByRole("link", { name: "Worker queues" }).click();
    await page.getByRole("heading", { name: "Worker queues" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    const queueRow = (queueName: string) => page.locator("tr", { has: page.locator("code").getByText(queueName, { exact: true }) }).first();
    const cells = async (queueName: string) => (await queueRow(queueName).locator("td").allTextContents()).slice(0, 5);
    // Queues list themselves in the background as they are first used: Refresh until both are there.
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh" }).click();
      return [await cells(taskName), await cells(`ui-east:${taskName}`)];
    }, { timeout: STEP_TIMEOUT_MS }).toEqual([
      [taskName, taskName, "default", "2", "0"],
      [`ui-east:${taskName}`, taskName, "ui-east", "0", "1"],
    ]);
    const worker = page.locator("tr", { has: page.getByRole("cell", { name: "ui-sorter-1", exact: true }) });
    expect(await worker.locator("td").allTextContents()).toEqual(["ui-sorter-1", `ui-east:${taskName}`, expect.stringMatching(/just now|\d+ s ago/), "active"]);
    await screenshot(page, "worker-queues");
    // The task name leads to its task definition's page (names without one are plain text).
    await queueRow(taskName).getByRole("link", { name: taskName }).click();
    await page.getByLabel("Task definition (JSON)").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(admin.refusedLoads.slice(refusedBefore)).toEqual([]);
    expect(admin.problems.slice(problemsBefore)).toEqual([]);

    // The sorting team's operator, who may read tasks of this name only, sees its queues and workers and nothing else,
    // and may open (not edit) its task definition.
    // Executions, where a login lands, are not for a reader of tasks only (two loads refused).
    const operator = await logInAsNew("sort-operator-1", [{ action: "TASK_READ", scope: `task:${taskName}` }], 2);
    await operator.page.goto(`${server.url}/#/queues`);
    await operator.page.getByRole("heading", { name: "Workers" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect((await operator.page.locator("table[aria-labelledby=queues-heading] tbody tr td:first-child").allTextContents()).sort()).toEqual([taskName, `ui-east:${taskName}`].sort());
    await operator.page.getByRole("link", { name: taskName }).first().click();
    await operator.page.getByLabel("Task definition (JSON)").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await operator.page.getByRole("button", { name: "Save" }).count()).toBe(0);
    expect(operator.problems).toEqual([]);
    expect(operator.refusedLoads).toEqual([expect.stringContaining("status of 403"), expect.stringContaining("status of 403")]);
    await operator.page.context().close();
  });

  it("counts each workflow's runs and how long they took on the Metrics page, and each task type's, linking to the executions", async () => {
    const { page } = admin;
    const [refusedBefore, problemsBefore] = [admin.refusedLoads.length, admin.problems.length];
    const flow = `${parentName}_metered`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name: flow, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: "compute", taskReferenceName: "compute", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "1 + 1" } }] },
    });
    for (let run = 0; run < 3; run++) expect((await callOk(server.url, "POST", `/api/workflow/execute/${flow}/1`, { key: adminKey, body: {} })).json()).toMatchObject({ status: "COMPLETED" });
    await page.getByRole("link", { name: "Metrics" }).click();
    await page.getByRole("heading", { name: "Metrics", exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    const row = page.locator("tr", { has: page.getByRole("link", { name: flow, exact: true }) });
    // Counted with the search rows, within about a second: Refresh until they are.
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh" }).click();
      return (await row.locator("td").allTextContents()).slice(0, 6);
    }, { timeout: STEP_TIMEOUT_MS }).toEqual([flow, "3", "0", "0", "3", "0"]);
    expect(await row.locator("td").nth(6).textContent()).toMatch(/^\d+(\.\d+)? (ms|s)$/);
    const inline = page.locator("tr", { has: page.getByRole("cell", { name: "INLINE", exact: true }) });
    expect(Number(await inline.locator("td").nth(1).textContent())).toBeGreaterThanOrEqual(3);
    await screenshot(page, "metrics");
    await row.getByRole("link", { name: flow, exact: true }).click();
    await page.getByRole("heading", { name: "Executions" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByLabel("Workflow name").inputValue()).toBe(flow);
    expect(admin.refusedLoads.slice(refusedBefore)).toEqual([]);
    expect(admin.problems.slice(problemsBefore)).toEqual([]);
  });

  it("finds tasks on the Tasks page by status, task type and text, each leading to its execution", async () => {
    const { page } = admin;
    const [refusedBefore, problemsBefore] = [admin.refusedLoads.length, admin.problems.length];
    const taskName = `${parentName}_review`;
    const flow = `${parentName}_reviewing`;
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name: flow, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: taskName, taskReferenceName: "review", type: "SIMPLE", inputParameters: { doc: "${workflow.input.doc}" } }] },
    });
    const waiting = (await callOk(server.url, "POST", "/api/workflow", { key: adminKey, body: { name: flow, input: { doc: "ui-spec-7" } } })).text;
    const done = (await callOk(server.url, "POST", "/api/workflow", { key: adminKey, body: { name: flow, input: { doc: "ui-spec-8" } } })).text;
    await callOk(server.url, "POST", `/api/tasks/${done}/review/FAILED`, { key: adminKey, body: { note: "rejected" } });
    await page.getByRole("link", { name: "Tasks", exact: true }).click();
    await page.getByRole("heading", { name: "Tasks", exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("Task type").fill(taskName);
    await page.getByLabel("Status").selectOption("FAILED");
    await page.getByRole("button", { name: "Search" }).click();
    const rows = page.locator("tbody tr");
    // Task rows are written in the background: Refresh until the failed one is there.
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh" }).click();
      return rows.count();
    }, { timeout: STEP_TIMEOUT_MS }).toBe(1);
    expect(await rows.first().getAttribute("data-task-id")).toBeTruthy();
    expect((await rows.first().locator("td").allTextContents()).slice(0, 3)).toEqual([`review ${taskName}`, "FAILED", `${flow}${done}`]);
    // The address keeps the search; free text finds the waiting one by its input.
    expect(page.url()).toContain(`status=FAILED`);
    await page.getByLabel("Status").selectOption("");
    await page.getByLabel("Text").fill("ui-spec-7");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh" }).click();
      return (await rows.first().locator("td").allTextContents()).slice(1, 3);
    }, { timeout: STEP_TIMEOUT_MS }).toEqual(["SCHEDULED", `${flow}${waiting}`]);
    await screenshot(page, "task-search");
    await rows.first().getByRole("link", { name: flow }).click();
    await page.getByRole("heading", { name: flow }).first().waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(page.url()).toContain(`#/executions/${waiting}`);

    // A reviewer who may read tasks of this name only (TASK_READ on task:<name>) searches too, and finds just those.
    // Executions, where a login lands, are not for a reader of tasks only: their search and list of definitions refuse.
    const reviewer = await logInAsNew("task-reviewer-1", [{ action: "TASK_READ", scope: `task:${taskName}` }], 2);
    // The page says so, stops refreshing, and points to the pages a reader of tasks may use.
    await reviewer.page.getByText("Executions are shown to users who may read workflows", { exact: false }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await reviewer.page.getByLabel("Live refresh").isChecked()).toBe(false);
    await reviewer.page.locator(".results").getByRole("link", { name: "Tasks", exact: true }).click();
    await reviewer.page.getByRole("heading", { name: "Tasks", exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    const reviewerRows = reviewer.page.locator("tbody tr");
    await expect.poll(() => reviewerRows.count(), { timeout: STEP_TIMEOUT_MS }).toBe(2);
    expect((await reviewerRows.locator("td:first-child").allTextContents()).sort()).toEqual([`review ${taskName}`, `review ${taskName}`]);
    expect(reviewer.problems).toEqual([]);
    expect(reviewer.refusedLoads).toEqual([expect.stringContaining("status of 403"), expect.stringContaining("status of 403")]);
    await reviewer.page.context().close();

    await callOk(server.url, "DELETE", `/api/workflow/${waiting}`, { key: adminKey });
    expect(admin.refusedLoads.slice(refusedBefore)).toEqual([]);
    expect(admin.problems.slice(problemsBefore)).toEqual([]);
  });

  it("lists a group's HUMAN task in a member's Inbox, who claims it, fills in its user form as fields and submits it", async () => {
    const formName = `${parentName}_form`;
    await callOk(server.url, "POST", "/api/human/template", {
      key: adminKey,
      body: {
        name: formName,
        jsonSchema: { type: "object", properties: { approved: { type: "boolean", title: "Approved" }, comment: { type: "string", title: "Comment" } }, required: ["approved"] },
        templateUI: {},
      },
    });
    await callOk(server.url, "PUT", "/api/groups/ui-reviewers", { key: adminKey, body: { description: "reviewers", roles: [] } });
    await callOk(server.url, "POST", "/api/groups/ui-reviewers/users/reviewer-1", { key: adminKey });
    const { keyId, keySecret } = (await callOk(server.url, "POST", "/api/security/users/reviewer-1/api-keys", { key: adminKey }, 201)).json();
    const flow = `${parentName}_refund`;
    const settings = { displayName: "Approve the refund", userFormTemplate: { name: formName }, assignments: [{ assignee: { user: "ui-reviewers", userType: "CONDUCTOR_GROUP" }, slaMinutes: 60 }] };
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name: flow, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: "approve_refund", taskReferenceName: "approve_refund", type: "HUMAN", inputParameters: { amount: "${workflow.input.amount}", __humanTaskDefinition: settings } }] },
    });
    const started = (await callOk(server.url, "POST", "/api/workflow", { key: adminKey, body: { name: flow, input: { amount: 42 } } })).text;

    const reviewer = await openPage(browser);
    const { page } = reviewer;
    await logIn(page, `${keyId}:${keySecret}`);
    await page.getByRole("link", { name: "Inbox", exact: true }).click();
    await page.getByRole("heading", { name: "Inbox" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    const row = page.locator("tbody tr", { hasText: "Approve the refund" });
    // The list is written in the background: Refresh until the task is there.
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh" }).click();
      return row.count();
    }, { timeout: STEP_TIMEOUT_MS }).toBe(1);
    expect((await row.locator("td").allTextContents()).slice(0, 4)).toEqual(["Approve the refund", "ASSIGNED", "ui-reviewers (group)", ""]);
    await screenshot(page, "inbox");
    // Filtered by workflow name and by text, the filters kept in the address (with the tab's own).
    await page.getByLabel("Workflow name").fill(`${flow}_other`);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("No task matches.").waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("Workflow name").fill(flow);
    // As the service reads it: case ignored, texts joined by AND.
    await page.getByLabel("Text", { exact: true }).fill("THE refund AND approve");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => row.count(), { timeout: STEP_TIMEOUT_MS }).toBe(1);
    expect(new URL(page.url()).hash).toBe(`#/inbox?workflowName=${flow}&text=THE+refund+AND+approve`);
    expect(await page.getByRole("navigation", { name: "Pages" }).textContent()).toContain("1–1 of 1");
    await page.getByRole("link", { name: "Mine, all states" }).click();
    await expect.poll(() => row.count(), { timeout: STEP_TIMEOUT_MS }).toBe(1);
    await row.getByRole("link", { name: "Approve the refund" }).click();
    await page.getByRole("heading", { name: "Approve the refund" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByLabel("Approved").isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Claim" }).click();
    await expect.poll(() => page.getByLabel("Approved").isDisabled(), { timeout: STEP_TIMEOUT_MS }).toBe(false);
    await page.getByLabel("Comment").fill("receipt matches");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved.").waitFor({ timeout: STEP_TIMEOUT_MS });
    // Submitted unanswered (no "No" by default): the service refuses it, and the task still waits.
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByText(/does not match its user form's schema/).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.getByLabel("Approved").selectOption({ label: "Yes" });
    await screenshot(page, "human-task");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByText("Submitted: the workflow goes on.").waitFor({ timeout: STEP_TIMEOUT_MS });
    await expect.poll(async () => (await callOk(server.url, "GET", `/api/workflow/${started}`, { key: adminKey })).json().status, { timeout: STEP_TIMEOUT_MS }).toBe("COMPLETED");
    const task = (await callOk(server.url, "GET", `/api/workflow/${started}?includeTasks=true`, { key: adminKey })).json().tasks[0];
    expect(task.outputData).toEqual({ approved: true, comment: "receipt matches" });
    expect(reviewer.problems).toEqual([]);
  });

  it("offers a read-only user no action, and the narrow layout does not overflow", async () => {
    await callOk(server.url, "POST", "/api/security/roles", {
      key: adminKey,
      body: { name: "ui-viewers", description: "read workflows", permissions: [{ action: "WORKFLOW_READ", scope: "*" }, { action: "TASK_READ", scope: "*" }] },
    }, 201);
    await callOk(server.url, "PUT", "/api/security/users/viewer-1/roles", { key: adminKey, body: { roles: ["ui-viewers"], directPermissions: [] } });
    const { keyId, keySecret } = (await callOk(server.url, "POST", "/api/security/users/viewer-1/api-keys", { key: adminKey }, 201)).json();
    const started = (await callOk(server.url, "POST", `/api/workflow/${parentName}`, { key: adminKey, body: { orderId: "B-2" } })).text;

    const viewer = await openPage(browser, { width: 390, height: 844 });
    const { page } = viewer;
    await logIn(page, `${keyId}:${keySecret}`);
    await page.goto(`${server.url}/#/executions/${started}`);
    await expect.poll(() => step(page, "approve").getAttribute("data-status"), { timeout: STEP_TIMEOUT_MS }).toBe("IN_PROGRESS");
    await step(page, "approve").click();
    await page.getByRole("heading", { name: /approve/ }).waitFor();
    expect(await page.getByText("Your permissions allow reading this workflow only.").count()).toBe(1);
    for (const action of ["Pause", "Upgrade…", "Terminate", "Complete…", "Fail…", "Skip…", "Jump here…", "Rerun from here"]) {
      expect(await page.getByRole("button", { name: action }).count(), action).toBe(0);
    }
    expect(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")).toBe(true);
    await screenshot(page, "execution-read-only-narrow");

    await page.goto(`${server.url}/#/definitions`);
    await page.getByRole("link", { name: parentName, exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
    // Registering one needs METADATA_ADMIN at `*` or WORKFLOW_WRITE at some scope.
    expect(await page.getByRole("link", { name: "New definition" }).count()).toBe(0);
    await page.getByRole("link", { name: parentName, exact: true }).click();
    await page.getByRole("heading", { name: `${parentName} v1` }).waitFor();
    expect(await page.getByRole("button", { name: "Run…" }).count()).toBe(0);
    expect(await page.getByRole("link", { name: "Edit" }).count()).toBe(0);
    // Its edit address (a bookmark, a shared link) shows the JSON read-only, saying what saving needs, with no Save.
    await page.goto(`${server.url}/#/definitions/${parentName}/1/edit`);
    await page.getByText(`Read only: Saving this workflow definition needs METADATA_ADMIN on *, or WORKFLOW_WRITE on workflow:${parentName}.`).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByLabel("Workflow definition (JSON)").getAttribute("readonly")).toBe("");
    expect(await page.getByRole("button", { name: "Save" }).count()).toBe(0);
    // Webhooks are read with WORKFLOW_READ on every workflow but written with METADATA_ADMIN or WORKFLOW_WRITE.
    await page.goto(`${server.url}/#/webhooks`);
    await page.getByText(/One URL per sender/).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByRole("link", { name: "New webhook" }).count()).toBe(0);
    // The live list keeps the keyboard focus where it was while it refreshes a running execution's row.
    await page.goto(`${server.url}/#/executions`);
    const link = page.locator(`tr[data-workflow-id="${started}"] a`);
    await link.focus();
    const updated = page.locator(".live .help");
    const firstUpdate = await updated.textContent();
    await expect.poll(() => updated.textContent(), { timeout: STEP_TIMEOUT_MS }).not.toBe(firstUpdate);
    expect(await page.evaluate('document.activeElement?.getAttribute("href")')).toBe(`#/executions/${started}`);
    // Nothing to select where nothing may be acted on.
    expect(await page.getByRole("checkbox", { name: /^Select/ }).count()).toBe(0);
    expect(await page.getByRole("toolbar", { name: "Selected executions" }).count()).toBe(0);

    // Event handlers are for system admins: the page says so and offers nothing (its read was the one refused load).
    await page.goto(`${server.url}/#/events`);
    await page.getByText("Event handlers are for system admins.").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByRole("link", { name: "New event handler" }).count()).toBe(0);

    // Managing access needs USER_ADMIN: the page says so (its read is the second refused load).
    await page.goto(`${server.url}/#/access`);
    await page.getByText("Managing access needs USER_ADMIN.").waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(await page.getByRole("link", { name: "New role" }).count()).toBe(0);

    // The API refuses it too: hiding is a courtesy, not the protection.
    expect((await call(server.url, "DELETE", `/api/workflow/${started}`, { key: `${keyId}:${keySecret}` })).status).toBe(403);
    expect(viewer.problems).toEqual([]);
    expect(viewer.refusedLoads).toEqual([expect.stringContaining("status of 403"), expect.stringContaining("status of 403")]);
  });

  it("opens Conductor's own UI links (conductor-oss/conductor ui/src/App.jsx paths) on its pages: an execution, a definition's latest version, the lists", async () => {
    const name = `${parentName}_links`;
    const definition = { name, version: 1, schemaVersion: 2, ownerEmail: "ui@example.com", tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT" }] };
    await callOk(server.url, "POST", "/api/metadata/workflow", { key: adminKey, body: definition });
    await callOk(server.url, "POST", "/api/metadata/workflow", { key: adminKey, body: { ...definition, version: 2 } });
    const id = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text.trim();
    const redirected = async (path: string) => (await fetch(`${server.url}${path}`, { redirect: "manual" })).headers.get("location");
    expect(await redirected(`/execution/${id}`)).toMatch(new RegExp(`/#/executions/${id}$`));
    expect(await redirected(`/execution/${id}/some-task-id`)).toMatch(new RegExp(`/#/executions/${id}$`));
    expect(await redirected(`/workflowDef/${name}/1`)).toMatch(new RegExp(`/#/definitions/${name}/1$`));
    expect(await redirected("/workflowDefs")).toMatch(/\/#\/definitions$/);
    expect(await redirected("/taskDef/some_task")).toMatch(/\/#\/taskdefs\/some_task$/);
    expect(await redirected("/taskQueue/some_task")).toMatch(/\/#\/queues$/);
    // Nothing is looked up before the login: an unknown execution redirects alike.
    expect(await redirected("/execution/not-an-id")).toMatch(/\/#\/executions\/not-an-id$/);

    const opened = await openPage(browser);
    await logIn(opened.page, adminKey);
    await opened.page.goto(`${server.url}/execution/${id}`);
    await expect.poll(() => opened.page.url(), { timeout: STEP_TIMEOUT_MS }).toContain(`#/executions/${id}`);
    await workflowStatus(opened.page).waitFor({ timeout: STEP_TIMEOUT_MS });
    // Without a version, the latest one, as Conductor's UI shows /workflowDef/{name}.
    await opened.page.goto(`${server.url}/workflowDef/${name}`);
    await expect.poll(() => opened.page.url(), { timeout: STEP_TIMEOUT_MS }).toContain(`#/definitions/${name}`);
    await opened.page.getByRole("heading", { name: `${name} v2` }).waitFor({ timeout: STEP_TIMEOUT_MS });
    expect(opened.problems).toEqual([]);
    await opened.page.context().close();
    await callOk(server.url, "DELETE", `/api/workflow/${id}`, { key: adminKey });
  });

});
