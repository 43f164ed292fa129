import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import type { IRequest } from "itty-router";
import { addIn, applyQuery, MAX_QUERY_CLAUSES, searchExecutions, whereOf, type Filter } from "../../src/worker/search";
import { searchTasks } from "../../src/worker/task-search";
import { MAX_CORRELATED_WORKFLOWS } from "../../src/worker/lookups";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, boundStatementsOf, eventually, getWorkflow, httpTask, queryPlan, register, startWorkflow, target, waitFor, waitForIndexRow, type WorkflowJson } from "./helpers";

type SearchResult = { totalHits: number; results: Array<JsonObject & { workflowId: string; status: string }> };

/** Polls search until `accept` holds (the index is written off the hot path, within a moment). */
async function searchUntil(query: string, accept: (result: SearchResult) => boolean): Promise<SearchResult> {
  return eventually(() => apiOk<SearchResult>("GET", `/api/workflow/search?${query}`), accept, `search ${query} matching`, 10_000);
}

describe("search", () => {
  it("finds running and finished executions by name, status, correlation id and free text", async () => {
    await register({ name: "searchable", tasks: [httpTask("gate", { uri: target("/echo/s"), method: "GET" }, { asyncComplete: true })] });
    const running = await startWorkflow("searchable", {}, "?correlationId=order-17");
    const finished = await startWorkflow("searchable", {}, "?correlationId=order-18");
    await waitFor(finished, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${finished}/gate/COMPLETED`, {});
    await waitFor(finished, ["COMPLETED"]);

    const byRunning = await searchUntil("workflowName=searchable&status=RUNNING", (result) => result.results.some((row) => row.workflowId === running));
    expect(byRunning.results.map((row) => row.workflowId)).not.toContain(finished);
    const byDone = await searchUntil("status=COMPLETED&workflowName=searchable", (result) => result.totalHits === 1);
    expect(byDone.results[0]).toMatchObject({ workflowId: finished, workflowType: "searchable", version: 1, status: "COMPLETED", correlationId: "order-18" });
    // Conductor's WorkflowSummary sizes: of the input and output texts it shows.
    expect(byDone.results[0]).toMatchObject({ inputSize: String(byDone.results[0]!["input"]).length, outputSize: String(byDone.results[0]!["output"]).length });
    expect(typeof byDone.results[0]!["startTime"]).toBe("string");

    const byCorrelation = await apiOk<SearchResult>("GET", "/api/workflow/search?correlationId=order-17");
    expect(byCorrelation.results.map((row) => row.workflowId)).toEqual([running]);
    const byText = await apiOk<SearchResult>("GET", `/api/workflow/search?freeText=${running.slice(0, 13)}`);
    expect(byText.results.map((row) => row.workflowId)).toEqual([running]);
    // In double quotes, as the Conductor UI asks for free text: the text inside, taken literally (a * too).
    const quoted = await apiOk<SearchResult>("GET", `/api/workflow/search?freeText=${encodeURIComponent('"order-17"')}`);
    expect(quoted.results.map((row) => row.workflowId)).toEqual([running]);
    expect((await apiOk<SearchResult>("GET", `/api/workflow/search?freeText=${encodeURIComponent('"order-1*"')}`)).totalHits).toBe(0);
    expect((await apiOk<SearchResult>("GET", `/api/workflow/search?workflowName=searchable&freeText=${encodeURIComponent("order-1*")}`)).totalHits).toBe(2);
    const byQuery = await apiOk<SearchResult>("GET", `/api/workflow/search?query=${encodeURIComponent("workflowType IN (searchable) AND status IN (COMPLETED,RUNNING)")}`);
    expect(byQuery.totalHits).toBe(2);
    // `*` is everything, as in Conductor (clients send it beside a freeText).
    expect((await apiOk<SearchResult>("GET", `/api/workflow/search?query=*&freeText=${encodeURIComponent("order-1*")}&workflowName=searchable`)).totalHits).toBe(2);
    expect((await apiOk<JsonObject>("GET", "/api/scheduler/search/executions?query=*"))).toHaveProperty("totalHits");
    expect((await api("GET", "/api/tasks/search?query=*")).status).toBe(200);
    const paged = await apiOk<SearchResult>("GET", "/api/workflow/search?workflowName=searchable&size=1&start=1&sort=startTime:ASC");
    expect(paged.totalHits).toBe(2);
    expect(paged.results.map((row) => row.workflowId)).toEqual([finished]);
  });

  it("sorts by any column the UI shows (workflowId, correlationId, version, executionTime...), as Conductor's index does", async () => {
    const gate = [httpTask("gate", { uri: target("/echo/sorted"), method: "GET" }, { asyncComplete: true })];
    await register({ name: "sorted", tasks: gate });
    await register({ name: "sorted", version: 2, tasks: gate });
    const ids = [await startWorkflow("sorted", {}, "?correlationId=c-b"), await startWorkflow("sorted", {}, "?correlationId=c-a&version=2"), await startWorkflow("sorted", {}, "?correlationId=c-c")];
    await searchUntil("workflowName=sorted", (result) => result.totalHits === 3);
    const order = async (sort: string) => (await apiOk<SearchResult>("GET", `/api/workflow/search?workflowName=sorted&sort=${encodeURIComponent(sort)}`)).results.map((row) => row.workflowId);
    expect(await order("workflowId:ASC")).toEqual([...ids].sort());
    expect(await order("workflowId:DESC")).toEqual([...ids].sort().reverse());
    expect(await order("correlationId:ASC")).toEqual([ids[1], ids[0], ids[2]]);
    expect((await order("version:DESC|correlationId:ASC"))[0]).toBe(ids[1]);
    expect(await order("executionTime:DESC|workflowId:ASC")).toEqual([...ids].sort());
    // None has failed: ties, by workflow id.
    expect(await order("failedReferenceTaskNames:DESC")).toEqual([...ids].sort());
    // A direction alone (the Java client's scheduler search sends one) orders by start time.
    expect(await order("ASC")).toEqual(await order("startTime:ASC"));
    expect(await order("desc")).toEqual(await order("startTime:DESC"));
  });

  it("reads Conductor's other query operators (BETWEEN, !=, STARTS_WITH) and the fields version, priority and executionTime", async () => {
    const gate = [httpTask("gate", { uri: target("/echo/queried"), method: "GET" }, { asyncComplete: true })];
    await register({ name: "queried", tasks: gate });
    await register({ name: "queried", version: 2, tasks: gate });
    const a = await startWorkflow("queried", {}, "?correlationId=q-a&version=1");
    const b = await startWorkflow("queried", {}, "?correlationId=q-b&version=2");
    const c = await startWorkflow("queried", {}, "?correlationId=x-c&priority=5&version=1");
    await waitFor(a, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${a}/gate/COMPLETED`, {});
    await waitForIndexRow(a, "COMPLETED", 10_000);
    await searchUntil("workflowName=queried", (result) => result.totalHits === 3);
    const ids = async (query: string) =>
      (await apiOk<SearchResult>("GET", `/api/workflow/search?sort=workflowId&query=${encodeURIComponent(`workflowType = queried AND ${query}`)}`)).results.map((row) => row.workflowId);
    const sorted = (...list: string[]) => list.sort();
    expect(await ids("version = 2")).toEqual([b]);
    expect(await ids("version IN (1)")).toEqual(sorted(a, c));
    expect(await ids("priority > 0")).toEqual([c]);
    expect(await ids("correlationId != 'q-a'")).toEqual(sorted(b, c));
    expect(await ids("correlationId STARTS_WITH 'q-'")).toEqual(sorted(a, b));
    expect(await ids("correlationId starts_with q-b")).toEqual([b]);
    expect(await ids(`startTime BETWEEN 0 AND ${Date.now() + 60_000} AND status = RUNNING`)).toEqual(sorted(b, c));
    expect(await ids("executionTime > 0")).toEqual([a]);
    expect(await ids("executionTime IN (0)")).toEqual(sorted(b, c));
    for (const bad of ["version = two", "priority STARTS_WITH 1", "startTime BETWEEN 5"]) {
      expect((await api("GET", `/api/workflow/search?query=${encodeURIComponent(bad)}`)).status, bad).toBe(400);
    }
  });

  it("search-v2 answers the same search with each execution's Workflow JSON (no tasks), only those the caller may read", async () => {
    await register({ name: "search_v2", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] });
    await register({ name: "search_v2_other", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] });
    const big = "y".repeat(6000);
    const workflowId = await startWorkflow("search_v2", { big });
    const other = await startWorkflow("search_v2_other");
    await waitForIndexRow(workflowId, "RUNNING", 10_000);
    await waitForIndexRow(other, "RUNNING", 10_000);
    type Whole = { totalHits: number; results: Array<JsonObject & { workflowId: string; input: JsonObject; tasks?: unknown[] }> };
    const found = await apiOk<Whole>("GET", `/api/workflow/search-v2?query=${encodeURIComponent("workflowType IN (search_v2,search_v2_other)")}&sort=startTime:ASC`);
    expect(found.results.map((workflow) => workflow.workflowId)).toEqual([workflowId, other]);
    // The whole input (the summary cuts it at 4096 characters), and no tasks.
    expect(found.results[0]).toMatchObject({ workflowName: "search_v2", status: "RUNNING", input: { big } });
    expect(found.results[0]!.tasks ?? []).toEqual([]);
    const scoped = await createUser("search-v2-scoped", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:search_v2" }] });
    const mine = (await (await call("GET", `/api/workflow/search-v2?query=${encodeURIComponent("workflowType IN (search_v2,search_v2_other)")}`, orkes(scoped.token))).json()) as Whole;
    expect(mine.results.map((workflow) => workflow.workflowId)).toEqual([workflowId]);
    expect((await api("GET", "/api/workflow/search-v2?size=101")).status).toBe(400);
  });

  it("search-by-tasks finds the executions holding a task the query and free text keep, once each, sorted and paged as executions; v2 answers Workflow JSON", async () => {
    const waitTask = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });
    await register({ name: "sbt_two_waits", tasks: [{ name: "fork", taskReferenceName: "fork", type: "FORK_JOIN", forkTasks: [[waitTask("left")], [waitTask("right")]] }, { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["left", "right"] }] });
    await register({ name: "sbt_one_wait", tasks: [waitTask("alone")] });
    const two = await startWorkflow("sbt_two_waits", { note: "needle-sbt" });
    const one = await startWorkflow("sbt_one_wait");
    await waitForIndexRow(two, "RUNNING", 10_000);
    await waitForIndexRow(one, "RUNNING", 10_000);
    type Found = { totalHits: number; results: Array<JsonObject & { workflowId: string }> };
    const search = (query: string, extra = "") => apiOk<Found>("GET", `/api/workflow/search-by-tasks?query=${encodeURIComponent(query)}${extra}`);
    // Two WAIT tasks of one execution make one hit.
    const waiting = await search("taskType = 'WAIT' AND status = 'IN_PROGRESS' AND workflowType IN (sbt_two_waits,sbt_one_wait)", "&sort=startTime:ASC");
    expect(waiting).toMatchObject({ totalHits: 2, results: [{ workflowId: two, workflowType: "sbt_two_waits", status: "RUNNING" }, { workflowId: one }] });
    expect((await search("taskRefName = 'right'")).results.map((workflow) => workflow.workflowId)).toEqual([two]);
    expect((await search("taskRefName IN (right,alone)", "&sort=startTime:DESC&size=1&start=1")).results.map((workflow) => workflow.workflowId)).toEqual([two]);
    // Free text looks in the tasks (their ids, names, input...), not in the execution's own input.
    expect((await apiOk<Found>("GET", `/api/workflow/search-by-tasks?freeText=needle-sbt`)).totalHits).toBe(0);
    expect((await apiOk<Found>("GET", `/api/workflow/search-by-tasks?freeText=alone`)).results.map((workflow) => workflow.workflowId)).toEqual([one]);
    const whole = await apiOk<Found>("GET", `/api/workflow/search-by-tasks-v2?query=${encodeURIComponent("taskRefName = 'left'")}`);
    expect(whole.results).toEqual([expect.objectContaining({ workflowId: two, workflowName: "sbt_two_waits", input: { note: "needle-sbt" } })]);
    // Only what the caller may read; a task field the index lacks is refused.
    const scoped = await createUser("sbt-scoped", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:sbt_one_wait" }] });
    const mine = (await (await call("GET", `/api/workflow/search-by-tasks?query=${encodeURIComponent("taskType = 'WAIT'")}`, orkes(scoped.token))).json()) as Found;
    expect(mine.results.map((workflow) => workflow.workflowId)).toEqual([one]);
    expect((await api("GET", `/api/workflow/search-by-tasks?query=${encodeURIComponent("nosuchfield = 'x'")}`)).status).toBe(400);
  });

  it("a summary cut at 4096 characters inside a surrogate pair (an emoji) stays well-formed text", async () => {
    await register({ name: "search_surrogate_cut", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] });
    // `{"k":"` is 6 characters, so code unit 4095 is the emoji's first half and 4096 its second.
    const input = { k: `${"a".repeat(4089)}😀 tail` };
    expect(JSON.stringify(input).charCodeAt(4095)).toBeGreaterThanOrEqual(0xd800);
    const workflowId = await startWorkflow("search_surrogate_cut", input);
    await waitForIndexRow(workflowId, "RUNNING", 10_000);
    const stored = (await env.DB.prepare("SELECT input FROM executions WHERE workflow_id = ?").bind(workflowId).first<{ input: string }>())!.input;
    expect(stored).not.toContain("\uFFFD");
    expect(stored.endsWith("…")).toBe(true);
    expect(JSON.stringify(input).startsWith(stored.slice(0, -1))).toBe(true);
  });

  it("a long failure reason and a long list of failed tasks are cut in the search row; the Workflow JSON keeps them whole", async () => {
    const longRef = (n: number) => `t${n}_${"x".repeat(2000)}`;
    await register({
      name: "search_long_texts",
      tasks: [
        ...[1, 2, 3].map((n) => httpTask(longRef(n), { uri: target("/status/500"), method: "GET" }, { optional: true, retryCount: 1, retryDelaySeconds: 0 })),
        httpTask("gate", { uri: target("/echo/long-texts"), method: "GET" }, { asyncComplete: true }),
      ],
    });
    const id = await startWorkflow("search_long_texts");
    await waitFor(id, (workflow) => workflow.tasks.at(-1)?.referenceTaskName === "gate" && workflow.tasks.at(-1)?.status === "IN_PROGRESS");
    const reason = `${"r".repeat(4095)}😀${"r".repeat(6000)}`;
    await apiOk("DELETE", `/api/workflow/${id}?reason=${encodeURIComponent(reason)}`);
    const workflow = await waitFor(id, ["TERMINATED"]);
    expect(workflow["reasonForIncompletion"]).toBe(reason);
    expect(workflow["failedReferenceTaskNames"]).toEqual([longRef(1), longRef(2), longRef(3)]);
    const found = (await searchUntil("workflowName=search_long_texts&status=TERMINATED", (result) => result.totalHits === 1)).results[0]!;
    // Not inside the emoji's surrogate pair: the cut comes before it.
    expect(found["reasonForIncompletion"]).toBe(`${"r".repeat(4095)}…`);
    const names = String(found["failedReferenceTaskNames"]);
    expect(names.length).toBe(4097);
    expect(names.endsWith("…")).toBe(true);
    expect([longRef(1), longRef(2), longRef(3)].join(",").startsWith(names.slice(0, -1))).toBe(true);
    // The failed tasks' names are a list: cut between whole names (the first two fit in 4096 characters), never inside one.
    expect(workflow["failedTaskNames"]).toEqual([longRef(1), longRef(2), longRef(3)]);
    expect(found["failedTaskNames"]).toEqual([longRef(1), longRef(2)]);
  });

  it("finds by free text of any length, ASCII case ignored, and shows a reader of a long name prefix their workflows (D1 takes LIKE and GLOB patterns up to 50 bytes)", async () => {
    const name = "search_long_names_of_the_billing_team_reconciliation_nightly";
    await register({ name, tasks: [httpTask("a", { uri: target("/echo/long-text"), method: "GET" })] });
    const correlationId = `Invoice-Run-2026-12-02-${"x".repeat(40)}-Customer-ACME`;
    const workflowId = await startWorkflow(name, {}, `?correlationId=${correlationId}`);
    await waitFor(workflowId, ["COMPLETED"]);
    await waitForIndexRow(workflowId, "COMPLETED");
    const byText = await apiOk<SearchResult>("GET", `/api/workflow/search?freeText=${encodeURIComponent(correlationId.toLowerCase().slice(8))}`);
    expect(byText.results.map((row) => row.workflowId)).toEqual([workflowId]);
    expect((await apiOk<SearchResult>("GET", `/api/workflow/search?freeText=${encodeURIComponent(`${correlationId}-not`)}`)).totalHits).toBe(0);
    // A task search's free text as well.
    const tasks = await apiOk<{ totalHits: number }>("GET", `/api/tasks/search?freeText=${encodeURIComponent(correlationId.toUpperCase())}`);
    expect(tasks.totalHits).toBe(1);

    const reader = await createUser("search-long-prefix", { directPermissions: [{ action: "WORKFLOW_READ", scope: `workflow:${name.slice(0, 55)}*` }] });
    const seen = (await (await call("GET", `/api/workflow/search?workflowName=${name}`, orkes(reader.token))).json()) as SearchResult;
    expect(seen.results.map((row) => row.workflowId)).toEqual([workflowId]);
    const other = await createUser("search-long-prefix-other", { directPermissions: [{ action: "WORKFLOW_READ", scope: `workflow:${name.slice(0, 55)}X*` }] });
    expect(((await (await call("GET", `/api/workflow/search?workflowName=${name}`, orkes(other.token))).json()) as SearchResult).totalHits).toBe(0);
  });

  it("shows a reader of a name prefix holding a NUL only the names starting with all of it: GLOB would stop at the NUL", async () => {
    const name = "search_nul_prefix";
    await register({ name, tasks: [httpTask("a", { uri: target("/echo/nul-prefix"), method: "GET" })] });
    const workflowId = await startWorkflow(name);
    await waitFor(workflowId, ["COMPLETED"]);
    await waitForIndexRow(workflowId, "COMPLETED");
    const found = async (user: { token: string }, path: string) => {
      const response = await call("GET", path, orkes(user.token));
      expect(response.status).toBe(200);
      return ((await response.json()) as { totalHits: number }).totalHits;
    };
    const paths = [`/api/workflow/search?workflowName=${name}`, `/api/tasks/search?query=${encodeURIComponent(`workflowType = ${name}`)}`];
    // `workflow:search_nul_prefix\0*` covers the workflows named `search_nul_prefix\0...`, not `search_nul_prefix`; nor
    // does `task:a\0*` cover its task `a` (scopeCovers: startsWith).
    const past = await createUser("search-nul-prefix", { directPermissions: [{ action: "WORKFLOW_READ", scope: `workflow:${name}\u0000*` }, { action: "TASK_READ", scope: "task:a\u0000*" }] });
    for (const path of paths) expect(await found(past, path), path).toBe(0);
    // The same grant without the NUL does cover it: what the caller above is refused is there to find.
    const covering = await createUser("search-nul-prefix-covering", { directPermissions: [{ action: "WORKFLOW_READ", scope: `workflow:${name}*` }] });
    for (const path of paths) expect(await found(covering, path), path).toBe(1);
    // The definitions' listing, filtered by the same SQL, as well.
    const listed = async (user: { token: string }) => {
      const response = await call("GET", "/api/metadata/workflow?short=true", orkes(user.token));
      expect(response.status).toBe(200);
      return ((await response.json()) as Array<{ name: string }>).map((definition) => definition.name);
    };
    expect(await listed(past)).not.toContain(name);
    expect(await listed(covering)).toContain(name);
  });

  it("refuses bad parameters", async () => {
    const bad = [
      "size=-1",
      "size=abc",
      "status=DONE",
      "sort=nope:DESC",
      "sort=startTime:UP",
      "sort=startTime:ASC:DESC",
      "sort=startTime:ASC|nope",
      `sort=${encodeURIComponent("workflowType|startTime:SIDEWAYS")}`,
      "sort=startTime|",
      "sort=constructor",
      "query=status%20LIKE%20x",
      `query=${encodeURIComponent("startTime >= soon")}`,
      `query=${encodeURIComponent("startTime IN (abc)")}`,
      `query=${encodeURIComponent("endTime IN (1, 2.5)")}`,
      `query=${encodeURIComponent("startTime => 5")}`,
      `query=${encodeURIComponent("constructor = 1")}`,
      // More sort terms than a search can mean (SQLite refuses a long ORDER BY).
      `sort=${encodeURIComponent(Array.from({ length: 11 }, () => "startTime").join("|"))}`,
    ];
    for (const query of bad) {
      const response = await api("GET", `/api/workflow/search?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    }
    expect((await api("GET", `/api/workflow/search?sort=${encodeURIComponent(Array.from({ length: 10 }, () => "startTime:DESC").join("|"))}`)).status).toBe(200);
  });

  it("sorts ascending when sort names a field without a direction, as Conductor", async () => {
    await register({ name: "search_sort_plain", tasks: [httpTask("a", { uri: target("/echo/sort-plain"), method: "GET" })] });
    const first = await startWorkflow("search_sort_plain");
    await waitFor(first, ["COMPLETED"]);
    const second = await startWorkflow("search_sort_plain");
    await waitFor(second, ["COMPLETED"]);
    await searchUntil("workflowName=search_sort_plain&status=COMPLETED", (result) => result.totalHits === 2);
    const ascending = await apiOk<SearchResult>("GET", "/api/workflow/search?workflowName=search_sort_plain&sort=startTime");
    expect(ascending.results.map((row) => row.workflowId)).toEqual([first, second]);
    // Without sort, the newest first (the documented default) stays.
    const unsorted = await apiOk<SearchResult>("GET", "/api/workflow/search?workflowName=search_sort_plain");
    expect(unsorted.results.map((row) => row.workflowId)).toEqual([second, first]);
  });

  it("sorts by several fields separated by |, each with its own direction", async () => {
    for (const name of ["search_multi_a", "search_multi_b"]) await register({ name, tasks: [httpTask("a", { uri: target("/echo/multi"), method: "GET" })] });
    const ids: string[] = [];
    for (const name of ["search_multi_a", "search_multi_b", "search_multi_a"]) {
      const id = await startWorkflow(name);
      await waitFor(id, ["COMPLETED"]);
      ids.push(id);
    }
    const [a1, b1, a2] = ids;
    const names = `query=${encodeURIComponent("workflowType IN (search_multi_a, search_multi_b)")}`;
    await searchUntil(`${names}&status=COMPLETED`, (result) => result.totalHits === 3);
    const typeThenNewest = await apiOk<SearchResult>("GET", `/api/workflow/search?${names}&sort=workflowType:ASC|startTime:DESC`);
    expect(typeThenNewest.results.map((row) => row.workflowId)).toEqual([a2, a1, b1]);
    const encoded = await apiOk<SearchResult>("GET", `/api/workflow/search?${names}&sort=${encodeURIComponent("workflowType:DESC|startTime")}`);
    expect(encoded.results.map((row) => row.workflowId)).toEqual([b1, a1, a2]);
  });

  it("query compares modifiedTime (the update time) and takes >= and <=", async () => {
    await register({ name: "search_compare", tasks: [httpTask("a", { uri: target("/echo/compare"), method: "GET" })] });
    const id = await startWorkflow("search_compare");
    const done = await waitFor(id, ["COMPLETED"]);
    await searchUntil(`workflowName=search_compare&status=COMPLETED`, (result) => result.totalHits === 1);
    const count = async (clause: string) =>
      (await apiOk<SearchResult>("GET", `/api/workflow/search?workflowName=search_compare&query=${encodeURIComponent(clause)}`)).totalHits;
    const start = Number(done["startTime"]);
    expect(await count(`startTime >= ${start}`)).toBe(1);
    expect(await count(`startTime > ${start}`)).toBe(0);
    expect(await count(`startTime <= ${start}`)).toBe(1);
    expect(await count(`startTime < ${start}`)).toBe(0);
    expect(await count(`modifiedTime >= ${start}`)).toBe(1);
    expect(await count(`modifiedTime < ${start}`)).toBe(0);
  });

  it("endTime comparisons and sorts leave running executions out and last, as a field Conductor's index does not hold", async () => {
    await register({ name: "search_end", tasks: [httpTask("gate", { uri: target("/echo/end"), method: "GET" }, { asyncComplete: true })] });
    const running = await startWorkflow("search_end");
    const finished = await startWorkflow("search_end");
    await waitFor(finished, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${finished}/gate/COMPLETED`, {});
    await waitFor(finished, ["COMPLETED"]);
    await searchUntil("workflowName=search_end", (result) => result.totalHits === 2 && result.results.some((row) => row.status === "COMPLETED"));
    const ids = async (query: string) => (await apiOk<SearchResult>("GET", `/api/workflow/search?workflowName=search_end&${query}`)).results.map((row) => row.workflowId);
    // The cleanup docs/api.md shows (then bulk/delete): before, it listed the running execution too.
    expect(await ids(`query=${encodeURIComponent(`endTime < ${Date.now() + 60_000}`)}`)).toEqual([finished]);
    expect(await ids(`query=${encodeURIComponent("endTime <= 9999999999999")}`)).toEqual([finished]);
    expect(await ids(`query=${encodeURIComponent("endTime IN (0)")}`)).toEqual([]);
    expect(await ids("sort=endTime:ASC")).toEqual([finished, running]);
    expect(await ids("sort=endTime:DESC")).toEqual([finished, running]);
  });

  it("sorts rows without a correlationId or reasonForIncompletion last, ascending or descending, as Conductor's index leaves a missing field last", async () => {
    await register({ name: "search_missing_last", tasks: [httpTask("a", { uri: target("/echo/missing-last"), method: "GET" })] });
    const none = await startWorkflow("search_missing_last");
    const keyed = await startWorkflow("search_missing_last", {}, "?correlationId=ml-a");
    for (const id of [none, keyed]) await waitFor(id, ["COMPLETED"]);
    await searchUntil("workflowName=search_missing_last&status=COMPLETED", (result) => result.totalHits === 2);
    const ids = async (sort: string) => (await apiOk<SearchResult>("GET", `/api/workflow/search?workflowName=search_missing_last&sort=${encodeURIComponent(sort)}`)).results.map((row) => row.workflowId);
    expect(await ids("correlationId:ASC")).toEqual([keyed, none]);
    expect(await ids("correlationId:DESC")).toEqual([keyed, none]);
    // Neither has a reason: ties, then the next term.
    expect(await ids("reasonForIncompletion:ASC|correlationId")).toEqual([keyed, none]);
  });

  it("query values in quotes keep AND, OR, commas, parentheses and escaped quotes; freeText's * matches any text", async () => {
    await register({ name: "search_quoted", tasks: [httpTask("a", { uri: target("/echo/quoted"), method: "GET" })] });
    const smith = await startWorkflow("search_quoted", { order: "order-1-big" }, `?correlationId=${encodeURIComponent("Smith and Sons, (UK)")}`);
    const obrien = await startWorkflow("search_quoted", {}, `?correlationId=${encodeURIComponent("O'Brien")}`);
    await searchUntil("workflowName=search_quoted", (result) => result.totalHits === 2);
    const ids = async (query: string) => (await apiOk<SearchResult>("GET", `/api/workflow/search?workflowName=search_quoted&query=${encodeURIComponent(query)}`)).results.map((row) => row.workflowId);
    expect(await ids("correlationId = 'Smith and Sons, (UK)'")).toEqual([smith]);
    expect(await ids(`correlationId IN ("Smith and Sons, (UK)", 'x')`)).toEqual([smith]);
    expect(await ids("correlationId = 'O\\'Brien' AND workflowType = search_quoted")).toEqual([obrien]);
    // In quotes, or is a value's word.
    expect(await ids("correlationId = 'this or that'")).toEqual([]);
    expect(await ids("correlationId = 'Smith and Sons, (UK)' OR correlationId = 'this or that'")).toEqual([smith]);
    const starred = await apiOk<SearchResult>("GET", "/api/workflow/search?workflowName=search_quoted&freeText=order-1*big");
    expect(starred.results.map((row) => row.workflowId)).toEqual([smith]);
  });

  it("a query whose value opens a quote it does not close, or that ends in AND, is a 400 (as Conductor's parser refuses it), not an empty page", async () => {
    await register({ name: "search_unclosed", tasks: [httpTask("a", { uri: target("/echo/unclosed"), method: "GET" })] });
    const obrien = await startWorkflow("search_unclosed", {}, `?correlationId=${encodeURIComponent("O'Brien")}`);
    await waitForIndexRow(obrien, "COMPLETED", 10_000);
    const ids = async (query: string) => (await apiOk<SearchResult>("GET", `/api/workflow/search?query=${encodeURIComponent(query)}`)).results.map((row) => row.workflowId);
    // A quote inside an unquoted value is a character, and a closed one a phrase.
    expect(await ids("workflowType = search_unclosed AND correlationId = O'Brien")).toEqual([obrien]);
    // Wherever the clause stands: the apostrophe opens no string that would take the clauses after it as its value.
    expect(await ids("correlationId = O'Brien AND workflowType = search_unclosed")).toEqual([obrien]);
    expect(await ids("correlationId IN (O'Brien, x) AND workflowType = search_unclosed")).toEqual([obrien]);
    expect(await ids(`workflowType = "search_unclosed" AND correlationId IN ('O\\'Brien', x)`)).toEqual([obrien]);
    const refused = [
      `workflowType = "search_unclosed`,
      `workflowType = 'search_unclosed AND status = COMPLETED`,
      `workflowType IN ("search_unclosed, x)`,
      `correlationId STARTS_WITH 'O`,
      // Its last quote escaped, a quote inside the value: the string is not closed, as Conductor's parser reads it.
      `workflowType = "search_unclosed\\"`,
      `correlationId = 'O\\'`,
      `workflowType = search_unclosed AND status = COMPLETED AND`,
      `workflowType = search_unclosed AND `,
    ];
    for (const query of refused) {
      const response = await api("GET", `/api/workflow/search?query=${encodeURIComponent(query)}`);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { validationErrors: Array<{ path: string }> }).validationErrors[0]!.path, query).toBe("query");
    }
    expect((await api("GET", `/api/tasks/search?query=${encodeURIComponent(`taskType = "HTTP`)}`)).status).toBe(400);
    // The refusal says what is wrong: a string left open, or one closed with text after it.
    const message = async (query: string) => ((await api("GET", `/api/workflow/search?query=${encodeURIComponent(query)}`)).json() as Promise<{ validationErrors: Array<{ message: string }> }>).then((body) => body.validationErrors[0]!.message);
    expect(await message(`workflowId = "abc`)).toContain("opens a quote it does not close");
    expect(await message(`workflowId = "abc" -- note`)).toContain("has text after its closing quote");
    expect(await message(`workflowId = 'a\\\\' b`)).toContain("has text after its closing quote");
  });

  it("freeText of Lucene terms field:value joined by AND, OR or side by side (as Conductor's Elasticsearch index reads it) is read as those conditions; a bare word, an unknown field or a URL stays a substring", async () => {
    const wait = [{ name: "hold", taskReferenceName: "hold", type: "WAIT", inputParameters: {} }];
    await register({ name: "lucene_wf", tasks: wait });
    await register({ name: "lucene_wf_fail", tasks: [{ name: "stop", taskReferenceName: "stop", type: "TERMINATE", inputParameters: { terminationStatus: "FAILED" } }] });
    const abc1 = await startWorkflow("lucene_wf", { note: "ticket:lu-77 http://lu.example/x" }, "?correlationId=lu-abc-1");
    const abc2 = await startWorkflow("lucene_wf", {}, "?correlationId=lu-abc-2");
    const xyz = await startWorkflow("lucene_wf", {}, "?correlationId=lu-xyz");
    const failed = await startWorkflow("lucene_wf_fail", {}, "?correlationId=lu-abc-3");
    for (const id of [abc1, abc2, xyz]) await waitForIndexRow(id, "RUNNING", 10_000);
    await waitForIndexRow(failed, "FAILED", 10_000);
    const ids = async (freeText: string) =>
      (await apiOk<SearchResult>("GET", `/api/workflow/search?freeText=${encodeURIComponent(freeText)}`)).results.map((row) => row.workflowId).sort();
    expect(await ids("correlationId:lu-abc-*")).toEqual([abc1, abc2, failed].sort());
    expect(await ids("correlationId:lu-abc-* AND status:FAILED")).toEqual([failed]);
    expect(await ids("workflowType:lucene_wf AND status:RUNNING AND correlationId:lu-*")).toEqual([abc1, abc2, xyz].sort());
    expect(await ids("status:FAILED")).toContain(failed);
    expect(await ids("status:FAILED")).not.toContain(abc1);
    // OR, written or as Elasticsearch's default operator between terms side by side.
    expect(await ids("correlationId:lu-xyz OR correlationId:lu-abc-1")).toEqual([abc1, xyz].sort());
    expect(await ids("correlationId:lu-xyz correlationId:lu-abc-3")).toEqual([xyz, failed].sort());
    expect(await ids("correlationId:lu-xyz workflowType:lucene_wf_fail")).toEqual([xyz, failed].sort());
    // AND and OR together (which Lucene reads by its own precedence) are not built: the whole text is a substring, found nowhere.
    expect(await ids("correlationId:lu-xyz OR correlationId:lu-abc-3 AND status:FAILED")).toEqual([]);
    expect(await ids("correlationId:lu-xyz")).toEqual([xyz]);
    // In double quotes the value is literal: its * a character.
    expect(await ids('correlationId:"lu-xyz"')).toEqual([xyz]);
    expect(await ids('correlationId:"lu-abc-*"')).toEqual([]);
    // An unknown field, a bare word, a URL: the substring search, as before (never a 400).
    expect(await ids("ticket:lu-77")).toEqual([abc1]);
    expect(await ids("lu-xyz")).toEqual([xyz]);
    expect(await ids("http://lu.example/x")).toEqual([abc1]);
    // A value the field cannot hold is text to find, not a refusal.
    expect((await api("GET", `/api/workflow/search?freeText=${encodeURIComponent("status:failed")}`)).status).toBe(200);
    // search-by-tasks reads its freeText as a task search's: task fields.
    const byTasks = await apiOk<SearchResult>("GET", `/api/workflow/search-by-tasks?freeText=${encodeURIComponent("taskRefName:hold AND correlationId:lu-abc-*")}`);
    expect(byTasks.results.map((row) => row.workflowId).sort()).toEqual([abc1, abc2].sort());
  });

  it("query: an unquoted * in an = value is a wildcard, as Conductor's index reads it (case kept, as =); a quoted value is taken literally", async () => {
    const hook = [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }];
    for (const name of ["wc_order_proc_a", "wc_order_proc_b", "wc_x_proc_1"]) await register({ name, tasks: hook });
    const a = await startWorkflow("wc_order_proc_a", {}, `?correlationId=${encodeURIComponent("star*[x]?")}`);
    const b = await startWorkflow("wc_order_proc_b");
    const x = await startWorkflow("wc_x_proc_1");
    for (const id of [a, b, x]) await waitForIndexRow(id, "RUNNING", 10_000);
    const ids = async (query: string, path = "search") =>
      (await apiOk<SearchResult>("GET", `/api/workflow/${path}?sort=workflowId&query=${encodeURIComponent(query)}`)).results.map((row) => row.workflowId);
    const sorted = (...list: string[]) => list.sort();
    expect(await ids("workflowType=wc_order_proc*")).toEqual(sorted(a, b));
    expect(await ids("workflowType=wc_*_proc*")).toEqual(sorted(a, b, x));
    expect(await ids("workflowType=nomatch_zzz*")).toEqual([]);
    expect(await ids("workflowType=WC_ORDER_PROC*")).toEqual([]);
    expect(await ids("workflowType=wc_*_proc* AND workflowType != wc_order*")).toEqual([x]);
    expect(await ids("workflowType=wc_order_proc*", "search-v2")).toEqual(sorted(a, b));
    // Quoted, a phrase: its * is a character.
    expect(await ids("workflowType = 'wc_order_proc*'")).toEqual([]);
    expect(await ids(`workflowType=wc_* AND correlationId = "star*[x]?"`)).toEqual([a]);
    expect(await ids("workflowType=wc_* AND correlationId = 'star*'")).toEqual([]);
    // GLOB's own ? and [ stay characters.
    expect(await ids("workflowType=wc_* AND correlationId = star*[x]?")).toEqual([a]);
    expect(await ids("workflowType=wc_* AND correlationId = sta?*")).toEqual([]);
    // D1 takes a pattern of at most 50 bytes.
    const long = await api("GET", `/api/workflow/search?query=${encodeURIComponent(`workflowType = ${"w".repeat(50)}*`)}`);
    expect(long.status).toBe(400);
    expect(((await long.json()) as { message: string }).message).toContain("at most 50 bytes");
    expect((await api("GET", `/api/workflow/search?query=${encodeURIComponent("version = 1*")}`)).status).toBe(400);
  });

  it("query: parentheses around the whole query or a group of clauses are read as Conductor's parser reads them; unbalanced ones are a 400", async () => {
    await register({ name: "search_grouped", tasks: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] });
    const high = await startWorkflow("search_grouped", {}, `?priority=60&correlationId=${encodeURIComponent("(g)")}`);
    const low = await startWorkflow("search_grouped", {}, "?priority=10");
    for (const id of [high, low]) await waitForIndexRow(id, "RUNNING", 10_000);
    const ids = async (query: string) => (await apiOk<SearchResult>("GET", `/api/workflow/search?sort=workflowId&query=${encodeURIComponent(query)}`)).results.map((row) => row.workflowId);
    expect(await ids("workflowType='search_grouped' AND (priority > 50)")).toEqual([high]);
    expect(await ids("(workflowType='search_grouped' AND priority > 50)")).toEqual([high]);
    expect(await ids("((workflowType IN (search_grouped)) AND (priority < 50 AND status = RUNNING))")).toEqual([low]);
    expect(await ids("(workflowType = search_grouped) AND(startTime BETWEEN 1 AND 9999999999999) AND correlationId = '(g)'")).toEqual([high]);
    const refused = ["(workflowType = search_grouped", "workflowType = search_grouped)", "(workflowType = search_grouped) priority > 1", "workflowType = search_grouped AND ()"];
    for (const query of refused) {
      const response = await api("GET", `/api/workflow/search?query=${encodeURIComponent(query)}`);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { message: string }).message, query).toMatch(/parenthes/);
    }
  });

  it("query: OR joins alternatives, grouped with AND in parentheses, as Conductor's parser reads them; AND and OR side by side without parentheses are a 400", async () => {
    const hook = [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }];
    await register({ name: "search_either", tasks: hook });
    await register({ name: "search_either_other", tasks: hook });
    const a = await startWorkflow("search_either", {}, "?correlationId=e-a&priority=60");
    const b = await startWorkflow("search_either", {}, "?correlationId=e-b&priority=10");
    const c = await startWorkflow("search_either_other", {}, "?correlationId=e-c&priority=60");
    for (const id of [a, b, c]) await waitForIndexRow(id, "RUNNING", 10_000);
    const ids = async (query: string) => (await apiOk<SearchResult>("GET", `/api/workflow/search?sort=workflowId&query=${encodeURIComponent(query)}`)).results.map((row) => row.workflowId);
    const sorted = (...found: string[]) => found.sort();
    expect(await ids("correlationId = e-a OR correlationId = e-c")).toEqual(sorted(a, c));
    expect(await ids("(workflowType = search_either OR workflowType = search_either_other) AND priority > 50")).toEqual(sorted(a, c));
    expect(await ids("workflowType = search_either AND (priority > 50 OR correlationId = 'e-b')")).toEqual(sorted(a, b));
    expect(await ids("(workflowType = search_either AND priority < 50) OR (workflowType=search_either_other AND startTime BETWEEN 1 AND 9999999999999)")).toEqual(sorted(b, c));
    // Lower case too; in quotes, OR is a value's word.
    expect(await ids("correlationId = 'e-a OR e-c' or correlationId = e-b")).toEqual([b]);
    // Each alternative's values stay with it.
    expect(await ids("correlationId STARTS_WITH 'e-a' OR (correlationId STARTS_WITH e-c AND priority = 60) OR workflowId = none")).toEqual(sorted(a, c));
    expect(await ids("correlationId IN (e-a, e-b) AND (priority = 10 OR priority = 11) AND workflowType = search_either")).toEqual([b]);
    const tasks = await apiOk<SearchResult>("GET", `/api/tasks/search?query=${encodeURIComponent("workflowType = search_either_other OR correlationId = e-a")}`);
    expect(tasks.results.map((row) => row.workflowId).sort()).toEqual(sorted(a, c));
    const refused: Array<[string, RegExp]> = [
      // Conductor's parser reads these right to left (a AND (b OR c)), where AND first is what one expects: say which.
      ["correlationId = e-a OR correlationId = e-b AND priority > 50", /AND and OR side by side/],
      ["workflowType = search_either AND priority > 50 OR correlationId = e-c", /AND and OR side by side/],
      ["correlationId = e-a OR", /lacks a clause/],
      ["OR correlationId = e-a", /lacks a clause/],
      ["correlationId = e-a OR () ", /lacks a clause/],
      ["(correlationId = e-a) OR (correlationId = e-b) priority > 1", /closing parenthesis/],
    ];
    for (const [query, message] of refused) {
      const response = await api("GET", `/api/workflow/search?query=${encodeURIComponent(query)}`);
      expect(response.status, query).toBe(400);
      expect(await response.json(), query).toMatchObject({ status: 400, error: "VALIDATION_ERROR", validationErrors: [{ path: "query", message: expect.stringMatching(message) }] });
    }
    // Groups are read one level at a time: nesting past 32 is refused, not left to exhaust the stack (a 500).
    const nested = Array.from({ length: 8000 }).reduce<string>((inner) => `(${inner} AND correlationId = e-a)`, "correlationId = e-a");
    const deep = await api("GET", `/api/workflow/search?query=${encodeURIComponent(nested)}`);
    expect(deep.status, "8000 nested groups").toBe(400);
    expect(((await deep.json()) as { message: string }).message).toContain("nests parentheses over 32 deep");
  });

  it("query: AND, OR and groups nested at random find what evaluating them on each execution finds", async () => {
    type Row = { id: string; correlationId: string | null; priority: number; status: string; startTime: number };
    type Condition = { text: string; clauses: number; holds: (row: Row) => boolean } | { connective: "AND" | "OR"; operands: Condition[] };
    // A fixed seed: the same queries every run. The draw is the generator's high bits: its low bits repeat with a short
    // period (the lowest alternates), and `seed % 2` made every group an OR and every `status !=` RUNNING. Math.imul
    // keeps the product exact (a double loses its low bits past 2^53).
    let seed = 4242;
    const pick = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return Math.floor((seed / 0x80000000) * n);
    };
    const clause = (): Condition => {
      const correlationId = ["c-a", "c-b", "c-c"][pick(3)]!;
      const priority = pick(4) * 10;
      const status = ["RUNNING", "FAILED"][pick(2)]!;
      const low = 1000 + pick(4) * 10;
      const high = low + pick(3) * 10;
      return [
        { text: `correlationId = '${correlationId}'`, clauses: 1, holds: (row: Row) => row.correlationId === correlationId },
        { text: `priority > ${priority}`, clauses: 1, holds: (row: Row) => row.priority > priority },
        { text: `status != ${status}`, clauses: 1, holds: (row: Row) => row.status !== status },
        { text: "correlationId IS null", clauses: 1, holds: (row: Row) => row.correlationId === null },
        { text: `startTime BETWEEN ${low} AND ${high}`, clauses: 2, holds: (row: Row) => row.startTime >= low && row.startTime <= high },
        { text: `priority IN (${priority}, 99)`, clauses: 1, holds: (row: Row) => row.priority === priority || row.priority === 99 },
      ][pick(6)]!;
    };
    const condition = (depth: number): Condition =>
      depth === 0 || pick(3) === 0 ? clause() : { connective: pick(2) ? "AND" : "OR", operands: Array.from({ length: 2 + pick(2) }, () => condition(depth - 1)) };
    const written = (c: Condition): string =>
      "text" in c ? c.text : c.operands.map((operand) => ("text" in operand ? operand.text : `(${written(operand)})`)).join(pick(2) ? ` ${c.connective} ` : ` ${c.connective.toLowerCase()} `);
    const holds = (c: Condition, row: Row): boolean => ("text" in c ? c.holds(row) : c.connective === "AND" ? c.operands.every((o) => holds(o, row)) : c.operands.some((o) => holds(o, row)));
    const clauses = (c: Condition): number => ("text" in c ? c.clauses : c.operands.reduce((sum, o) => sum + clauses(o), 0));

    const rows: Row[] = Array.from({ length: 12 }, (_, i) => ({
      id: crypto.randomUUID(),
      correlationId: [null, "c-a", "c-b", "c-c"][i % 4]!,
      priority: [0, 10, 20, 30, 99][i % 5]!,
      status: ["RUNNING", "FAILED", "COMPLETED"][i % 3]!,
      startTime: 1000 + (i % 6) * 10,
    }));
    for (const row of rows) {
      await env.DB.prepare(
        `INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, correlation_id, priority, create_time, start_time, end_time, update_time, input, output)
         VALUES (?1, 'search_random_groups', 1, ?2, ?3, ?4, ?5, ?5, 0, ?5, '{}', '{}')`,
      )
        .bind(row.id, row.status, row.correlationId, row.priority, row.startTime)
        .run();
    }
    // The same 150 queries as before, read by the query parser and SQL builder (applyQuery, whereOf) and run in one D1
    // batch: as 150 searches through the router they took 20 s on a loaded machine (each an authenticated request and
    // a count and a page), and the test timed out while its searches went on into the next test.
    const queries: Condition[] = [];
    const texts: string[] = [];
    for (let i = 0; i < 150; i++) {
      const query = condition(3);
      if (clauses(query) > MAX_QUERY_CLAUSES) continue;
      queries.push(query);
      texts.push(written(query));
    }
    expect(queries.length).toBeGreaterThan(100);
    const statements = texts.map((text) => {
      const filter: Filter = { clauses: [], bindings: [] };
      addIn(filter, "workflow_name", ["search_random_groups"]);
      applyQuery(filter, text);
      return env.DB.prepare(`SELECT workflow_id AS workflowId FROM executions ${whereOf(filter)}`).bind(...filter.bindings);
    });
    const found = await env.DB.batch<{ workflowId: string }>(statements);
    queries.forEach((query, i) => {
      const expected = rows.filter((row) => holds(query, row)).map((row) => row.id).sort();
      expect(found[i]!.results.map((row) => row.workflowId).sort(), texts[i]).toEqual(expected);
    });
    // A few of them through the search route too: it reads the query as the builder does.
    for (let i = 0; i < queries.length; i += 20) {
      const page = await apiOk<SearchResult>("GET", `/api/workflow/search?workflowName=search_random_groups&size=100&query=${encodeURIComponent(texts[i]!)}`);
      expect(page.results.map((row) => row.workflowId).sort(), texts[i]).toEqual(found[i]!.results.map((row) => row.workflowId).sort());
    }
  });

  it("query: a caller limited to one workflow finds none of another's rows through OR, in the workflow, task, search-by-tasks and schedule executions searches", async () => {
    for (const [id, name] of [["or-rbac-mine", "or_rbac_mine"], ["or-rbac-theirs", "or_rbac_theirs"]] as const) {
      await env.DB.prepare(
        `INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, correlation_id, priority, create_time, start_time, end_time, update_time, input, output)
         VALUES (?1, ?2, 1, 'RUNNING', 'or-rbac', 0, 1000, 1000, 0, 1000, '{}', '{}')`,
      )
        .bind(id, name)
        .run();
      await env.DB.prepare(
        `INSERT INTO task_index (task_id, workflow_id, workflow_name, correlation_id, workflow_priority, task_type, task_def_name, reference_task_name, status, scheduled_time, start_time, end_time, update_time, input, output)
         VALUES (?1, ?2, ?3, 'or-rbac', 0, 'SIMPLE', ?3, 'ref', 'SCHEDULED', 1000, 0, 0, 1000, '{}', '{}')`,
      )
        .bind(`task-${id}`, id, name)
        .run();
      await env.DB.prepare(
        `INSERT INTO schedule_executions (execution_id, schedule_name, workflow_name, scheduled_time, execution_time, state, workflow_id, zone_id, start_workflow_request)
         VALUES (?1, ?1, ?2, 1000, 1000, 'EXECUTED', ?1, 'UTC', '{}')`,
      )
        .bind(id, name)
        .run();
    }
    const reader = await createUser("search-or-scoped", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:or_rbac_mine" }] });
    const either = encodeURIComponent("workflowType = or_rbac_theirs OR workflowType = or_rbac_mine");
    const paths = [
      `/api/workflow/search?query=${either}`,
      `/api/workflow/search?query=${encodeURIComponent("(workflowType = or_rbac_theirs) OR correlationId = or-rbac")}`,
      `/api/workflow/search?freeText=${encodeURIComponent("workflowType:or_rbac_theirs workflowType:or_rbac_mine")}`,
      `/api/tasks/search?query=${either}`,
      `/api/tasks/search?query=${encodeURIComponent("taskDefName = or_rbac_theirs OR workflowType = or_rbac_mine")}`,
      `/api/workflow/search-by-tasks?query=${either}`,
      `/api/scheduler/search/executions?query=${either}`,
    ];
    for (const path of paths) {
      const found = (await (await call("GET", path, orkes(reader.token))).json()) as { totalHits: number; results: JsonObject[] };
      expect(found.results.map((row) => row["workflowId"] ?? row["workflowInstanceId"]), path).toEqual(["or-rbac-mine"]);
      expect(found.totalHits, path).toBe(1);
    }
    // The admin finds both: the OR itself finds the other workflow's rows.
    expect((await apiOk<SearchResult>("GET", `/api/workflow/search?query=${either}`)).totalHits).toBe(2);
  });

  it("query: STARTS_WITH takes its prefix literally (a *, ? or [ a character, a prefix of any length), through the name index when D1 takes it as a pattern", async () => {
    const long = `sw_${"l".repeat(60)}`;
    const names = ["sw_a*b_1", "sw_axb_1", "sw_a?b_1", "sw_a[b]_1", "sw_ab_1", `${long}_1`, `${long.slice(0, -1)}m_1`];
    const ids = new Map<string, string>();
    for (const name of names) {
      const id = crypto.randomUUID();
      ids.set(name, id);
      await env.DB.prepare(
        `INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, correlation_id, priority, create_time, start_time, end_time, update_time, input, output)
         VALUES (?1, ?2, 1, 'RUNNING', NULL, 0, 1000, 1000, 0, 1000, '{}', '{}')`,
      )
        .bind(id, name)
        .run();
    }
    const found = async (query: string) => (await apiOk<SearchResult>("GET", `/api/workflow/search?size=100&query=${encodeURIComponent(query)}`)).results.map((row) => row.workflowId).sort();
    const of = (...list: string[]) => list.map((name) => ids.get(name)!).sort();
    expect(await found("workflowType STARTS_WITH 'sw_a*'")).toEqual(of("sw_a*b_1"));
    expect(await found("workflowType STARTS_WITH sw_a? OR workflowType STARTS_WITH sw_a[")).toEqual(of("sw_a?b_1", "sw_a[b]_1"));
    expect(await found(`workflowType STARTS_WITH ${long}`)).toEqual(of(`${long}_1`));
    expect(await found("workflowType STARTS_WITH sw_a AND workflowType STARTS_WITH sw_ab")).toEqual(of("sw_ab_1"));
    // The name index finds a short prefix's rows, as it finds the wildcard `workflowType = billing_*`.
    const filter: Filter = { clauses: [], bindings: [] };
    applyQuery(filter, "workflowType STARTS_WITH billing_");
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN SELECT workflow_id FROM executions WHERE ${filter.clauses.join(" AND ")}`)
      .bind(...filter.bindings)
      .all<{ detail: string }>();
    expect(plan.results.map((row) => row.detail).join("; ")).toContain("executions_by_name");
  });

  it("query: parentWorkflowId = '' (or \"\") finds the top-level executions, as on Conductor's Postgres index, and != '' the sub workflows", async () => {
    const hook = [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }];
    await register({ name: "wcp_child", tasks: hook });
    await register({ name: "wcp_parent", tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "wcp_child", version: 1 }, inputParameters: {} }] });
    const parent = await startWorkflow("wcp_parent");
    const child = String((await waitFor(parent, (workflow) => typeof workflow.tasks[0]?.["subWorkflowId"] === "string")).tasks[0]!["subWorkflowId"]);
    for (const id of [parent, child]) await waitForIndexRow(id, "RUNNING", 10_000);
    const ids = async (query: string) => (await apiOk<SearchResult>("GET", `/api/workflow/search?sort=workflowId&query=${encodeURIComponent(query)}`)).results.map((row) => row.workflowId);
    expect(await ids("workflowType IN (wcp_parent, wcp_child) AND parentWorkflowId = ''")).toEqual([parent]);
    expect(await ids(`parentWorkflowId="" AND workflowType=wcp_*`)).toEqual([parent]);
    expect(await ids("workflowType=wcp_* AND parentWorkflowId != ''")).toEqual([child]);
    expect(await ids(`workflowType=wcp_* AND parentWorkflowId = "${parent}"`)).toEqual([child]);
    // != still finds the executions without the field.
    expect(await ids(`workflowType=wcp_* AND parentWorkflowId != ${parent}`)).toEqual([parent]);
    expect(await ids("workflowType=wcp_* AND correlationId = ''")).toEqual([parent, child].sort());
  });

  it("query: field IS null and IS not null, Conductor's operator, find the executions without the field and with it", async () => {
    const hook = [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }];
    await register({ name: "wisn_child", tasks: hook });
    await register({ name: "wisn_parent", tasks: [{ name: "sub", taskReferenceName: "sub", type: "SUB_WORKFLOW", subWorkflowParam: { name: "wisn_child", version: 1 }, inputParameters: {} }] });
    const parent = await startWorkflow("wisn_parent", {}, "?correlationId=wisn-1");
    const child = String((await waitFor(parent, (workflow) => typeof workflow.tasks[0]?.["subWorkflowId"] === "string")).tasks[0]!["subWorkflowId"]);
    await register({ name: "wisn_done", tasks: [{ name: "calc", taskReferenceName: "calc", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "1" } }] });
    const done = await startWorkflow("wisn_done");
    await waitFor(done, ["COMPLETED"]);
    for (const [id, status] of [[parent, "RUNNING"], [child, "RUNNING"], [done, "COMPLETED"]] as const) await waitForIndexRow(id, status, 10_000);
    const ids = async (query: string) => (await apiOk<SearchResult>("GET", `/api/workflow/search?sort=workflowId&query=${encodeURIComponent(`workflowType = wisn_* AND ${query}`)}`)).results.map((row) => row.workflowId);
    expect(await ids("parentWorkflowId IS null")).toEqual([parent, done].sort());
    expect(await ids("parentWorkflowId IS not null")).toEqual([child]);
    // The child carries its parent's correlation id.
    expect(await ids("(correlationId IS NOT NULL)")).toEqual([parent, child].sort());
    expect(await ids("correlationId is null")).toEqual([done]);
    // A time not set yet is absent, as in Conductor's index: a running execution has no endTime.
    expect(await ids("endTime IS null")).toEqual([parent, child].sort());
    expect(await ids("endTime IS not null AND version IS not null")).toEqual([done]);
    expect(await ids("version IS null")).toEqual([]);
    for (const query of ["parentWorkflowId IS 'null'", "parentWorkflowId IS empty", "parentWorkflowId IS"]) {
      const response = await api("GET", `/api/workflow/search?query=${encodeURIComponent(query)}`);
      expect(response.status, query).toBe(400);
    }
    // The task search reads it too.
    const tasks = await apiOk<{ results: Array<{ workflowId: string }> }>("GET", `/api/tasks/search?query=${encodeURIComponent(`workflowType IN (wisn_parent, wisn_child) AND workerId IS null AND endTime IS null AND domain IS null`)}`);
    expect(tasks.results.map((task) => task.workflowId).sort()).toEqual([parent, child].sort());
  });

  it("query IN over a time column matches the exact epoch milliseconds (a JSON list's text values compare as numbers)", async () => {
    await register({ name: "search_in_time", tasks: [httpTask("a", { uri: target("/echo/in-time"), method: "GET" })] });
    const id = await startWorkflow("search_in_time");
    const done = await waitFor(id, ["COMPLETED"]);
    await searchUntil(`workflowName=search_in_time&status=COMPLETED`, (result) => result.totalHits === 1);
    const found = async (clause: string) =>
      (await apiOk<SearchResult>("GET", `/api/workflow/search?workflowName=search_in_time&query=${encodeURIComponent(clause)}`)).results.map((row) => row.workflowId);
    const start = Number(done["startTime"]);
    const end = Number(done["endTime"]);
    expect(await found(`startTime IN (${start})`)).toEqual([id]);
    expect(await found(`startTime IN (1, ${start})`)).toEqual([id]);
    expect(await found(`endTime IN ('${end}')`)).toEqual([id]);
    expect(await found(`startTime IN (${start + 1})`)).toEqual([]);
  });

  it("the summary of a failed workflow names its failed tasks, as the Workflow JSON does", async () => {
    await register({ name: "search_failed", tasks: [httpTask("boom", { uri: target("/status/500"), method: "GET" }, { name: "boom_call" })] });
    const id = await startWorkflow("search_failed");
    const workflow = await waitFor(id, ["FAILED"]);
    expect(workflow["failedReferenceTaskNames"]).toEqual(["boom"]);
    expect(workflow["failedTaskNames"]).toEqual(["boom_call"]);
    const found = await searchUntil("workflowName=search_failed&status=FAILED", (result) => result.totalHits === 1);
    expect(found.results[0]!["failedReferenceTaskNames"]).toBe("boom");
    // Conductor's WorkflowSummary.failedTaskNames: a set of task names (an array in its JSON, never left out).
    expect(found.results[0]!["failedTaskNames"]).toEqual(["boom_call"]);
  });

  it("a summary without failed tasks shows failedTaskNames as [], as Conductor's JSON always holds the set", async () => {
    await register({ name: "search_no_failures", tasks: [httpTask("fine", { uri: target("/echo/no-failures"), method: "GET" })] });
    const id = await startWorkflow("search_no_failures");
    await waitFor(id, ["COMPLETED"]);
    const found = await searchUntil("workflowName=search_no_failures&status=COMPLETED", (result) => result.totalHits === 1);
    expect(found.results[0]).toMatchObject({ workflowId: id, failedReferenceTaskNames: "", failedTaskNames: [] });
  });

  it("a task failing while the workflow keeps running (a retry is due) is named once the workflow ends, in the Workflow JSON and its search row, as Conductor fills them as it ends", async () => {
    await register({
      name: "search_failed_retry",
      tasks: [httpTask("gate", { uri: target("/echo/failed-retry"), method: "GET" }, { asyncComplete: true, retryCount: 1, retryDelaySeconds: 3600 })],
    });
    const id = await startWorkflow("search_failed_retry");
    await waitFor(id, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await waitForIndexRow(id, "RUNNING");
    await apiOk("POST", `/api/tasks/${id}/gate/FAILED`, {});
    const workflow = await waitFor(id, (w) => w.tasks[0]?.status === "FAILED");
    expect(workflow).toMatchObject({ status: "RUNNING", failedReferenceTaskNames: [], failedTaskNames: [] });
    const running = await apiOk<SearchResult>("GET", `/api/workflow/search?workflowName=search_failed_retry`);
    expect(running.results.map((row) => [row.status, row["failedReferenceTaskNames"], row["failedTaskNames"]])).toEqual([["RUNNING", "", []]]);
    // Terminated, it names its FAILED task, as Conductor's terminateWorkflow does (its retry, canceled, is not named).
    await apiOk("DELETE", `/api/workflow/${id}?reason=stop`);
    expect(await getWorkflow(id)).toMatchObject({ status: "TERMINATED", failedReferenceTaskNames: ["gate"], failedTaskNames: ["gate"] });
    const found = await searchUntil(`workflowName=search_failed_retry`, (result) => result.results[0]?.status === "TERMINATED");
    expect(found.results.map((row) => [row["failedReferenceTaskNames"], row["failedTaskNames"]])).toEqual([["gate", ["gate"]]]);
  });

  it("a row indexed before failed task names were kept shows none", async () => {
    const id = crypto.randomUUID();
    const now = Date.now();
    await env.DB.prepare(
      `INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, create_time, start_time, end_time, update_time, input, output)
       VALUES (?1, 'search_legacy_row', 1, 'FAILED', ?2, ?2, ?2, ?2, '{}', '{}')`,
    )
      .bind(id, now)
      .run();
    const found = await apiOk<SearchResult>("GET", "/api/workflow/search?workflowName=search_legacy_row");
    expect(found.results.map((row) => [row.workflowId, row["failedReferenceTaskNames"], row["failedTaskNames"]])).toEqual([[id, "", []]]);
  });

  it("keeps every statement within D1's 100 bound parameters, whatever the length of the lists and the caller's scopes", async () => {
    const now = Date.now();
    const rows = { byName: "bulk_name_77", byPrefix: "bulk_pre_25_x", hidden: "bulk_other" };
    const ids: Record<string, string> = {};
    for (const [key, name] of Object.entries(rows)) {
      ids[key] = crypto.randomUUID();
      await env.DB.prepare(
        `INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, create_time, start_time, end_time, update_time, input, output)
         VALUES (?1, ?2, 1, 'RUNNING', ?3, ?3, 0, ?3, '{}', '{}')`,
      )
        .bind(ids[key], name, now)
        .run();
    }
    // Local D1 binds far more than 100 parameters; the deployed one refuses the statement. Hold it to that.
    const limited = {
      prepare: (sql: string) => ({
        bind: (...values: unknown[]) => {
          if (values.length > 100) throw new Error(`D1_ERROR: too many SQL variables (${values.length})`);
          return env.DB.prepare(sql).bind(...values);
        },
      }),
      batch: (statements: D1PreparedStatement[]) => env.DB.batch(statements),
    } as unknown as D1Database;
    const names = Array.from({ length: 150 }, (_, n) => `bulk_name_${n}`);
    const prefixes = Array.from({ length: 30 }, (_, n) => `bulk_pre_${n}_`);
    const listed = [...names.slice(0, 120), rows.byPrefix, rows.hidden];
    const request = { query: { workflowName: listed.join(","), status: "RUNNING,PAUSED", size: "10" } } as unknown as IRequest;
    const found = await searchExecutions(limited, request, { names, prefixes });
    expect(found.results.map((row) => row["workflowId"]).sort()).toEqual([ids["byName"], ids["byPrefix"]].sort());
    expect(found.totalHits).toBe(2);

    // The most a task search binds: a caller limited by names and 20 prefixes of workflows and of tasks, a query of 20
    // clauses (STARTS_WITH, the prefix bound once) and a freeText of 20 terms.
    const clauses = (make: (n: number) => string) => Array.from({ length: MAX_QUERY_CLAUSES }, (_, n) => make(n)).join(" AND ");
    const scoped = { names: ["bulk_name_1"], prefixes: prefixes.slice(0, 20) };
    const tasksRequest = { query: { query: clauses((n) => `taskDefName STARTS_WITH bulk_${n}`), freeText: clauses((n) => `taskId:t${n}`) } } as unknown as IRequest;
    expect(await searchTasks(limited, tasksRequest, { workflows: scoped, tasks: scoped })).toEqual({ totalHits: 0, results: [] });
    const executionsRequest = { query: { query: clauses((n) => `workflowId STARTS_WITH w${n}`), freeText: clauses((n) => `workflowId:w${n}`), status: "RUNNING", workflowName: "a", correlationId: "c" } } as unknown as IRequest;
    expect(await searchExecutions(limited, executionsRequest, scoped)).toEqual({ totalHits: 0, results: [] });

    const tooMany = Array.from({ length: MAX_QUERY_CLAUSES + 1 }, () => "status = RUNNING").join(" AND ");
    const refused = await api("GET", `/api/workflow/search?query=${encodeURIComponent(tooMany)}`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toContain(`at most ${MAX_QUERY_CLAUSES}`);
  });
});

type CorrelatedMap = Record<string, WorkflowJson[]>;

const idsOf = (workflows: ReadonlyArray<{ workflowId: string }>) => workflows.map((workflow) => workflow.workflowId).sort();

/**
 * Executions of two definitions under shared correlation ids, each with one asynchronous gate, all in the
 * index: `open` (main, c1) runs, `closed` (main, c1) has completed, `second` (main, c2) and `foreign` (other, c1) run.
 */
async function correlatedFixture(prefix: string) {
  const main = `${prefix}_main`;
  const other = `${prefix}_other`;
  const [c1, c2] = [`${prefix}-c1`, `${prefix}-c2`];
  for (const name of [main, other]) await register({ name, tasks: [httpTask("gate", { uri: target(`/echo/${prefix}`), method: "GET" }, { asyncComplete: true })] });
  const open = await startWorkflow(main, {}, `?correlationId=${c1}`);
  const closed = await startWorkflow(main, {}, `?correlationId=${c1}`);
  const second = await startWorkflow(main, {}, `?correlationId=${c2}`);
  const foreign = await startWorkflow(other, {}, `?correlationId=${c1}`);
  await waitFor(closed, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
  await apiOk("POST", `/api/tasks/${closed}/gate/COMPLETED`, {});
  await waitFor(closed, ["COMPLETED"]);
  await waitForIndexRow(closed, "COMPLETED", 10_000);
  for (const id of [open, second, foreign]) await waitForIndexRow(id, "RUNNING", 10_000);
  return { main, other, c1, c2, open, closed, second, foreign };
}

describe("lookups by correlation id (served from the search index)", () => {
  it("GET /api/workflow/{name}/correlated/{correlationId} lists that name's executions with that id: running ones unless includeClosed, tasks only with includeTasks", async () => {
    const { main, other, c1, open, closed, foreign } = await correlatedFixture("corr_get");
    const path = `/api/workflow/${main}/correlated/${c1}`;
    const running = await apiOk<WorkflowJson[]>("GET", path);
    expect(idsOf(running)).toEqual([open]);
    expect(running[0]).toMatchObject({ workflowId: open, workflowName: main, correlationId: c1, status: "RUNNING", tasks: [] });
    const all = await apiOk<WorkflowJson[]>("GET", `${path}?includeClosed=true`);
    expect(idsOf(all)).toEqual([open, closed].sort());
    expect(all.every((workflow) => workflow.tasks.length === 0)).toBe(true);
    const withTasks = await apiOk<WorkflowJson[]>("GET", `${path}?includeClosed=True&includeTasks=TRUE`);
    // Spring's other words for a boolean, as PHP's http_build_query (1) or a hand (yes/off) writes them.
    expect(await apiOk<WorkflowJson[]>("GET", `${path}?includeClosed=1&includeTasks=yes`)).toEqual(withTasks);
    expect(await apiOk<WorkflowJson[]>("GET", `${path}?includeClosed=0&includeTasks=off`)).toEqual(running);
    expect(withTasks.find((workflow) => workflow.workflowId === closed)!.tasks.map((task) => [task.referenceTaskName, task.status])).toEqual([["gate", "COMPLETED"]]);
    expect(withTasks.find((workflow) => workflow.workflowId === open)!.tasks.map((task) => task.status)).toEqual(["IN_PROGRESS"]);
    expect(idsOf(await apiOk<WorkflowJson[]>("GET", `/api/workflow/${other}/correlated/${c1}`))).toEqual([foreign]);
    expect(await apiOk("GET", `/api/workflow/${main}/correlated/no-such-correlation`)).toEqual([]);
    expect(await apiOk("GET", `/api/workflow/no_such_definition/correlated/${c1}`)).toEqual([]);
  });

  it("answers what the execution says when its search row lags behind: a finished one shown running in the index is left out without includeClosed", async () => {
    const { main, c1, open, closed } = await correlatedFixture("corr_stale");
    // As if the completion's row had not been written yet.
    await env.DB.prepare("UPDATE executions SET status = 'RUNNING' WHERE workflow_id = ?").bind(closed).run();
    expect(idsOf(await apiOk<WorkflowJson[]>("GET", `/api/workflow/${main}/correlated/${c1}`))).toEqual([open]);
    const all = await apiOk<WorkflowJson[]>("GET", `/api/workflow/${main}/correlated/${c1}?includeClosed=true`);
    expect(all.find((workflow) => workflow.workflowId === closed)!.status).toBe("COMPLETED");
  });

  it("refuses (413) a batch whose ids hold more executions than a lookup reads, rather than leaving an id's list silently empty", async () => {
    const { main, c2 } = await correlatedFixture("corr_many");
    // 1,001 newer executions of one id (made-up rows: the refusal comes before any is read).
    const later = Date.now() + 60_000;
    const rows = Array.from({ length: MAX_CORRELATED_WORKFLOWS + 1 }, (_, index) => [crypto.randomUUID(), later + index] as const);
    for (let start = 0; start < rows.length; start += 50) {
      await env.DB.batch(
        rows.slice(start, start + 50).map(([id, time]) =>
          env.DB.prepare(`INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, correlation_id, create_time, start_time, end_time, update_time) VALUES (?, ?, 1, 'COMPLETED', 'corr-many-crowd', ?, ?, ?, ?)`).bind(id, main, time, time, time, time),
        ),
      );
    }
    const refused = await api("POST", "/api/workflow/correlated/batch?includeClosed=true", { workflowNames: [main], correlationIds: ["corr-many-crowd", c2] });
    expect(refused.status).toBe(413);
    expect(await refused.json()).toMatchObject({ message: expect.stringContaining("ask for fewer correlation ids") });
  });

  it("answers an id's running execution however many finished ones share the id: more than a lookup's bound of newer finished ones neither push it out nor make a 413", async () => {
    const name = "corr_reused";
    await register({ name, tasks: [httpTask("gate", { uri: target("/echo/corr-reused"), method: "GET" }, { asyncComplete: true })] });
    const open = await startWorkflow(name, {}, "?correlationId=corr-reused-customer");
    await waitForIndexRow(open, "RUNNING", 10_000);
    // A customer's id reused for years: more finished executions of it than a lookup answers with, all started after the
    // running one (made-up rows: none of them is read from an execution object by a lookup of running ones).
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, correlation_id, create_time, start_time, end_time, update_time)
       SELECT printf('corr-reused-%05d', i), ?1, 1, 'COMPLETED', 'corr-reused-customer', ?3 + i, ?3 + i, ?3 + i + 1, ?3 + i + 1 FROM n`,
    )
      .bind(name, MAX_CORRELATED_WORKFLOWS + 5, Date.now() + 60_000)
      .run();
    // Taken away after, as the large-tenant tests take theirs: later searches of the file would meet them first by start.
    try {
      expect(idsOf(await apiOk<WorkflowJson[]>("GET", `/api/workflow/${name}/correlated/corr-reused-customer`))).toEqual([open]);
      const byName = await apiOk<CorrelatedMap>("POST", `/api/workflow/${name}/correlated`, ["corr-reused-customer", "corr-reused-none"]);
      expect(idsOf(byName["corr-reused-customer"]!)).toEqual([open]);
      expect(byName["corr-reused-none"]).toEqual([]);
      const batch = await apiOk<CorrelatedMap>("POST", "/api/workflow/correlated/batch?includeTasks=true", { workflowNames: [name], correlationIds: ["corr-reused-customer"] });
      expect(idsOf(batch["corr-reused-customer"]!)).toEqual([open]);
      expect(batch["corr-reused-customer"]![0]!.tasks.map((task) => task.referenceTaskName)).toEqual(["gate"]);
    } finally {
      await env.DB.prepare("DELETE FROM executions WHERE workflow_name = ?1 AND workflow_id LIKE 'corr-reused-%'").bind(name).run();
    }
  });

  it("POST /api/workflow/correlated/batch maps each correlation id to the executions of any of the names; POST /api/workflow/{name}/correlated does it for one name", async () => {
    const { main, other, c1, c2, open, closed, second, foreign } = await correlatedFixture("corr_batch");
    const batch = await apiOk<CorrelatedMap>("POST", "/api/workflow/correlated/batch?includeClosed=true", { workflowNames: [main, other], correlationIds: [c1, c2, "corr-batch-none", c1] });
    expect(Object.keys(batch)).toEqual([c1, c2, "corr-batch-none"]);
    expect(idsOf(batch[c1]!)).toEqual([open, closed, foreign].sort());
    // Each id's newest start first (the same start: by id).
    const newestFirst = (workflows: readonly WorkflowJson[]) => [...workflows].sort((a, b) => Number(b["startTime"]) - Number(a["startTime"]) || (a.workflowId < b.workflowId ? -1 : 1));
    expect(batch[c1]!.map((workflow) => workflow.workflowId)).toEqual(newestFirst(batch[c1]!).map((workflow) => workflow.workflowId));
    expect(idsOf(batch[c2]!)).toEqual([second]);
    expect(batch["corr-batch-none"]).toEqual([]);
    const runningOfOther = await apiOk<CorrelatedMap>("POST", "/api/workflow/correlated/batch?includeTasks=true", { workflowNames: [other], correlationIds: [c1, c2] });
    expect(idsOf(runningOfOther[c1]!)).toEqual([foreign]);
    expect(runningOfOther[c1]![0]!.tasks.map((task) => task.referenceTaskName)).toEqual(["gate"]);
    expect(runningOfOther[c2]).toEqual([]);

    const byName = await apiOk<CorrelatedMap>("POST", `/api/workflow/${main}/correlated?includeClosed=true`, [c1, c2]);
    expect(Object.keys(byName)).toEqual([c1, c2]);
    expect(idsOf(byName[c1]!)).toEqual([open, closed].sort());
    expect(idsOf(byName[c2]!)).toEqual([second]);
    const runningByName = await apiOk<CorrelatedMap>("POST", `/api/workflow/${main}/correlated`, [c1]);
    expect(idsOf(runningByName[c1]!)).toEqual([open]);
    expect(runningByName[c1]![0]!.tasks).toEqual([]);
  });

  it("looks up definitions whose names are also segments of other routes (the 501s start/{name}/{version} and decide/{workflowId}, POST {workflowId}/variables): the lookup answers, not the other route", async () => {
    const gate = [httpTask("gate", { uri: target("/echo/shadowed-names"), method: "GET" }, { asyncComplete: true })];
    const started: Record<string, string> = {};
    for (const name of ["start", "decide", "variables"]) {
      await register({ name, tasks: gate });
      started[name] = await startWorkflow(name, {}, "?correlationId=shadowed-c1");
    }
    for (const id of Object.values(started)) await waitForIndexRow(id, "RUNNING", 10_000);
    expect(idsOf(await apiOk<WorkflowJson[]>("GET", "/api/workflow/start/correlated/shadowed-c1"))).toEqual([started["start"]]);
    expect(idsOf((await apiOk<CorrelatedMap>("POST", "/api/workflow/decide/correlated", ["shadowed-c1"]))["shadowed-c1"]!)).toEqual([started["decide"]]);
    expect(await apiOk<string[]>("GET", "/api/workflow/running/variables")).toEqual([started["variables"]]);
    // Execute, named by the path as the lookups are, likewise.
    const executed = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/variables?waitForSeconds=0", {});
    expect(executed).toMatchObject({ workflowName: "variables", status: "RUNNING" });
  });

  it("refuses bad parameters and bodies with 400 in the contract's shape", async () => {
    const refusals: Array<[string, string, unknown]> = [
      ["GET", "/api/workflow/corr_bad/correlated/x?includeClosed=maybe", undefined],
      ["GET", "/api/workflow/corr_bad/correlated/x?includeTasks=2", undefined],
      ["GET", `/api/workflow/corr_bad/correlated/${"c".repeat(513)}`, undefined],
      ["GET", `/api/workflow/${"n".repeat(256)}/correlated/x`, undefined],
      ["POST", "/api/workflow/correlated/batch", { workflowNames: ["corr_bad"] }],
      ["POST", "/api/workflow/correlated/batch", { workflowNames: "corr_bad", correlationIds: ["x"] }],
      ["POST", "/api/workflow/correlated/batch", { workflowNames: ["corr_bad"], correlationIds: [{ id: 5 }] }],
      ["POST", "/api/workflow/correlated/batch", { workflowNames: [""], correlationIds: ["x"] }],
      ["POST", "/api/workflow/correlated/batch", { workflowNames: ["corr_bad"], correlationIds: Array.from({ length: 1001 }, (_, n) => `c${n}`) }],
      ["POST", "/api/workflow/correlated/batch", [{ workflowName: "corr_bad", correlationIds: ["x"] }]],
      ["POST", "/api/workflow/correlated/batch?includeClosed=yep", { workflowNames: ["corr_bad"], correlationIds: ["x"] }],
      ["POST", "/api/workflow/corr_bad/correlated", { correlationIds: ["x"] }],
      ["POST", "/api/workflow/corr_bad/correlated", ["x", [7]]],
      ["POST", "/api/workflow/corr_bad/correlated", ["c".repeat(513)]],
      ["POST", "/api/workflow/corr_bad/correlated", "x"],
    ];
    for (const [method, path, body] of refusals) {
      const response = await api(method, path, body);
      const what = `${method} ${path.slice(0, 80)} ${JSON.stringify(body)?.slice(0, 80)}`;
      expect(response.status, what).toBe(400);
      expect(await response.json(), what).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    }
  });
});

