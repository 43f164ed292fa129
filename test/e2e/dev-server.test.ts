/// <reference types="node" />
/**
 * End to end against the real `wrangler dev`, through plain fetch, as a curl user would.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyMigrations,
  call,
  callOk,
  copyProject,
  freePort,
  generateAdminKey,
  removeDir,
  sleep,
  startDevServer,
  startTarget,
  tempDir,
  waitForStatus,
  type DevServer,
  type Target,
} from "./dev-server";

const unique = (label: string) => `${label}_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

let project: string;
let target: Target;

beforeAll(async () => {
  project = copyProject();
  target = await startTarget();
});

afterAll(async () => {
  await target?.close();
  removeDir(project);
});

/** The README example: three HTTP tasks chaining outputs into inputs through expressions. */
function readmeWorkflow(name: string) {
  return {
    name,
    description: "README example: three chained HTTP tasks",
    version: 1,
    schemaVersion: 2,
    ownerEmail: "e2e@example.com",
    inputParameters: ["key", "x"],
    tasks: [
      {
        name: "step1",
        taskReferenceName: "step1",
        type: "HTTP",
        inputParameters: { http_request: { uri: target.url("/count/${workflow.input.key}?x=${workflow.input.x}"), method: "GET" } },
      },
      {
        name: "step2",
        taskReferenceName: "step2",
        type: "HTTP",
        inputParameters: {
          http_request: { uri: target.url("/count/${workflow.input.key}"), method: "POST", body: { n: "${step1.output.response.body.n}", x: "${workflow.input.x}" } },
        },
      },
      {
        name: "step3",
        taskReferenceName: "step3",
        type: "HTTP",
        inputParameters: { http_request: { uri: target.url("/count/${workflow.input.key}?previous=${step2.output.response.body.n}"), method: "GET" } },
      },
    ],
    outputParameters: {
      first: "${step1.output.response.body.n}",
      second: "${step2.output.response.body.n}",
      third: "${step3.output.response.body.n}",
      sentToSecond: "${step2.output.response.body.body}",
      previous: "${step3.output.response.body.query.previous}",
    },
  };
}

/** Checks the output of a finished README workflow run with input `{key, x}`. */
function expectReadmeOutput(output: Record<string, unknown>, x: number) {
  expect(output).toMatchObject({ first: 1, second: 2, third: 3, previous: "2" });
  expect(JSON.parse(String(output["sentToSecond"]))).toEqual({ n: 1, x });
}

