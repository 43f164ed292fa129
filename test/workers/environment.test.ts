/**
 * Orkes' environment variables (`/api/environment`, `${workflow.env.<name>}`), through the real router, execution
 * objects and local D1.
 */
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, createUser } from "./auth-helpers";
import type { JsonObject } from "../../src/engine/model";
import { ADMIN_KEY, api, apiOk, hits, register, startWorkflow, target, waitFor, type WorkflowJson } from "./helpers";

const asAdmin = { "x-api-key": ADMIN_KEY };

async function put(name: string, value: string, type = "text/plain"): Promise<Response> {
  return call("PUT", `/api/environment/${name}`, { ...asAdmin, "content-type": type }, value);
}

async function stored(name: string): Promise<string | null> {
  return (await env.DB.prepare(`SELECT value FROM environment_variables WHERE name = ?`).bind(name).first<{ value: string }>())?.value ?? null;
}

describe("environment variables", () => {
  it("are created, read, listed, replaced and deleted as Orkes' EnvironmentClient does", async () => {
    expect((await put("env_crud", "first")).status).toBe(200);
    expect((await put("env_json", JSON.stringify("as a JSON string"), "application/json")).status).toBe(200);
    const one = await api("GET", "/api/environment/env_crud");
    expect([one.status, one.headers.get("content-type"), await one.text()]).toEqual([200, "text/plain;charset=UTF-8", "first"]);
    // Orkes' EnvironmentVariable list, by name, each with its tags.
    const listed = await apiOk<Array<{ name: string; value: string; tags: unknown[] }>>("GET", "/api/environment");
    expect(listed.filter((variable) => variable.name === "env_crud" || variable.name === "env_json")).toEqual([
      { name: "env_crud", value: "first", tags: [] },
      { name: "env_json", value: "as a JSON string", tags: [] },
    ]);
    expect(listed.map((variable) => variable.name)).toEqual(listed.map((variable) => variable.name).sort());
    expect((await put("env_crud", "second")).status).toBe(200);
    expect(await stored("env_crud")).toBe("second");
    const deleted = await api("DELETE", "/api/environment/env_crud");
    expect([deleted.status, await deleted.text()]).toEqual([200, "second"]);
    expect((await api("GET", "/api/environment/env_crud")).status).toBe(404);
    expect((await api("DELETE", "/api/environment/env_crud")).status).toBe(404);
  });

  it("carry tags, as Orkes' EnvironmentClient sets, reads and removes them, which go with the variable", async () => {
    const tagsPath = "/api/environment/env_tagged/tags";
    expect((await put("env_tagged", "https://pay.example.com")).status).toBe(200);
    await apiOk("PUT", tagsPath, [{ key: "team", value: "payments" }, { key: "tier", value: "1" }]);
    // PUT adds (a key it has takes the new value); DELETE removes those given.
    await apiOk("PUT", tagsPath, [{ key: "tier", value: "2" }]);
    expect(await apiOk("GET", tagsPath)).toEqual([{ key: "team", value: "payments" }, { key: "tier", value: "2" }]);
    expect((await apiOk<Array<{ name: string; tags: unknown[] }>>("GET", "/api/environment")).find((variable) => variable.name === "env_tagged")!.tags).toEqual([
      { key: "team", value: "payments" },
      { key: "tier", value: "2" },
    ]);
    await apiOk("DELETE", tagsPath, [{ key: "tier", value: "2" }]);
    expect(await apiOk("GET", tagsPath)).toEqual([{ key: "team", value: "payments" }]);
    // Read as the variables are; changed by system admins only: a refused change leaves the tags as they were.
    const reader = await createUser("env-tag-reader@example.com", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:some_flow" }, { action: "METADATA_ADMIN", scope: "*" }] });
    expect(await (await call("GET", tagsPath, { "x-api-key": reader.apiKey })).json()).toEqual([{ key: "team", value: "payments" }]);
    for (const method of ["PUT", "DELETE"]) {
      expect((await call(method, tagsPath, { "x-api-key": reader.apiKey, "content-type": "application/json" }, JSON.stringify([{ key: "team", value: "payments" }]))).status, method).toBe(403);
    }
    expect((await api("PUT", tagsPath, [{ key: "", value: "x" }])).status).toBe(400);
    expect(await apiOk("GET", tagsPath)).toEqual([{ key: "team", value: "payments" }]);
    // Not in the metadata tags any metadata reader lists; an unknown variable has none to show or take.
    expect(await apiOk<Array<{ key: string }>>("GET", "/api/metadata/tags")).not.toContainEqual({ key: "team", value: "payments" });
    expect((await api("GET", "/api/environment/env_untagged/tags")).status).toBe(404);
    expect((await api("PUT", "/api/environment/env_untagged/tags", [{ key: "team", value: "x" }])).status).toBe(404);
    // Deleting the variable deletes its tags: one made again under that name starts with none.
    expect((await api("DELETE", "/api/environment/env_tagged")).status).toBe(200);
    expect(await env.DB.prepare(`SELECT COUNT(*) AS n FROM metadata_tags WHERE target_type = 'ENV_VARIABLE' AND target_name = 'env_tagged'`).first<{ n: number }>()).toEqual({ n: 0 });
    expect((await put("env_tagged", "again")).status).toBe(200);
    expect(await apiOk("GET", tagsPath)).toEqual([]);
  });

  it("refuses a bad name, a value too large or of another type, and callers without the right, writing nothing", async () => {
    const dotted = await put("a.b", "x");
    expect([dotted.status, ((await dotted.json()) as { error: string }).error]).toEqual([400, "VALIDATION_ERROR"]);
    expect((await put("env_big", "x".repeat(16 * 1024 + 1))).status).toBe(400);
    expect((await put("env_typed", "<x/>", "application/xml")).status).toBe(415);
    // No Content-Type at all (the JavaScript client's retry after a refreshed token): read as JSON, raw text kept.
    const untyped = await SELF.fetch("https://conductor.test/api/environment/env_untyped", { method: "PUT", headers: { "x-api-key": ADMIN_KEY }, body: new TextEncoder().encode('"https://untyped.example"') });
    expect(untyped.status).toBe(200);
    expect(await stored("env_untyped")).toBe("https://untyped.example");
    const metadataAdmin = await createUser("env-metadata-admin@example.com", { directPermissions: [{ action: "METADATA_ADMIN", scope: "*" }] });
    expect((await call("PUT", "/api/environment/env_denied", { "x-api-key": metadataAdmin.apiKey, "content-type": "text/plain" }, "https://elsewhere.example")).status).toBe(403);
    expect((await call("PUT", "/api/environment/env_denied", { "content-type": "text/plain" }, "x")).status).toBe(401);
    for (const name of ["a.b", "env_big", "env_typed", "env_denied"]) expect(await stored(name)).toBeNull();
    // Reading is for readers of workflows (or metadata admins).
    expect((await put("env_readable", "visible")).status).toBe(200);
    const reader = await createUser("env-reader@example.com", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:some_flow" }] });
    expect(await (await call("GET", "/api/environment/env_readable", { "x-api-key": reader.apiKey })).text()).toBe("visible");
    // A metadata admin may read it, not delete it: still there.
    expect((await call("DELETE", "/api/environment/env_readable", { "x-api-key": metadataAdmin.apiKey })).status).toBe(403);
    expect(await stored("env_readable")).toBe("visible");
    const nobody = await createUser("env-nobody@example.com");
    expect((await call("GET", "/api/environment", { "x-api-key": nobody.apiKey })).status).toBe(403);
  });

  it("are read by expressions as the execution started: text, JSON with .$, and null for one that does not exist", async () => {
    expect((await put("env_base", target(""))).status).toBe(200);
    expect((await put("env_cfg", JSON.stringify({ region: "eu", retries: 3 }))).status).toBe(200);
    await register({
      name: "env_flow",
      tasks: [
        { name: "gate", taskReferenceName: "gate", type: "SIMPLE", inputParameters: {} },
        { name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { uri: "${workflow.env.env_base}/count/env-flow", method: "GET" } },
        { name: "note", taskReferenceName: "note", type: "SET_VARIABLE", inputParameters: { region: "${workflow.env.env_cfg.$.region}", retries: "${workflow.env.env_cfg.$.retries}", none: "${workflow.env.env_absent}" } },
      ],
    });
    const before = await hits("env-flow");
    const first = await startWorkflow("env_flow");
    // Changed while the first waits: the first keeps what it started with, the second takes the new value.
    expect((await put("env_cfg", JSON.stringify({ region: "us", retries: 1 }))).status).toBe(200);
    const second = await startWorkflow("env_flow");
    for (const workflowId of [first, second]) await apiOk("POST", `/api/tasks/${workflowId}/gate/COMPLETED`, {});
    const done = await Promise.all([first, second].map((workflowId) => waitFor(workflowId, ["COMPLETED"])));
    expect(done.map((workflow) => workflow["variables"])).toEqual([
      { region: "eu", retries: 3, none: null },
      { region: "us", retries: 1, none: null },
    ]);
    expect(done[0]!.tasks.find((task) => task.referenceTaskName === "call")!.inputData["uri"]).toBe(target("/count/env-flow"));
    expect(await hits("env-flow")).toBe(before + 2);
  });

  it("are read afresh by a retry, a restart and a rerun: a variable fixed after a failure is what the tasks run again read", async () => {
    expect((await put("env_fix_base", target("/status/503"))).status).toBe(200);
    await register({
      name: "env_fix",
      tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP", taskDefinition: { retryCount: 0 }, inputParameters: { uri: "${workflow.env.env_fix_base}", method: "GET" } }],
    });
    const workflowId = await startWorkflow("env_fix");
    await waitFor(workflowId, ["FAILED"]);
    const calledUris = async () => (await apiOk<WorkflowJson>("GET", `/api/workflow/${workflowId}`)).tasks.map((task) => task.inputData["uri"]);

    // Each command takes the value as it is when it is asked, and keeps it for what it runs.
    const runs = [
      ["retry", `/api/workflow/${workflowId}/retry`],
      ["restart", `/api/workflow/${workflowId}/restart`],
      ["rerun", `/api/workflow/${workflowId}/rerun`],
    ] as const;
    for (const [command, path] of runs) {
      expect((await put("env_fix_base", target(`/count/env-fix-${command}`))).status).toBe(200);
      const before = await hits(`env-fix-${command}`);
      // A rerun answers the id (200), a retry and a restart 204, as Conductor's.
      await apiOk("POST", path, command === "rerun" ? {} : undefined, command === "rerun" ? 200 : 204);
      const done = await waitFor(workflowId, ["COMPLETED"]);
      expect(done.tasks.at(-1)!.inputData["uri"], command).toBe(target(`/count/env-fix-${command}`));
      expect(await hits(`env-fix-${command}`), command).toBe(before + 1);
    }
    // The restart and the rerun ran from the first task: one call, the rerun's.
    expect(await calledUris()).toEqual([target("/count/env-fix-rerun")]);
  });

  it("are read afresh for the parent too when its retry resumes a failed child, or its rerun starts inside one", async () => {
    expect((await put("env_nest_child", target("/status/503"))).status).toBe(200);
    expect((await put("env_nest_parent", target("/count/env-nest-old"))).status).toBe(200);
    await register({
      name: "env_nest_child",
      tasks: [{ name: "call", taskReferenceName: "call", type: "HTTP", taskDefinition: { retryCount: 0 }, inputParameters: { uri: "${workflow.env.env_nest_child}", method: "GET" } }],
    });
    await register({
      name: "env_nest",
      tasks: [
        { name: "child", taskReferenceName: "child", type: "SUB_WORKFLOW", subWorkflowParam: { name: "env_nest_child", version: 1 }, inputParameters: {} },
        { name: "after", taskReferenceName: "after", type: "HTTP", inputParameters: { uri: "${workflow.env.env_nest_parent}", method: "GET" } },
      ],
    });
    const workflowId = await startWorkflow("env_nest");
    const failed = await waitFor(workflowId, ["FAILED"]);
    const childId = failed.tasks[0]!.subWorkflowId!;
    expect((await put("env_nest_child", target("/count/env-nest-child"))).status).toBe(200);
    expect((await put("env_nest_parent", target("/count/env-nest-retry"))).status).toBe(200);
    // The retry resumes the same child (which reads its own afresh) and the parent's later task reads the new value.
    await apiOk("POST", `/api/workflow/${workflowId}/retry?resumeSubworkflowTasks=true`, undefined, 204);
    const retried = await waitFor(workflowId, ["COMPLETED"]);
    expect(retried.tasks[0]!.subWorkflowId).toBe(childId);
    expect(retried.tasks.at(-1)!.inputData["uri"]).toBe(target("/count/env-nest-retry"));
    expect(await hits("env-nest-retry")).toBe(1);
    expect(await hits("env-nest-old")).toBe(0);
    // A rerun from the child's task: the same for the value the parent's later task reads.
    expect((await put("env_nest_parent", target("/count/env-nest-rerun"))).status).toBe(200);
    const childTask = (await apiOk<WorkflowJson>("GET", `/api/workflow/${childId}`)).tasks[0]!;
    await apiOk("POST", `/api/workflow/${workflowId}/rerun`, { reRunFromTaskId: childTask.taskId });
    const rerun = await waitFor(workflowId, ["COMPLETED"]);
    expect(rerun.tasks.at(-1)!.inputData["uri"]).toBe(target("/count/env-nest-rerun"));
    expect(await hits("env-nest-rerun")).toBe(1);
  });

  it("are read for the definition a restart on the latest version or an upgrade runs", async () => {
    expect((await put("env_new_region", "eu-west")).status).toBe(200);
    const version = (n: number, tasks: JsonObject[]) => ({ name: "env_versions", version: n, tasks });
    const gate = { name: "gate", taskReferenceName: "gate", type: "SIMPLE", inputParameters: {} };
    const note = (region: string) => ({ name: "note", taskReferenceName: "note", type: "SET_VARIABLE", inputParameters: { region } });
    await register(version(1, [gate, note("none")]));
    await register(version(2, [gate, note("${workflow.env.env_new_region}")]));

    // Version 1 names no variable; upgraded while it waits, it runs on with those version 2 names.
    const upgraded = await startWorkflow("env_versions", {}, "?version=1");
    await waitFor(upgraded, (workflow) => workflow.tasks.some((task) => task.referenceTaskName === "gate"));
    await apiOk("POST", `/api/workflow/${upgraded}/upgrade`, { name: "env_versions", version: 2 });
    await apiOk("POST", `/api/tasks/${upgraded}/gate/COMPLETED`, {});
    expect((await waitFor(upgraded, ["COMPLETED"]))["variables"]).toEqual({ region: "eu-west" });

    // Restarted on the latest version, version 1's run reads what version 2 names, as it is at the restart.
    const restarted = await startWorkflow("env_versions", {}, "?version=1");
    await apiOk("POST", `/api/tasks/${restarted}/gate/COMPLETED`, {});
    expect((await waitFor(restarted, ["COMPLETED"]))["variables"]).toEqual({ region: "none" });
    expect((await put("env_new_region", "us-east")).status).toBe(200);
    await apiOk("POST", `/api/workflow/${restarted}/restart?useLatestDefinitions=true`, undefined, 204);
    await apiOk("POST", `/api/tasks/${restarted}/gate/COMPLETED`, {});
    expect((await waitFor(restarted, ["COMPLETED"]))["variables"]).toEqual({ region: "us-east" });

  });

  it("refuse a dynamic fork whose tasks, given as the workflow runs, read a variable the definition does not name", async () => {
    expect((await put("env_fork_named", "named")).status).toBe(200);
    expect((await put("env_fork_unnamed", "unnamed")).status).toBe(200);
    // The forked tasks come from data: the expression is put together as the script runs, so the definition never names it.
    const forking = (variable: string): JsonObject => ({
      name: "env_fork",
      tasks: [
        { name: "mk", taskReferenceName: "mk", type: "INLINE", inputParameters: { evaluatorType: "javascript", variable, named: "${workflow.env.env_fork_named}", expression: "(function(){return [{name:'s',taskReferenceName:'s1',type:'SET_VARIABLE',inputParameters:{v:'$'+'{workflow.env.'+$.variable+'}'}}];})()" } },
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN_DYNAMIC", dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs", inputParameters: { tasks: "${mk.output.result}", inputs: {} } },
        { name: "join", taskReferenceName: "join", type: "JOIN" },
      ],
    });
    await register(forking("env_fork_unnamed"));
    const refused = await waitFor(await startWorkflow("env_fork"), ["FAILED"]);
    const fork = refused.tasks.find((task) => task.referenceTaskName === "fork")!;
    expect(fork.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(fork["reasonForIncompletion"]).toContain("read environment variables the workflow's definition does not name (${workflow.env.env_fork_unnamed})");
    expect(refused.tasks.some((task) => task.referenceTaskName === "s1")).toBe(false);

    // One the definition names (here in the script's input) is read as it started.
    await register(forking("env_fork_named"));
    const forked = await waitFor(await startWorkflow("env_fork"), ["COMPLETED"]);
    expect(forked["variables"]).toEqual({ v: "named" });
  });
});