describe("GET /api/workflow/running/{name}", () => {
  it("lists the ids of that name's RUNNING (and PAUSED) executions, of every version unless one is given (as Conductor's stores), within the start times when both are given", async () => {
    const name = "running_list";
    const gate = [httpTask("gate", { uri: target("/echo/running-list"), method: "GET" }, { asyncComplete: true })];
    await register({ name, tasks: gate });
    await register({ name, version: 2, tasks: gate });
    await register({ name: "running_list_other", tasks: gate });
    const first = await startWorkflow(name, {}, "?version=1");
    const done = await startWorkflow(name, {}, "?version=1");
    const later = await startWorkflow(name, {}, "?version=1");
    const v2 = await startWorkflow(name, {}, "?version=2");
    const other = await startWorkflow("running_list_other");
    await waitFor(done, (workflow) => workflow.tasks[0]?.status === "IN_PROGRESS");
    await apiOk("POST", `/api/tasks/${done}/gate/COMPLETED`, {});
    await waitForIndexRow(done, "COMPLETED", 10_000);
    for (const id of [first, later, v2, other]) await waitForIndexRow(id, "RUNNING", 10_000);

    expect((await apiOk<string[]>("GET", `/api/workflow/running/${name}`)).sort()).toEqual([first, later, v2].sort());
    expect((await apiOk<string[]>("GET", `/api/workflow/running/${name}?version=1`)).sort()).toEqual([first, later].sort());
    expect(await apiOk<string[]>("GET", `/api/workflow/running/${name}?version=2`)).toEqual([v2]);
    expect(await apiOk<string[]>("GET", `/api/workflow/running/${name}?version=3`)).toEqual([]);
    expect(await apiOk<string[]>("GET", "/api/workflow/running/no_such_definition")).toEqual([]);

    const firstStart = Number((await getWorkflow(first))["startTime"]);
    const laterStart = Number((await getWorkflow(later))["startTime"]);
    expect((await apiOk<string[]>("GET", `/api/workflow/running/${name}?version=1&startTime=${firstStart}&endTime=${laterStart}`)).sort()).toEqual([first, later].sort());
    expect(await apiOk<string[]>("GET", `/api/workflow/running/${name}?startTime=1&endTime=${firstStart - 1}`)).toEqual([]);
    expect(await apiOk<string[]>("GET", `/api/workflow/running/${name}?version=1&startTime=${laterStart + 1}&endTime=${laterStart + 10_000_000}`)).toEqual([]);
    // One bound alone is ignored, as in Conductor; so is a range with a bound of 0, which Conductor's
    // getRunningWorkflows takes for none (a client's startTime=0&endTime=0 lists the running ones).
    expect((await apiOk<string[]>("GET", `/api/workflow/running/${name}?version=1&startTime=${laterStart + 1}`)).sort()).toEqual([first, later].sort());
    expect((await apiOk<string[]>("GET", `/api/workflow/running/${name}?version=1&startTime=0&endTime=0`)).sort()).toEqual([first, later].sort());
    expect((await apiOk<string[]>("GET", `/api/workflow/running/${name}?version=1&startTime=0&endTime=${firstStart - 1}`)).sort()).toEqual([first, later].sort());
    expect((await apiOk<string[]>("GET", `/api/workflow/running/${name}?version=1&startTime=${laterStart + 1}&endTime=0`)).sort()).toEqual([first, later].sort());
    // A paused execution has not ended: Conductor lists it among the running (its pending workflows).
    await apiOk("PUT", `/api/workflow/${later}/pause`);
    await waitForIndexRow(later, "PAUSED", 10_000);
    expect((await apiOk<string[]>("GET", `/api/workflow/running/${name}?version=1`)).sort()).toEqual([first, later].sort());
  });

  it("finds them through the index of the executions not ended by name: a name's index holds every execution it ever had, the status index every one not ended of every name", async () => {
    const name = "running_plan";
    const lookups = await boundStatementsOf(/FROM executions/, async () => {
      for (const query of ["", "?version=1", "?version=1&startTime=1&endTime=2", "?startTime=1&endTime=2"]) await apiOk("GET", `/api/workflow/running/${name}${query}`);
    });
    expect(lookups).toHaveLength(4);
    for (const lookup of lookups) {
      const plan = await queryPlan(lookup);
      expect(plan, lookup.sql).toContain("SEARCH executions USING INDEX executions_pending_by_name (workflow_name=?");
      expect(plan, lookup.sql).not.toMatch(/executions_by_name|executions_by_status/);
    }
  });

  it("refuses bad parameters with 400 in the contract's shape", async () => {
    for (const query of ["version=-1", "version=x", "version=1.5", "startTime=abc&endTime=5", "startTime=5&endTime=-1", "startTime=10&endTime=5"]) {
      const response = await api("GET", `/api/workflow/running/running_bad?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json(), query).toMatchObject({ status: 400, error: "VALIDATION_ERROR" });
    }
  });
});

describe("search at a large tenant's size (D1 reads, and bills, every row a statement reads)", () => {
  /** Rows of `executions` for `name`: `count` in `status`, started at `firstStart + i * step` (ids `${name}-00001`...). */
  const insertExecutions = (name: string, status: string, count: number, firstStart: number, step: number) =>
    env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
       INSERT INTO executions (workflow_id, workflow_name, workflow_version, status, create_time, start_time, end_time, update_time, input, output)
       SELECT printf('%s-%s-%05d', ?1, ?2, i), ?1, 1, ?2, ?4 + i * ?5, ?4 + i * ?5, ?4 + i * ?5 + 1, ?4 + i * ?5 + 1, '{}', '{}' FROM n`,
    )
      .bind(name, status, count, firstStart, step)
      .run();
  /** How many rows D1 reads to run `statement` again (its `rows_read`, what it bills). */
  const rowsRead = async (statement: { sql: string; bindings: unknown[] }) => (await env.DB.prepare(statement.sql).bind(...statement.bindings).all()).meta.rows_read;
  /**
   * A search's statements (its count, its page) and a correlation lookup's on the index. Not any naming `executions`: the
   * index writer's batches for the executions earlier tests left running (their task rows, their metrics) do too, and
   * land whenever they do.
   */
  const SEARCH_STATEMENT = /^SELECT (COUNT\(\*\) AS total FROM \(SELECT 1 FROM executions |workflow_id AS workflowId, workflow_name AS workflowName, workflow_version AS workflowVersion,)/;
  const LOOKUP_STATEMENT = /^SELECT correlation_id AS correlationId, workflow_id AS workflowId, workflow_name AS workflowName FROM executions /;
  /** The search's answer and the two statements it ran (the count, then the page), each with its plan and rows read. */
  const searched = async (query: string) => {
    let answer: SearchResult | undefined;
    const statements = await boundStatementsOf(SEARCH_STATEMENT, async () => {
      answer = await apiOk<SearchResult>("GET", `/api/workflow/search?${query}`);
    });
    expect(statements, query).toHaveLength(2);
    const [count, page] = await Promise.all(statements.map(async (statement) => ({ sql: statement.sql, plan: await queryPlan(statement), rowsRead: await rowsRead(statement) })));
    return { answer: answer!, count: count!, page: page! };
  };
  const ids = (answer: SearchResult) => answer.results.map((row) => row.workflowId);
  /** The ids `${name}-${status}-i` for `i` from `from` down to `to`. */
  const idsDown = (name: string, status: string, from: number, to: number) => Array.from({ length: from - to + 1 }, (_, k) => `${name}-${status}-${String(from - k).padStart(5, "0")}`);

  it("counts at most 10,000 hits (or the page's end plus one) as Conductor's Elasticsearch 7 index does, the exact count below; pages past it still answer; by name and status through one index, in order", async () => {
    // scale_a: 10,050 COMPLETED and 30 FAILED (started between them); scale_b: 2,000 FAILED, which the status index holds too.
    await insertExecutions("scale_a", "COMPLETED", 10_050, 1_000_000, 10);
    await insertExecutions("scale_a", "FAILED", 30, 1_000_005, 100);
    await insertExecutions("scale_b", "FAILED", 2_000, 1_000_003, 10);
    try {
      // The Conductor UI's list of one name and one status (its query's IN lists, sorted by startTime), and a client's.
      for (const query of [`query=${encodeURIComponent("workflowType IN (scale_a) AND status IN (FAILED)")}&sort=startTime:DESC&start=0&size=15`, "workflowName=scale_a&status=FAILED&size=15"]) {
        const { answer, count, page } = await searched(query);
        expect(answer.totalHits, query).toBe(30);
        expect(ids(answer), query).toEqual(idsDown("scale_a", "FAILED", 30, 16));
        // Through the name-and-status index, walked in start order and left after the page: not every FAILED execution of
        // every name (the status index), nor every execution of the name (its index), each read and then sorted.
        expect(page.plan, query).toContain("SEARCH executions USING INDEX executions_by_name_status (workflow_name=? AND status=?)");
        expect(page.plan, query).not.toContain("USE TEMP B-TREE FOR ORDER BY");
        expect(page.rowsRead, query).toBeLessThan(100);
        expect(count.plan, query).toContain("executions_by_name_status (workflow_name=? AND status=?)");
        expect(count.rowsRead, query).toBeLessThan(100);
      }
      // Several names or statuses: found as before, counted exactly below 10,000.
      const either = await searched(`query=${encodeURIComponent("workflowType IN (scale_a,scale_b) AND status IN (FAILED)")}&size=5`);
      expect(either.answer.totalHits).toBe(2_030);

      // 10,080 hits: counted up to 10,000 (a lower bound, as Elasticsearch's default track_total_hits), reading no more.
      const first = await searched("workflowName=scale_a&size=15&sort=startTime:DESC");
      expect(first.answer.totalHits).toBe(10_000);
      expect(first.answer.results).toHaveLength(15);
      expect(first.count.rowsRead).toBeLessThanOrEqual(10_000);
      // The newest first, through the name's index in order (a list of one name is an equality, not a json_each SQLite sorts).
      expect(first.page.plan).toContain("SEARCH executions USING INDEX executions_by_name (workflow_name=?)");
      expect(first.page.plan).not.toContain("USE TEMP B-TREE FOR ORDER BY");
      expect(first.page.rowsRead).toBeLessThan(100);
      // A page near or past 10,000 reports more hits than its end while rows follow it, so a pager goes on to the next...
      const near = await searched("workflowName=scale_a&size=15&start=9990&sort=startTime:DESC");
      expect(near.answer.totalHits).toBe(10_006);
      expect(near.answer.results).toHaveLength(15);
      const past = await searched("workflowName=scale_a&size=15&start=10050&sort=startTime:DESC");
      expect(past.answer.totalHits).toBe(10_066);
      expect(past.answer.results).toHaveLength(15);
      // ...and the last page, whose end passes the hits, the exact count.
      const last = await searched("workflowName=scale_a&size=15&start=10070&sort=startTime:DESC");
      expect(last.answer.totalHits).toBe(10_080);
      expect(last.answer.results).toHaveLength(10);
      // search-v2 answers the same count.
      expect((await apiOk<SearchResult>("GET", "/api/workflow/search-v2?workflowName=scale_a&size=0")).totalHits).toBe(10_000);
    } finally {
      await env.DB.prepare("DELETE FROM executions WHERE workflow_name IN ('scale_a', 'scale_b')").run();
    }
  });

  it("finds a correlation id's or an execution's few rows by its index beside a name or a status, which would walk every row of the name (the equality of a list of one name or status serves their index and the order, and SQLite, without statistics, chose it)", async () => {
    // scale_c: 2,000 RUNNING executions, three of them (and one COMPLETED) of correlation id scale-corr.
    await insertExecutions("scale_c", "RUNNING", 2_000, 2_000_000, 10);
    await insertExecutions("scale_c", "COMPLETED", 1, 2_000_005, 10);
    const correlated = ["scale_c-RUNNING-00007", "scale_c-RUNNING-01500", "scale_c-RUNNING-01999", "scale_c-COMPLETED-00001"];
    await env.DB.prepare("UPDATE executions SET correlation_id = 'scale-corr' WHERE workflow_id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(correlated)).run();
    const q = (query: string) => `query=${encodeURIComponent(query)}&sort=startTime:DESC`;
    try {
      const searches: Array<[query: string, hits: string[], index: string]> = [
        // The bundled UI's list by name (and status) and correlation id, and a client's. Of RUNNING ones, through the index
        // of the running executions of each id (0050): SQLite matches a bound status against its condition.
        ["workflowName=scale_c&correlationId=scale-corr&sort=startTime:DESC", correlated.slice(0, 3).reverse().concat(correlated[3]!), "executions_by_correlation_start"],
        ["workflowName=scale_c&status=RUNNING&correlationId=scale-corr&sort=startTime:DESC", correlated.slice(0, 3).reverse(), "executions_running_by_correlation"],
        ["status=RUNNING&correlationId=scale-corr", correlated.slice(0, 3).reverse(), "executions_running_by_correlation"],
        // The Conductor UI's query of one name (and status) beside a correlation id, or an execution's id.
        [q("workflowType IN (scale_c) AND correlationId = scale-corr AND status IN (RUNNING)"), correlated.slice(0, 3).reverse(), "executions_running_by_correlation"],
        [`${q("workflowType IN (scale_c) AND status IN (RUNNING)")}&correlationId=scale-corr`, correlated.slice(0, 3).reverse(), "executions_running_by_correlation"],
        [q("workflowId IN (scale_c-RUNNING-00007) AND workflowType IN (scale_c)"), ["scale_c-RUNNING-00007"], "sqlite_autoindex_executions_1"],
        [q("workflowType = scale_c AND status = RUNNING AND workflowId IN (scale_c-RUNNING-00007, scale_c-RUNNING-01500)"), ["scale_c-RUNNING-01500", "scale_c-RUNNING-00007"], "sqlite_autoindex_executions_1"],
        [q("workflowType IN (scale_c) AND (correlationId = scale-corr OR workflowId = scale_c-RUNNING-00003)"), [...correlated.slice(0, 3).reverse(), "scale_c-RUNNING-00003", correlated[3]!], "executions_by_correlation_start"],
      ];
      for (const [query, hits, index] of searches) {
        const { answer, count, page } = await searched(query);
        expect(ids(answer), query).toEqual(hits);
        expect(answer.totalHits, query).toBe(hits.length);
        for (const statement of [count, page]) {
          expect(statement.plan, `${query}: ${statement.sql}`).toContain(`USING INDEX ${index} (`);
          expect(statement.rowsRead, `${query}: ${statement.sql}`).toBeLessThan(50);
        }
      }
      // Getting a correlation id's workflows of a name (Conductor's getWorkflows; running ones, or all of them).
      for (const [includeClosed, found] of [[false, correlated.slice(0, 3)], [true, correlated]] as const) {
        // The rows found are then read from their execution objects, which these index rows have none of (the answer a
        // 404): the index's statement is what is looked at.
        const [lookup, ...more] = await boundStatementsOf(LOOKUP_STATEMENT, () => api("GET", `/api/workflow/scale_c/correlated/scale-corr?includeClosed=${includeClosed}`));
        expect(more).toEqual([]);
        expect(await env.DB.prepare(lookup!.sql).bind(...lookup!.bindings).all<{ workflowId: string }>().then((rows) => rows.results.map((row) => row.workflowId).sort())).toEqual([...found].sort());
        // Running ones only through the index of the running executions of each id (0050).
        expect(await queryPlan(lookup!), lookup!.sql).toContain(`USING INDEX ${includeClosed ? "executions_by_correlation_start" : "executions_running_by_correlation"} (correlation_id=?)`);
        expect(await rowsRead(lookup!), lookup!.sql).toBeLessThan(50);
      }
    } finally {
      await env.DB.prepare("DELETE FROM executions WHERE workflow_name = 'scale_c'").run();
    }
  });

  it("looks up a correlation id shared by thousands of executions reading about the rows it answers with, not every execution of the id (a customer's id as correlation id)", async () => {
    // scale_d: 3,000 COMPLETED executions of correlation id scale-crowd, and 30 RUNNING ones started before them; the
    // three oldest COMPLETED ones are of scale-few.
    await insertExecutions("scale_d", "COMPLETED", 3_000, 3_000_000, 10);
    await insertExecutions("scale_d", "RUNNING", 30, 2_000_000, 10);
    await env.DB.prepare("UPDATE executions SET correlation_id = CASE WHEN status = 'COMPLETED' AND start_time <= 3000030 THEN 'scale-few' ELSE 'scale-crowd' END WHERE workflow_name = 'scale_d'").run();
    const reader = await createUser("scale-correlated-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:scale_*" }] });
    /** The lookup's statements on the index, each with the ids it finds, its plan and the rows it reads; and the response. */
    const lookedUp = async (method: string, path: string, body?: unknown, token?: string) => {
      let response: Response | undefined;
      const statements = await boundStatementsOf(LOOKUP_STATEMENT, async () => {
        response = token === undefined ? await api(method, path, body) : await call(method, path, orkes(token), body);
      });
      const read = await Promise.all(
        statements.map(async (statement) => ({
          ids: (await env.DB.prepare(statement.sql).bind(...statement.bindings).all<{ workflowId: string }>()).results.map((row) => row.workflowId),
          plan: await queryPlan(statement),
          rowsRead: await rowsRead(statement),
        })),
      );
      return { response: response!, statements: read };
    };
    try {
      // Each id's newest 1,000 (and one more, which tells the lookup there are more) in start order, newest first, through
      // the index's order, no sort: about as many rows read, where every execution of the id was read and sorted (over
      // 12,000 rows read for these 3,000).
      const newest = idsDown("scale_d", "COMPLETED", 3_000, 3_001 - MAX_CORRELATED_WORKFLOWS);
      const lookups: Array<[method: string, path: string, body?: unknown, token?: string]> = [
        ["GET", "/api/workflow/scale_d/correlated/scale-crowd?includeClosed=true"],
        ["POST", "/api/workflow/scale_d/correlated?includeClosed=true", ["scale-crowd", "scale-none", "scale-crowd"]],
        ["POST", "/api/workflow/correlated/batch?includeClosed=true", { workflowNames: ["scale_d", "scale_other"], correlationIds: ["scale-crowd"] }],
        ["POST", "/api/workflow/correlated/batch?includeClosed=true", { workflowNames: ["scale_d"], correlationIds: ["scale-crowd"] }, reader.token],
      ];
      for (const [method, path, body, token] of lookups) {
        const what = `${method} ${path} ${JSON.stringify(body)} ${token === undefined ? "" : "(granted workflow:scale_*)"}`;
        const { response, statements } = await lookedUp(method, path, body, token);
        // The answer itself is a 404: these made-up rows have no execution objects to read.
        expect(response.status, what).not.toBe(413);
        // With other ids asked for, a second statement finds none of theirs.
        const [found, others] = statements;
        expect(found!.rowsRead, what).toBeLessThan(2 * newest.length);
        expect(found!.plan, what).toContain("USING INDEX executions_by_correlation_start (correlation_id=?)");
        expect(found!.plan, what).not.toContain("TEMP B-TREE");
        expect(found!.ids.slice(0, MAX_CORRELATED_WORKFLOWS), what).toEqual(newest);
        expect(others?.ids ?? [], what).toEqual([]);
        expect(statements.length, what).toBeLessThanOrEqual(2);
      }

      // Another id's one execution beside the crowd's 1,000: a 413, as before, reading one row of it, not all of the crowd.
      const refused = await lookedUp("POST", "/api/workflow/correlated/batch?includeClosed=true", { workflowNames: ["scale_d"], correlationIds: ["scale-few", "scale-crowd"] });
      expect(refused.response.status).toBe(413);
      expect(await refused.response.json()).toMatchObject({ message: expect.stringContaining("ask for fewer correlation ids") });
      expect(refused.statements.reduce((sum, statement) => sum + statement.rowsRead, 0)).toBeLessThan(2 * newest.length);

      // Running ones only (what a client asks for most): each id's running ones in start order, through the index of the
      // running executions (0050), none of the id's 3,000 finished ones read: through the id's index they were read and
      // passed over by the status filter on the way (about 3,030 rows read for these 30 found, 31 to 35 now).
      const runningLookups: Array<[method: string, path: string, body?: unknown]> = [
        ["POST", "/api/workflow/correlated/batch", { workflowNames: ["scale_d"], correlationIds: ["scale-few", "scale-crowd"] }],
        ["POST", "/api/workflow/correlated/batch", { workflowNames: ["scale_d", "scale_other"], correlationIds: ["scale-crowd"] }],
        ["POST", "/api/workflow/scale_d/correlated", ["scale-crowd", "scale-none"]],
        ["GET", "/api/workflow/scale_d/correlated/scale-crowd?includeClosed=false"],
      ];
      for (const [method, path, body] of runningLookups) {
        const what = `${method} ${path} ${JSON.stringify(body)}`;
        const running = await lookedUp(method, path, body);
        expect(running.statements, what).toHaveLength(1);
        expect(running.statements[0]!.ids, what).toEqual(idsDown("scale_d", "RUNNING", 30, 1));
        expect(running.statements[0]!.plan, what).toContain("USING INDEX executions_running_by_correlation (correlation_id=?)");
        expect(running.statements[0]!.plan, what).not.toContain("TEMP B-TREE");
        expect(running.statements[0]!.rowsRead, what).toBeLessThanOrEqual(2 * 30 + 2);
      }
    } finally {
      await env.DB.prepare("DELETE FROM executions WHERE workflow_name = 'scale_d'").run();
    }
  });
});