describe("wrangler dev", () => {
  const adminKey = generateAdminKey();
  let persistTo: string;
  let server: DevServer;

  beforeAll(async () => {
    persistTo = tempDir("state");
    await applyMigrations(project, persistTo);
    server = await startDevServer({ root: project, persistTo, adminKey });
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(persistTo);
  });

  it("GET /health answers without a key; the API refuses a request without one with the contract's error body", async () => {
    const health = await call(server.url, "GET", "/health");
    expect(health.status).toBe(200);
    expect(health.json()).toEqual({ status: "ok" });

    const anonymous = await call(server.url, "GET", "/api/metadata/workflow");
    expect(anonymous.status, anonymous.text).toBe(401);
    expect(anonymous.contentType).toContain("application/json");
    const body = anonymous.json();
    expect(body).toMatchObject({ status: 401, error: expect.stringMatching(/^[A-Z_]+$/), message: expect.any(String) });
    expect(body.message.length).toBeGreaterThan(0);

    const wrongSecret = await call(server.url, "GET", "/api/metadata/workflow", { key: `${adminKey.split(":")[0]}:not-the-secret` });
    expect(wrongSecret.status, wrongSecret.text).toBe(401);
    expect(wrongSecret.json()).toMatchObject({ status: 401, error: expect.any(String), message: expect.any(String) });

    const admin = await call(server.url, "GET", "/api/metadata/workflow", { key: adminKey });
    expect(admin.status, admin.text).toBe(200);
    expect(Array.isArray(admin.json())).toBe(true);
  });

  it("runs the README example: register, start, poll until COMPLETED; the target sees exactly three calls", async () => {
    const name = unique("readme");
    await callOk(server.url, "POST", "/api/metadata/workflow", { key: adminKey, body: readmeWorkflow(name) });
    const stored = (await callOk(server.url, "GET", `/api/metadata/workflow/${name}`, { key: adminKey })).json();
    expect(stored).toMatchObject({ name, version: 1 });

    const key = unique("readme-run");
    const started = await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: { key, x: 42 } });
    expect(started.contentType).toContain("text/plain");
    const workflowId = started.text;
    expect(workflowId).toMatch(/^[\w-]+$/);

    const done = await waitForStatus(server.url, adminKey, workflowId, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"]);
    expect(done.status, JSON.stringify(done).slice(0, 3000)).toBe("COMPLETED");
    expect(done).toMatchObject({ workflowId, workflowName: name, workflowVersion: 1, input: { key, x: 42 } });
    expectReadmeOutput(done.output, 42);
    expect(await target.hits(key)).toBe(3);
    expect(target.requests.filter((request) => request.url.startsWith(`/count/${key}`)).map((request) => request.method)).toEqual(["GET", "POST", "GET"]);

    const withTasks = (await callOk(server.url, "GET", `/api/workflow/${workflowId}?includeTasks=true`, { key: adminKey })).json();
    expect(withTasks.tasks.map((task: { referenceTaskName: string; status: string }) => [task.referenceTaskName, task.status])).toEqual([
      ["step1", "COMPLETED"],
      ["step2", "COMPLETED"],
      ["step3", "COMPLETED"],
    ]);
    expect(withTasks.tasks[0].inputData).toEqual({ http_request: { uri: target.url(`/count/${key}?x=42`), method: "GET" } });

    // Its start and ending reach the Prometheus metrics once its search row is written (within about a second).
    const counted = `workflow_completed_seconds_count{workflowName="${name}",status="COMPLETED"} 1`;
    let metrics = "";
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && !metrics.includes(counted); await new Promise((done) => setTimeout(done, 200))) {
      metrics = (await callOk(server.url, "GET", "/api/metrics", { key: adminKey })).text;
    }
    expect(metrics).toContain(counted);
    expect(metrics).toContain(`workflow_started_total{workflowName="${name}"} 1`);
  });

  it("POST /api/workflow/execute/{name} answers with the COMPLETED workflow", async () => {
    const name = unique("execute");
    await callOk(server.url, "POST", "/api/metadata/workflow", { key: adminKey, body: readmeWorkflow(name) });
    const key = unique("execute-run");
    const response = await callOk(server.url, "POST", `/api/workflow/execute/${name}`, { key: adminKey, body: { input: { key, x: 7 } } });
    expect(response.contentType).toContain("application/json");
    const workflow = response.json();
    expect(workflow.status, response.text.slice(0, 3000)).toBe("COMPLETED");
    expect(workflow.workflowName).toBe(name);
    expect(workflow.tasks).toHaveLength(3);
    expectReadmeOutput(workflow.output, 7);
    expect(await target.hits(key)).toBe(3);
    const again = (await callOk(server.url, "GET", `/api/workflow/${workflow.workflowId}`, { key: adminKey })).json();
    expect(again.status).toBe("COMPLETED");
  });

  it("a WAIT_FOR_WEBHOOK task is completed by a signed callback posted to its callback URL, and a child workflow runs", async () => {
    const child = unique("child");
    const name = unique("hooked");
    const key = unique("hooked-run");
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: { name: child, version: 1, schemaVersion: 2, tasks: [{ name: "c", taskReferenceName: "c", type: "HTTP", inputParameters: { uri: target.url(`/count/${key}-child`), method: "GET" } }], outputParameters: { fromChild: "${workflow.input.paid}" } },
    });
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name,
        version: 1,
        schemaVersion: 2,
        tasks: [
          { name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: { timeoutSeconds: 60, headers: { "X-Sender": "payments" }, signature: { secret: "e2e-secret", header: "X-Signature", prefix: "sha256=" } } },
          { name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", inputParameters: { subWorkflowParam: { name: child }, paid: "${hook.output.paid}" } },
        ],
        outputParameters: { paid: "${sub.output.fromChild}" },
      },
    });
    const workflowId = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text;
    let callbackUrl: string | undefined;
    const deadline = Date.now() + 20_000;
    while (!callbackUrl) {
      const workflow = (await callOk(server.url, "GET", `/api/workflow/${workflowId}`, { key: adminKey })).json();
      callbackUrl = workflow.tasks[0]?.status === "IN_PROGRESS" ? workflow.tasks[0].callbackUrl : undefined;
      if (!callbackUrl && Date.now() > deadline) throw new Error(`the webhook task never waited: ${JSON.stringify(workflow)}`);
      if (!callbackUrl) await sleep(20);
    }
    expect(callbackUrl.startsWith(`${server.url}/api/tasks/webhook/${workflowId}/hook/`)).toBe(true);

    const body = JSON.stringify({ status: "COMPLETED", output: { paid: "yes" } });
    const { createHmac } = await import("node:crypto");
    const signature = `sha256=${createHmac("sha256", "e2e-secret").update(body).digest("hex")}`;
    const forged = await fetch(callbackUrl, { method: "POST", headers: { "content-type": "application/json", "x-sender": "payments", "x-signature": "sha256=00" }, body });
    expect(forged.status).toBe(401);
    const accepted = await fetch(callbackUrl, { method: "POST", headers: { "content-type": "application/json", "x-sender": "payments", "x-signature": signature }, body });
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    expect(await accepted.json()).toMatchObject({ workflowId, status: "COMPLETED" });

    const done = await waitForStatus(server.url, adminKey, workflowId, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"]);
    expect(done.status, JSON.stringify(done).slice(0, 3000)).toBe("COMPLETED");
    expect(done.output).toEqual({ paid: "yes" });
    expect(await target.hits(`${key}-child`)).toBe(1);
  });

  it("one workflow completes the task another waits in (UPDATE_TASK), then terminates a third (TERMINATE_WORKFLOW)", async () => {
    const waiter = unique("waiter");
    const coordinator = unique("coordinator");
    const key = unique("coordinated");
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name: waiter, version: 1, schemaVersion: 2,
        tasks: [
          { name: "gate", taskReferenceName: "gate", type: "WAIT", inputParameters: {} },
          { name: "after", taskReferenceName: "after", type: "HTTP", inputParameters: { uri: target.url(`/count/${key}`), method: "GET" } },
        ],
        outputParameters: { opened: "${gate.output.by}" },
      },
    });
    await callOk(server.url, "POST", "/api/metadata/workflow", {
      key: adminKey,
      body: {
        name: coordinator, version: 1, schemaVersion: 2,
        tasks: [
          { name: "open", taskReferenceName: "open", type: "UPDATE_TASK", inputParameters: { taskStatus: "COMPLETED", workflowId: "${workflow.input.opened}", taskRefName: "gate", taskOutput: { by: "coordinator" } } },
          { name: "stop", taskReferenceName: "stop", type: "TERMINATE_WORKFLOW", inputParameters: { workflowId: ["${workflow.input.stopped}"], terminationReason: "not needed" } },
        ],
      },
    });
    const opened = (await callOk(server.url, "POST", `/api/workflow/${waiter}`, { key: adminKey, body: {} })).text;
    const stopped = (await callOk(server.url, "POST", `/api/workflow/${waiter}`, { key: adminKey, body: {} })).text;
    const run = (await callOk(server.url, "POST", `/api/workflow/execute/${coordinator}`, { key: adminKey, body: { input: { opened, stopped } } })).json();
    expect(run.status, JSON.stringify(run).slice(0, 3000)).toBe("COMPLETED");
    expect(run.tasks[1].outputData).toEqual({ terminatedWorkflows: [stopped], notTerminated: {} });
    const done = await waitForStatus(server.url, adminKey, opened, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"]);
    expect(done).toMatchObject({ status: "COMPLETED", output: { opened: "coordinator" } });
    expect((await callOk(server.url, "GET", `/api/workflow/${stopped}`, { key: adminKey })).json()).toMatchObject({ status: "TERMINATED", reasonForIncompletion: "not needed" });
    expect(await target.hits(key)).toBe(1);
  });

  it("the admin key never appears in wrangler's output", () => {
    expect(server.group.output).not.toContain(adminKey.split(":")[1]);
  });
});

/** An HTTP task GETting `path` on the target. */
const targetCall = (ref: string, path: string) => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { http_request: { uri: target.url(path), method: "GET" } } });

/**
 * Registers `name` (its tasks `tasks`, with `outputParameters` when given), starts it and waits until the target has
 * seen `awaited` (a path and query): the workflow is then in the middle of that call.
 */
async function startUntilCalled(server: DevServer, adminKey: string, name: string, tasks: object[], awaited: string, outputParameters?: object): Promise<string> {
  const body = { name, version: 1, schemaVersion: 2, ownerEmail: "e2e@example.com", tasks, ...(outputParameters === undefined ? {} : { outputParameters }) };
  await callOk(server.url, "POST", "/api/metadata/workflow", { key: adminKey, body });
  const workflowId = (await callOk(server.url, "POST", `/api/workflow/${name}`, { key: adminKey, body: {} })).text;
  const deadline = Date.now() + 20_000;
  while (!target.requests.some((request) => request.url === awaited)) {
    if (Date.now() > deadline) throw new Error(`the target never saw ${awaited}: ${(await call(server.url, "GET", `/api/workflow/${workflowId}`, { key: adminKey })).text}`);
    await sleep(10);
  }
  return workflowId;
}

describe("durability across a dev-server restart", () => {
  const adminKey = generateAdminKey();
  let persistTo: string;
  let server: DevServer | undefined;

  beforeAll(async () => {
    persistTo = tempDir("state");
    await applyMigrations(project, persistTo);
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(persistTo);
  });

  it("a workflow whose HTTP call was in flight when wrangler was killed completes after wrangler starts again", async () => {
    server = await startDevServer({ root: project, persistTo, adminKey });
    const port = server.port;
    const key = unique("durable-run");
    const slow = `/slow?ms=1500&run=${key}`;
    const tasks = [targetCall("before", `/count/${key}-before`), targetCall("slow", slow), targetCall("after", `/count/${key}-after`)];
    const outputParameters = { before: "${before.output.response.body.n}", slept: "${slow.output.response.body.slept}", after: "${after.output.response.body.n}" };
    const workflowId = await startUntilCalled(server, adminKey, unique("durable"), tasks, slow, outputParameters);
    const slowCalls = () => target.requests.filter((request) => request.url === slow).length;
    const callSeenAt = Date.now();
    // Crash: the whole group (wrangler and workerd) dies while the target is still answering the call.
    const stopped = server.stop("SIGKILL");
    const killedAfterMs = Date.now() - callSeenAt;
    await stopped;
    server = undefined;
    expect(killedAfterMs, "the kill must land while the 1.5 s call is in flight").toBeLessThan(1_500);
    expect(await target.hits(`${key}-after`)).toBe(0);

    server = await startDevServer({ root: project, persistTo, adminKey, port });
    const done = await waitForStatus(server.url, adminKey, workflowId, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"], 60_000);
    expect(done.status, JSON.stringify(done).slice(0, 3000)).toBe("COMPLETED");
    expect(done.output).toEqual({ before: 1, slept: 1500, after: 1 });
    expect(await target.hits(`${key}-before`)).toBe(1);
    expect(await target.hits(`${key}-after`)).toBe(1);
    // The interrupted call's answer never arrived: completing required calling again after the restart.
    expect(slowCalls()).toBeGreaterThanOrEqual(2);
  });

  it("when a workerd of the dev server dies, it says so and starts again, and the workflow goes on; the third loss in a minute ends it", async () => {
    // The server the test before started again serves here (a process of its own, no runtime lost yet); run alone,
    // or after that test failed to start it, this one starts one.
    server ??= await startDevServer({ root: project, persistTo, adminKey });
    const running = server;
    const key = unique("runtime-lost");
    const slow = `/slow?ms=1500&run=${key}`;
    const workflowId = await startUntilCalled(running, adminKey, unique("runtime_lost"), [targetCall("slow", slow), targetCall("after", `/count/${key}-after`)], slow);
    /**
     * Kills a workerd of the server, as the kernel's OOM killer would: the Worker's, or wrangler's dev proxy's (which
     * listens on the server's port), once it runs: a restarted server is ready (its proxy answers) a moment before the
     * Worker's runtime is started.
     */
    const killRuntime = async (which: "worker" | "proxy") => {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const members = running.group.liveMembers().map((pid) => ({ pid, command: readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ") }));
        const runtime = members.find(({ command }) => command.includes("workerd") && command.includes(`entry=127.0.0.1:${running.port} `) === (which === "proxy"));
        if (runtime !== undefined) {
          process.kill(runtime.pid, "SIGKILL");
          return runtime.pid;
        }
        if (Date.now() > deadline) throw new Error(`no ${which} workerd among ${members.map(({ command }) => command).join("; ")}`);
        await sleep(100);
      }
    };
    const lost = await killRuntime("worker");
    await running.group.waitForOutput(new RegExp(`the local runtime \\(workerd, pid ${lost}\\) stopped unexpectedly \\(SIGKILL\\)`), 10_000);
    await running.group.waitForOutput(/(ready http[^\n]*\n[\s\S]*){2}/, 30_000);
    const done = await waitForStatus(running.url, adminKey, workflowId, ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"], 60_000);
    expect(done.status, JSON.stringify(done).slice(0, 3000)).toBe("COMPLETED");
    expect(await target.hits(`${key}-after`)).toBe(1);

    // The dev proxy's runtime, which the requests reach first: the server starts again too, and answers.
    const proxy = await killRuntime("proxy");
    await running.group.waitForOutput(new RegExp(`the local runtime \\(workerd, pid ${proxy}\\) stopped unexpectedly`), 10_000);
    await running.group.waitForOutput(/(ready http[^\n]*\n[\s\S]*){3}/, 30_000);
    expect((await call(running.url, "GET", `/api/workflow/${workflowId}`, { key: adminKey })).status).toBe(200);

    // A runtime that keeps dying would loop: the third loss within a minute stops the server, exit code 1.
    await killRuntime("worker");
    expect(await running.group.exited).toBe(1);
    expect(running.group.output).toContain("the local runtime stopped 3 times within a minute; giving up");
    expect(await running.group.waitUntilGone(15_000)).toBe(true);
    server = undefined;
  });
});

describe("the harness's dev server", () => {
  it("fails to start on a port another server holds, rather than answer with that server (whose /health says 200)", async () => {
    const port = await freePort();
    const other = createServer((_request, response) => response.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}'));
    await new Promise<void>((done) => other.listen(port, "127.0.0.1", done));
    const persistTo = tempDir("busy-port");
    try {
      // wrangler waits without a word on a port in use: the time allowed is all it takes to fail.
      await expect(startDevServer({ root: project, persistTo, adminKey: generateAdminKey(), port, timeoutMs: 8_000 })).rejects.toThrow(/^no \/ready /);
    } finally {
      other.closeAllConnections();
      await new Promise((done) => other.close(done));
      removeDir(persistTo);
    }
  });
});
