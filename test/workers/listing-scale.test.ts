import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { MAX_LISTING_CHARS } from "../../src/worker/bounded-listing";
import { call, createUser, orkes } from "./auth-helpers";
import { api, apiOk, boundStatementsOf, register, statementsOf, whilePreparing } from "./helpers";

/**
 * Listings Conductor answers whole (no page), at the size a large tenant reaches: filled straight into D1, through the
 * tables the routes write, from a definition registered through the API, since thousands of registrations would take
 * minutes.
 */

/** Runs `statements` 100 a batch. */
async function inBatches(statements: readonly D1PreparedStatement[]): Promise<void> {
  for (let start = 0; start < statements.length; start += 100) await env.DB.batch(statements.slice(start, start + 100));
}

/**
 * `count` copies of the row named `seed` in `table`, the copy `index` named `copyName(index)`: `columns` are the SELECT's,
 * in the table's order, with `?1` (or `{name}` where the name column goes) the copy's name.
 */
async function copyRows(table: string, columns: string, seed: string, count: number, copyName: (index: number) => string): Promise<void> {
  const copy = env.DB.prepare(`INSERT INTO ${table} SELECT ${columns.replace("{name}", "?1")} FROM ${table} WHERE name = ?2`);
  const statements = Array.from({ length: count }, (_, index) => copy.bind(copyName(index), seed));
  await inBatches(statements);
}

/** The message of the 413 `PAYLOAD_TOO_LARGE` that `GET path` answers (any other answer fails the test). */
async function tooLargeMessage(path: string): Promise<string> {
  const response = await api("GET", path);
  const body = (await response.json()) as { error: string; message: string };
  expect([response.status, body.error]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
  return body.message;
}

/** A definition of about 20 KB: 40 INLINE tasks whose scripts make most of it, as a large definition's tasks do. */
function largeDefinition(name: string): JsonObject {
  const tasks = Array.from({ length: 40 }, (_, index) => ({
    name: `step_${index}`,
    taskReferenceName: `step_${index}`,
    type: "INLINE",
    inputParameters: { evaluatorType: "graaljs", expression: `(function () { return ${JSON.stringify("x".repeat(400))}; })()` },
  }));
  return { name, version: 1, schemaVersion: 2, ownerEmail: "scale@example.com", tasks };
}

/** `names` × `versions` copies of the stored definition `seed`, each under its own name and version. */
async function copies(seed: string, prefix: string, names: number, versions: number): Promise<void> {
  const copy = env.DB.prepare(
    `INSERT INTO workflow_defs (name, version, definition, create_time, update_time)
     SELECT ?1, ?2, json_set(definition, '$.name', ?1, '$.version', ?2), create_time, update_time FROM workflow_defs WHERE name = ?3`,
  );
  const statements: D1PreparedStatement[] = [];
  for (let name = 0; name < names; name++) {
    for (let version = 1; version <= versions; version++) statements.push(copy.bind(`${prefix}_${String(name).padStart(4, "0")}`, version, seed));
  }
  await inBatches(statements);
}

describe("workflow definition listings of a large tenant", () => {
  // 300 workflows of 3 versions of about 20 KB: every version together over the bound, the latest ones under it.
  const names = 300;
  beforeAll(async () => {
    await register(largeDefinition("scale_seed"));
    await copies("scale_seed", "scale", names, 3);
    const stored = await env.DB.prepare(`SELECT SUM(length(definition)) AS chars FROM workflow_defs`).first<{ chars: number }>();
    expect(stored!.chars).toBeGreaterThan(MAX_LISTING_CHARS);
  }, 60_000);

  it("refuses the whole listing past the bound with a 413 naming narrower requests, rather than reading every version", async () => {
    const message = await tooLargeMessage("/api/metadata/workflow");
    expect(message).toContain(`over the ${MAX_LISTING_CHARS} one listing answers`);
    expect(message).toContain("short=true");
  });

  it("answers short=true without reading the tasks, one workflow's versions, and the lighter listings", async () => {
    const short = await apiOk<Array<{ name: string; version: number; tasks: unknown[] }>>("GET", "/api/metadata/workflow?short=true");
    expect(short).toHaveLength(names * 3 + 1);
    expect(short.every((definition) => definition.tasks.length === 0)).toBe(true);
    expect(short.slice(0, 3).map((definition) => [definition.name, definition.version])).toEqual([["scale_0000", 1], ["scale_0000", 2], ["scale_0000", 3]]);

    const versions = await apiOk<Array<{ version: number; tasks: unknown[] }>>("GET", "/api/metadata/workflow?name=scale_0007");
    expect(versions.map((definition) => [definition.version, definition.tasks.length])).toEqual([[1, 40], [2, 40], [3, 40]]);

    // Conductor OSS's UI listing counts the tasks and their types, read without the tasks' inputs.
    const list = await apiOk<Array<{ name: string; version: number; taskCount: number; taskTypes: string[] }>>("GET", "/api/metadata/workflow/list");
    expect(list).toHaveLength(names + 1);
    expect(list[0]).toMatchObject({ name: "scale_0000", version: 3, taskCount: 40, taskTypes: ["INLINE"] });

    // Filtered by tag (the clients' getAllWorkflows(tagKey, tagValue)), only the definitions holding it are read.
    await apiOk("PUT", "/api/metadata/workflow/scale_0011/tags", [{ key: "team", value: "billing" }]);
    const tagged = await apiOk<Array<{ name: string; version: number; tasks: unknown[]; tags: unknown[] }>>("GET", "/api/metadata/workflow?tagKey=team&tagValue=billing");
    expect(tagged.map((definition) => [definition.name, definition.version, definition.tasks.length])).toEqual([["scale_0011", 1, 40], ["scale_0011", 2, 40], ["scale_0011", 3, 40]]);
    expect(tagged[0]!.tags).toEqual([{ key: "team", value: "billing" }]);

    const latest = await apiOk<Array<{ version: number; tasks: unknown[] }>>("GET", "/api/metadata/workflow/latest-versions");
    expect(latest).toHaveLength(names + 1);
    expect(latest.every((definition) => definition.version === 3 || definition.version === 1)).toBe(true);
    expect(latest[0]!.tasks).toHaveLength(40);
  });
  it("reads and counts only the definitions a caller limited by its grants may see: what it may see is answered, and a 413 tells only their size", async () => {
    // By name, by a prefix of names and by a tag: about 2.2 MB of the 18 MB stored.
    await apiOk("PUT", "/api/metadata/workflow/scale_0242/tags", [{ key: "reader", value: "scale" }]);
    const reader = await createUser("scale-reader", {
      directPermissions: [
        { action: "WORKFLOW_READ", scope: "workflow:scale_0007" },
        { action: "WORKFLOW_READ", scope: "workflow:scale_01*" },
        { action: "WORKFLOW_READ", scope: "tag:reader:scale" },
        { action: "WORKFLOW_ADMIN", scope: "workflow:scale_0101" },
      ],
    });
    const read = async <T>(path: string): Promise<T> => {
      const response = await call("GET", path, orkes(reader.token));
      expect(response.status, await response.clone().text()).toBe(200);
      return (await response.json()) as T;
    };
    const seen = await read<Array<{ name: string; version: number; tasks: unknown[] }>>("/api/metadata/workflow");
    const names = [...new Set(seen.map((definition) => definition.name))];
    expect(names).toEqual(["scale_0007", ...Array.from({ length: 100 }, (_, index) => `scale_0${100 + index}`), "scale_0242"]);
    expect(seen).toHaveLength(names.length * 3);
    expect(seen[0]!.tasks).toHaveLength(40);
    // Orkes' `access`: those it may read and execute.
    const executable = await read<Array<{ name: string; version: number }>>("/api/metadata/workflow?access=EXECUTE");
    expect(executable.map((definition) => [definition.name, definition.version])).toEqual([["scale_0101", 1], ["scale_0101", 2], ["scale_0101", 3]]);
    const latest = await read<Array<{ name: string }>>("/api/metadata/workflow/latest-versions");
    expect(latest.map((definition) => definition.name)).toEqual(names);
    expect((await read<Array<{ name: string }>>("/api/metadata/workflow/list")).map((definition) => definition.name)).toEqual(names);

    // Every scale_0… version (over the bound, but not the seed): the 413 tells their size, not the tenant's.
    const wide = await createUser("scale-wide-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: "workflow:scale_0*" }] });
    const refused = await call("GET", "/api/metadata/workflow", orkes(wide.token));
    const body = (await refused.json()) as { error: string; message: string };
    expect([refused.status, body.error]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
    const visible = await env.DB.prepare(`SELECT SUM(length(definition)) AS chars FROM workflow_defs WHERE substr(name, 1, 7) = 'scale_0'`).first<{ chars: number }>();
    const stored = await env.DB.prepare(`SELECT SUM(length(definition)) AS chars FROM workflow_defs`).first<{ chars: number }>();
    expect(visible!.chars).toBeLessThan(stored!.chars);
    expect(body.message).toContain(`come to ${visible!.chars} characters`);
  });
});

describe("a caller's listing filtered in D1", () => {
  it("reads a granted prefix as the first characters of a name, whatever they are: LIKE's wildcards and letters beyond ASCII included", async () => {
    const names = ["ca%x", "caXYZ", "ca_%1", "ca_Q1", "café_1", "cafe_2", "cafés"];
    for (const name of names) await register({ name, tasks: [{ name: "wait", taskReferenceName: "wait", type: "WAIT" }] });
    const reader = await createUser("prefix-reader", {
      directPermissions: [
        { action: "WORKFLOW_READ", scope: "workflow:ca%*" },
        { action: "WORKFLOW_READ", scope: "workflow:ca_%1" },
        { action: "WORKFLOW_READ", scope: "workflow:café_*" },
      ],
    });
    const response = await call("GET", "/api/metadata/workflow?short=true", orkes(reader.token));
    expect(response.status, await response.clone().text()).toBe(200);
    expect(((await response.json()) as Array<{ name: string }>).map((definition) => definition.name)).toEqual(["ca%x", "ca_%1", "café_1"]);
  });
});

describe("task definition listing of a large tenant", () => {
  const count = 5000;
  beforeAll(async () => {
    await apiOk("POST", "/api/metadata/taskdefs", [{ name: "scale_task_seed", ownerEmail: "scale@example.com", description: "d".repeat(800), inputKeys: ["a", "b"] }]);
    const copy = env.DB.prepare(
      `INSERT INTO task_defs (name, definition, create_time, update_time)
       SELECT ?1, json_set(definition, '$.name', ?1), create_time, update_time FROM task_defs WHERE name = 'scale_task_seed'`,
    );
    const statements = Array.from({ length: count }, (_, index) => copy.bind(`scale_task_${String(index).padStart(4, "0")}`));
    await inBatches(statements);
  }, 60_000);

  it("answers 5,000 task definitions of about 1 KB whole, and past the bound a 413 naming the reads one at a time", async () => {
    const listed = await apiOk<Array<{ name: string }>>("GET", "/api/metadata/taskdefs");
    expect(listed).toHaveLength(count + 1);
    expect(listed[0]!.name).toBe("scale_task_0000");

    // Their descriptions grown to about 4 KB each: 20 MB in all.
    await env.DB.prepare(`UPDATE task_defs SET definition = json_set(definition, '$.description', ?)`).bind("d".repeat(4000)).run();
    const message = await tooLargeMessage("/api/metadata/taskdefs");
    expect(message).toContain("GET /api/metadata/taskdefs/{name}");
    // Their names, to read them one at a time: without the definitions, which are not read.
    expect(message).toContain("short=true");
    const names = await apiOk<Array<{ name: string }>>("GET", "/api/metadata/taskdefs?short=true");
    expect(names).toHaveLength(count + 1);
    expect(names[0]).toEqual({ name: "scale_task_0000" });
    // Filtered by tag, only the definitions holding it are read.
    await apiOk("PUT", "/api/metadata/task/scale_task_0123/tags", [{ key: "team", value: "billing" }]);
    const tagged = await apiOk<Array<{ name: string }>>("GET", "/api/metadata/taskdefs?tagKey=team");
    expect(tagged.map((taskDef) => taskDef.name)).toEqual(["scale_task_0123"]);

    // A caller reading the task definitions of some names only is answered those (about 400 KB), the others neither read
    // nor counted.
    const reader = await createUser("scale-task-reader", { directPermissions: [{ action: "TASK_READ", scope: "task:scale_task_01*" }, { action: "TASK_READ", scope: "task:scale_task_4321" }] });
    const response = await call("GET", "/api/metadata/taskdefs", orkes(reader.token));
    expect(response.status, await response.clone().text()).toBe(200);
    const seen = ((await response.json()) as Array<{ name: string }>).map((taskDef) => taskDef.name);
    expect(seen).toEqual([...Array.from({ length: 100 }, (_, index) => `scale_task_0${100 + index}`), "scale_task_4321"]);
  });
});

describe("schema listing of a large tenant", () => {
  // 200 schemas of 5 versions of about 20 KB each: 20 MB of bodies.
  beforeAll(async () => {
    const properties = Object.fromEntries(Array.from({ length: 200 }, (_, index) => [`field_${index}`, { type: "string", description: "p".repeat(80) }]));
    await apiOk("POST", "/api/schema", [{ name: "scale_schema_seed", version: 1, type: "JSON", data: { type: "object", properties } }]);
    const copy = env.DB.prepare(
      `INSERT INTO json_schemas (name, version, type, data, create_time, update_time)
       SELECT ?1, ?2, type, data, create_time, update_time FROM json_schemas WHERE name = 'scale_schema_seed'`,
    );
    const statements: D1PreparedStatement[] = [];
    for (let name = 0; name < 200; name++) for (let version = 1; version <= 5; version++) statements.push(copy.bind(`scale_schema_${String(name).padStart(3, "0")}`, version));
    await inBatches(statements);
  }, 60_000);

  it("refuses the whole listing past the bound with a 413, and answers short=true without reading the bodies", async () => {
    const message = await tooLargeMessage("/api/schema");
    expect(message).toContain("short=true");

    const short = await apiOk<Array<{ name: string; version: number; data?: unknown }>>("GET", "/api/schema?short=true");
    expect(short).toHaveLength(1001);
    expect(short[0]).toMatchObject({ name: "scale_schema_000", version: 1 });
    expect(short.some((schema) => "data" in schema)).toBe(false);
    expect((await apiOk<{ data: { properties: JsonObject } }>("GET", "/api/schema/scale_schema_042/3")).data.properties).toHaveProperty("field_199");
  });
});

describe("user form and event handler listings of a large tenant", () => {
  beforeAll(async () => {
    // 999 user forms of about 20 KB (their layouts) beside the seed: 20 MB, within the listing's 1,000 forms.
    const elements = Array.from({ length: 200 }, (_, index) => ({ type: "Control", scope: `#/properties/field_${index}`, label: "l".repeat(60) }));
    await apiOk("POST", "/api/human/template", { name: "scale_form_seed", jsonSchema: { type: "object" }, templateUI: { type: "VerticalLayout", elements } });
    await copyRows("human_templates", "{name}, version, json_schema, template_ui, tags, created_by, updated_by, create_time, update_time", "scale_form_seed", 999, (index) => `scale_form_${String(index).padStart(3, "0")}`);
    // 1,000 event handlers of about 20 KB (the input their action starts a workflow with) beside the seed.
    const start = { action: "start_workflow", start_workflow: { name: "scale_flow", input: { note: "n".repeat(20_000) } } };
    await apiOk("POST", "/api/event", { name: "scale_handler_seed", event: "conductor:scale:q", actions: [start], active: true });
    await copyRows("event_handlers", "{name}, event, active, json_set(handler, '$.name', ?1), create_time, update_time", "scale_handler_seed", 1000, (index) => `scale_handler_${String(index).padStart(4, "0")}`);
  }, 60_000);

  it("refuses every user form past the bound with a 413, and lists one form's versions", async () => {
    const message = await tooLargeMessage("/api/human/template");
    expect(message).toContain("name=");
    const one = await apiOk<Array<{ name: string; version: number }>>("GET", "/api/human/template?name=scale_form_017");
    expect(one.map((form) => [form.name, form.version])).toEqual([["scale_form_017", 1]]);
  });

  it("refuses every event handler past the bound with a 413, and reads one", async () => {
    const message = await tooLargeMessage("/api/event");
    expect(message).toContain("GET /api/event/{event}");
    expect(await apiOk("GET", "/api/event/handler/scale_handler_0042")).toMatchObject({ name: "scale_handler_0042", event: "conductor:scale:q" });
  });
});

describe("schedule listing of a large tenant", () => {
  // 1,200 schedules of one workflow, each with a tag, and one of another workflow.
  beforeAll(async () => {
    await register({ name: "scale_sched_flow", tasks: [{ name: "wait", taskReferenceName: "wait", type: "WAIT" }] });
    await register({ name: "scale_sched_other", tasks: [{ name: "wait", taskReferenceName: "wait", type: "WAIT" }] });
    const yearly = (name: string, workflow: string) => ({ name, cronExpression: "0 0 0 1 1 ?", startWorkflowRequest: { name: workflow, input: {} } });
    await apiOk("POST", "/api/scheduler/schedules", yearly("scale_sched_seed", "scale_sched_flow"));
    await apiOk("POST", "/api/scheduler/schedules", yearly("scale_sched_lone", "scale_sched_other"));
    const columns = "{name}, workflow_name, json_set(schedule, '$.name', ?1), paused, paused_reason, revision, start_scopes, base_url, create_time, updated_time, created_by, updated_by";
    await copyRows("schedules", columns, "scale_sched_seed", 1200, (index) => `scale_sched_${String(index).padStart(4, "0")}`);
    const tag = env.DB.prepare(`INSERT INTO metadata_tags (target_type, target_name, tag_key, tag_value) VALUES ('SCHEDULE', ?1, 'team', ?1)`);
    const statements = Array.from({ length: 1200 }, (_, index) => tag.bind(`scale_sched_${String(index).padStart(4, "0")}`));
    await inBatches(statements);
    await apiOk("PUT", "/api/scheduler/schedules/scale_sched_lone/tags", [{ key: "team", value: "scale_sched_lone" }]);
  }, 60_000);

  it("lists the first 1,000 with their tags, and reads only the tags of the schedules it lists", async () => {
    const listed = await apiOk<Array<{ name: string; tags: Array<{ key: string; value: string }> }>>("GET", "/api/scheduler/schedules");
    expect(listed).toHaveLength(1000);
    expect(listed[0]).toMatchObject({ name: "scale_sched_0000", tags: [{ key: "team", value: "scale_sched_0000" }] });

    let lone: Array<{ name: string; tags: unknown[] }> = [];
    const statements = await statementsOf(async () => {
      lone = await apiOk("GET", "/api/scheduler/schedules?workflowName=scale_sched_other");
    });
    expect(lone).toEqual([expect.objectContaining({ name: "scale_sched_lone", tags: [{ key: "team", value: "scale_sched_lone" }] })]);
    // One schedule listed: the tags read are its own, not the 1,201 other schedules'.
    const tagReads = statements.filter((sql) => sql.includes("FROM metadata_tags"));
    expect(tagReads.length).toBeGreaterThan(0);
    expect(tagReads.every((sql) => sql.includes("target_name IN"))).toBe(true);
  });
});

describe("environment variable listing of a large tenant", () => {
  // 1,100 variables of 16,000 characters (values may hold 16 KiB, and nothing caps their count): 17.6 MB in all.
  const count = 1100;
  beforeAll(async () => {
    await apiOk("PUT", "/api/environment/scale_env_seed", "v".repeat(16_000));
    await apiOk("PUT", "/api/environment/scale_env_seed/tags", [{ key: "team", value: "billing" }]);
    await copyRows("environment_variables", "{name}, value, create_time, update_time, updated_by", "scale_env_seed", count, (index) => `scale_env_${String(index).padStart(4, "0")}`);
  }, 60_000);

  it("refuses every variable past the bound with a 413 naming the reads one at a time, and answers them whole under it", async () => {
    const message = await tooLargeMessage("/api/environment");
    expect(message).toContain(`over the ${MAX_LISTING_CHARS} one listing answers`);
    expect(message).toContain("GET /api/environment/{name}");
    expect((await api("GET", "/api/environment/scale_env_0042")).status).toBe(200);
    // Their names (and tags), to read them one at a time: without the values, which are not read.
    expect(message).toContain("GET /api/environment?short=true");
    const names = (await apiOk<Array<{ name: string }>>("GET", "/api/environment?short=true")).filter((variable) => variable.name.startsWith("scale_env_"));
    expect(names).toHaveLength(count + 1);
    expect(names[0]).toEqual({ name: "scale_env_0000", tags: [] });
    expect(names.find((variable) => variable.name === "scale_env_seed")).toEqual({ name: "scale_env_seed", tags: [{ key: "team", value: "billing" }] });

    // Their values cut to 1,000 characters: 1.1 MB, answered whole with their tags.
    await env.DB.prepare(`UPDATE environment_variables SET value = substr(value, 1, 1000) WHERE name LIKE 'scale_env_%'`).run();
    const listed = await apiOk<Array<{ name: string; value: string; tags: unknown[] }>>("GET", "/api/environment");
    const scale = listed.filter((variable) => variable.name.startsWith("scale_env_"));
    expect(scale).toHaveLength(count + 1);
    expect(scale[0]).toEqual({ name: "scale_env_0000", value: "v".repeat(1000), tags: [] });
    expect(scale.find((variable) => variable.name === "scale_env_seed")).toMatchObject({ tags: [{ key: "team", value: "billing" }] });
  });
});

describe("group and user listings of a large tenant", () => {
  // A role of 200 grants (about 50 KB as a group or user answers it) given to 400 groups and 400 users: each one's
  // answer repeats its grants, 20 MB in all, from rows of a few hundred bytes.
  const count = 400;
  beforeAll(async () => {
    const permissions = Array.from({ length: 200 }, (_, index) => ({ action: "WORKFLOW_READ", scope: `workflow:${"w".repeat(200)}_${index}` }));
    await apiOk("POST", "/api/security/roles", { name: "scale_role", permissions }, 201);
    await apiOk("PUT", "/api/groups/scale_group_seed", { description: "a team", roles: ["scale_role"] });
    const copy = env.DB.prepare(
      `INSERT INTO groups (id, description, roles, permissions, default_access, create_time, update_time)
       SELECT ?1, description, roles, permissions, default_access, create_time, update_time FROM groups WHERE id = 'scale_group_seed'`,
    );
    await inBatches(Array.from({ length: count }, (_, index) => copy.bind(`scale_group_${String(index).padStart(3, "0")}`)));
    const assign = env.DB.prepare(`INSERT INTO user_assignments (user_id, roles, direct_permissions, update_time) VALUES (?1, '["scale_role"]', '[]', 0)`);
    await inBatches(Array.from({ length: count }, (_, index) => assign.bind(`scale_user_${String(index).padStart(3, "0")}`)));
  }, 60_000);

  it("refuses every group, and every user, past the bound with a 413 naming the reads one at a time, and answers them whole under it", async () => {
    const message = await tooLargeMessage("/api/groups");
    expect(message).toContain(`over the ${MAX_LISTING_CHARS} one listing answers`);
    expect(message).toContain("GET /api/groups/{id}");
    expect(await apiOk<{ roles: Array<{ permissions: unknown[] }> }>("GET", "/api/groups/scale_group_042")).toMatchObject({ id: "scale_group_042", roles: [{ name: "scale_role" }] });
    expect(await tooLargeMessage("/api/users")).toContain("GET /api/users/{id}");
    expect(await apiOk("GET", "/api/users/scale_user_042")).toMatchObject({ id: "scale_user_042", roles: [{ name: "scale_role" }] });

    // The role cut to 10 grants: 400 groups of about 2.5 KB, answered whole.
    const permissions = Array.from({ length: 10 }, (_, index) => ({ action: "WORKFLOW_READ", scope: `workflow:${"w".repeat(200)}_${index}` }));
    await apiOk("PUT", "/api/security/roles/scale_role", { permissions });
    const listed = await apiOk<Array<{ id: string; roles: Array<{ name: string; permissions: unknown[] }> }>>("GET", "/api/groups");
    const scale = listed.filter((group) => group.id.startsWith("scale_group_"));
    expect(scale).toHaveLength(count + 1);
    expect(scale[0]!.id).toBe("scale_group_000");
    expect(scale[0]!.roles.map((role) => [role.name, role.permissions.length])).toEqual([["scale_role", 10]]);
    const users = (await apiOk<Array<{ id: string }>>("GET", "/api/users")).filter((user) => user.id.startsWith("scale_user_"));
    expect(users).toHaveLength(count);
  });
});

describe("role, application and tag listings of a large tenant", () => {
  /** Text of `length` characters ending with `index`, so that each is its own. */
  const padded = (index: number, length: number) => String(index).padStart(length, "k");

  it("refuses every role past the bound with a 413 naming the reads one at a time", async () => {
    // 300 roles of 200 grants of 256-character scopes (about 60 KB each as listed): 18 MB.
    const permissions = Array.from({ length: 200 }, (_, index) => ({ action: "WORKFLOW_READ", scope: `workflow:${padded(index, 247)}` }));
    await apiOk("POST", "/api/security/roles", { name: "scale_role_seed", permissions }, 201);
    const copy = env.DB.prepare(`INSERT INTO roles (name, description, permissions, create_time, update_time) SELECT ?1, description, permissions, create_time, update_time FROM roles WHERE name = 'scale_role_seed'`);
    await inBatches(Array.from({ length: 300 }, (_, index) => copy.bind(`scale_role_${String(index).padStart(3, "0")}`)));
    const message = await tooLargeMessage("/api/security/roles");
    expect(message).toContain(`over the ${MAX_LISTING_CHARS} one listing answers`);
    expect(message).toContain("GET /api/security/roles/{name}");
    expect(await apiOk<{ permissions: unknown[] }>("GET", "/api/security/roles/scale_role_042")).toMatchObject({ name: "scale_role_042", permissions: expect.any(Array) });
    // Their names (for a picker of roles: the UI's group and application pages), the grants not read: 300 roles in a few KB.
    expect(message).toContain("GET /api/security/roles?short=true");
    const names = await apiOk<Array<{ name: string; description: string }>>("GET", "/api/security/roles?short=true");
    expect(names.filter((role) => role.name.startsWith("scale_role_"))).toHaveLength(301);
    expect(names.find((role) => role.name === "scale_role_042")).toEqual({ name: "scale_role_042", description: "" });
    // Who holds access to a definition is still answered: the roles it looks through are not the listing.
    expect(await apiOk<{ READ: unknown[] }>("GET", `/api/auth/authorization/WORKFLOW_DEF/${padded(7, 247)}`)).toMatchObject({ READ: expect.arrayContaining([{ type: "ROLE", id: "scale_role_042" }]) });
    await env.DB.prepare(`DELETE FROM roles WHERE name LIKE 'scale_role_%'`).run();
  });

  it("counts a role's name and description toward the bound of their listing with the JSON around them, as answered", async () => {
    // 4,000 roles whose names and descriptions come to just under the bound, the roles' answer (each with 29 characters
    // of `{"name":…,"description":…},`) some 116 KB over it, which was answered: only the names and descriptions counted.
    const roles = 4000;
    const before = await env.DB.prepare(`SELECT COALESCE(SUM(length(name) + length(description)), 0) AS chars FROM roles`).first<{ chars: number }>();
    const description = Math.floor((MAX_LISTING_CHARS - before!.chars - 1000) / roles) - "scale_named_0000".length;
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
       INSERT INTO roles (name, description, permissions, create_time, update_time) SELECT printf('scale_named_%04d', i), printf('%0*d', ?2, i), '[]', 0, 0 FROM n`,
    )
      .bind(roles, description)
      .run();
    const stored = await env.DB.prepare(`SELECT SUM(length(name) + length(description)) AS chars FROM roles`).first<{ chars: number }>();
    expect(stored!.chars).toBeLessThanOrEqual(MAX_LISTING_CHARS);
    expect(await tooLargeMessage("/api/security/roles?short=true")).toContain("GET /api/security/roles/{name}");
    await env.DB.prepare(`DELETE FROM roles WHERE name LIKE 'scale_named_%'`).run();
  });

  it("refuses every application past the bound with a 413 naming the reads one at a time", async () => {
    // 350 applications of 100 tags of 256-character keys and values (about 52 KB each as listed): 18 MB.
    const seed = await apiOk<{ id: string }>("POST", "/api/applications", { name: "scale_app_seed" });
    await apiOk("PUT", `/api/applications/${seed.id}/tags`, Array.from({ length: 100 }, (_, index) => ({ key: padded(index, 256), value: "v".repeat(256) })));
    const copy = env.DB.prepare(`INSERT INTO applications (id, name, tags, created_by, updated_by, create_time, update_time) SELECT ?1, name, tags, created_by, updated_by, create_time, update_time FROM applications WHERE id = ?2`);
    await inBatches(Array.from({ length: 350 }, (_, index) => copy.bind(`scale_app_${String(index).padStart(3, "0")}`, seed.id)));
    const message = await tooLargeMessage("/api/applications");
    expect(message).toContain("GET /api/applications/{id}");
    expect(await apiOk("GET", "/api/applications/scale_app_042")).toMatchObject({ id: "scale_app_042", name: "scale_app_seed" });
    await env.DB.prepare(`DELETE FROM applications WHERE id LIKE 'scale_app_%'`).run();
  });

  it("refuses every tag in use past the bound with a 413 naming a definition's own tags", async () => {
    // 40,000 tags of 256-character keys and values, 100 on each of 400 workflow definitions' names: 20 MB.
    await env.DB.prepare(
      `WITH RECURSIVE tag(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM tag WHERE i < 39999)
       INSERT INTO metadata_tags (target_type, target_name, tag_key, tag_value) SELECT 'WORKFLOW_DEF', 'scale_tagged_' || (i / 100), printf('%0256d', i), printf('%0256d', i) FROM tag`,
    ).run();
    const message = await tooLargeMessage("/api/metadata/tags");
    expect(message).toContain("GET /api/metadata/workflow/{name}/tags");
    await env.DB.prepare(`DELETE FROM metadata_tags WHERE target_name LIKE 'scale_tagged_%'`).run();
    expect(await apiOk<unknown[]>("GET", "/api/metadata/tags")).toEqual(expect.any(Array));
  });
});

describe("workflow name listings of a large tenant", () => {
  // 40,000 versions (20,000 names of 2 versions) under names of 200 characters: their names alone come to about 4 MB,
  // each version as names-and-versions answers it to about 18 MB.
  const names = 20_000;
  const nameOf = (index: number) => `scale_names_${String(index).padStart(188, "0")}`;
  beforeAll(async () => {
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 * 2 - 1)
       INSERT INTO workflow_defs (name, version, definition, create_time, update_time)
       SELECT printf('scale_names_%0188d', i / 2), i % 2 + 1, json_object('name', printf('scale_names_%0188d', i / 2), 'version', i % 2 + 1, 'tasks', json('[]')), 1000 + i, 1000 + i FROM n`,
    )
      .bind(names)
      .run();
  }, 60_000);

  it("answers one name's versions reading that name's rows alone, not every version of every name", async () => {
    const statements = await boundStatementsOf(/FROM workflow_defs/, async () => {
      expect(await apiOk<unknown[]>("GET", `/api/metadata/workflow/${nameOf(4242)}/versions`)).toEqual([
        { name: nameOf(4242), version: 1, createTime: 1000 + 8484 },
        { name: nameOf(4242), version: 2, createTime: 1000 + 8485 },
      ]);
    });
    expect(statements).toHaveLength(1);
    const { meta } = await env.DB.prepare(statements[0]!.sql).bind(...statements[0]!.bindings).all();
    // 3 (the name's two rows and the end of its range), where every version of every name was read (40,000).
    expect(meta.rows_read).toBeLessThan(10);
  });

  it("answers every name, and refuses every version with a 413 naming the names and one name's versions; a caller limited by its grants is read only its own", async () => {
    const listed = (await apiOk<string[]>("GET", "/api/metadata/workflow/names")).filter((name) => name.startsWith("scale_names_"));
    expect(listed).toHaveLength(names);
    expect(listed[17]).toBe(nameOf(17));

    const message = await tooLargeMessage("/api/metadata/workflow/names-and-versions");
    expect(message).toContain(`over the ${MAX_LISTING_CHARS} one listing answers`);
    expect(message).toContain("GET /api/metadata/workflow/names");
    expect(message).toContain("GET /api/metadata/workflow/{name}/versions");

    // A reader of a few of them: answered those, the others neither read nor counted against the bound.
    const reader = await createUser("scale-names-reader", { directPermissions: [{ action: "WORKFLOW_READ", scope: `workflow:${nameOf(7)}` }, { action: "WORKFLOW_READ", scope: `workflow:${nameOf(1).slice(0, -1)}1*` }] });
    const read = async <T>(path: string): Promise<T> => {
      const response = await call("GET", path, orkes(reader.token));
      expect(response.status, await response.clone().text()).toBe(200);
      return (await response.json()) as T;
    };
    const seen = await read<Record<string, Array<{ version: number }>>>("/api/metadata/workflow/names-and-versions");
    expect(Object.keys(seen)).toEqual([nameOf(1), nameOf(7)]);
    expect(seen[nameOf(7)]!.map((summary) => summary.version)).toEqual([1, 2]);
    expect(await read<string[]>("/api/metadata/workflow/names")).toEqual([nameOf(1), nameOf(7)]);
    await env.DB.prepare(`DELETE FROM workflow_defs WHERE name LIKE 'scale_names_%'`).run();
  });
});

describe("roles read by the user and group listings of a large tenant", () => {
  // 300 roles of 200 grants of long scopes (about 60 KB each: 18 MB) that nobody holds, and one small role that 30 groups
  // and 1,002 users hold (one of them through a group only): the listings answer the small one alone.
  const scope = "workflow:scale_held_target";
  beforeAll(async () => {
    const permissions = Array.from({ length: 200 }, (_, index) => ({ action: "WORKFLOW_READ", scope: `workflow:${String(index).padStart(247, "u")}` }));
    await apiOk("POST", "/api/security/roles", { name: "scale_unheld_seed", permissions }, 201);
    const copy = env.DB.prepare(`INSERT INTO roles (name, description, permissions, create_time, update_time) SELECT ?1, description, permissions, create_time, update_time FROM roles WHERE name = 'scale_unheld_seed'`);
    await inBatches(Array.from({ length: 300 }, (_, index) => copy.bind(`scale_unheld_${String(index).padStart(3, "0")}`)));
    await apiOk("POST", "/api/security/roles", { name: "scale_small_role", permissions: [{ action: "WORKFLOW_READ", scope }] }, 201);
    const group = env.DB.prepare(`INSERT INTO groups (id, description, roles, permissions, default_access, create_time, update_time) VALUES (?1, 'small', '["scale_small_role"]', '[]', '{}', 0, 0)`);
    await inBatches(Array.from({ length: 30 }, (_, index) => group.bind(`scale_small_group_${String(index).padStart(2, "0")}`)));
    // 1,001 users before the one holding access directly, all sorting before it.
    const assign = env.DB.prepare(`INSERT INTO user_assignments (user_id, roles, direct_permissions, update_time) VALUES (?1, '["scale_small_role"]', ?2, 0)`);
    await inBatches([
      ...Array.from({ length: 1001 }, (_, index) => assign.bind(`zy_scale_member_${String(index).padStart(4, "0")}`, "[]")),
      assign.bind("zz_scale_direct_holder", JSON.stringify([{ action: "WORKFLOW_READ", scope }])),
    ]);
    const member = env.DB.prepare(`INSERT INTO group_members (group_id, user_id) VALUES ('scale_small_group_07', ?1)`);
    await inBatches(Array.from({ length: 40 }, (_, index) => member.bind(`zy_scale_member_${String(index).padStart(4, "0")}`)));
    await inBatches([member.bind("zy_scale_grouped_only")]);
  }, 60_000);

  /** The rows D1 reads (its `rows_read`) to run again each statement `run` makes whose SQL reads `table`. */
  const rowsReadFrom = async (table: string, run: () => Promise<unknown>): Promise<number> => {
    const seen: Array<{ sql: string; bindings: unknown[] }> = [];
    await whilePreparing((sql, prepare) => {
      const statement = prepare(sql);
      if (!new RegExp(`FROM ${table}\\b`).test(sql)) return statement;
      const made = { sql, bindings: [] as unknown[] };
      seen.push(made);
      const bind = statement.bind.bind(statement);
      statement.bind = (...bindings: unknown[]) => {
        made.bindings = bindings;
        return bind(...bindings);
      };
      return statement;
    }, run);
    let rows = 0;
    for (const statement of seen) rows += (await env.DB.prepare(statement.sql).bind(...statement.bindings).all()).meta.rows_read;
    return rows;
  };
  const smallRole = { name: "scale_small_role", permissions: [{ name: "WORKFLOW_READ", scope }] };

  it("reads only the roles the groups listed hold, not every role defined", async () => {
    let listed: Array<{ id: string; roles: unknown[] }> = [];
    const rolesRead = await rowsReadFrom("roles", async () => {
      listed = await apiOk("GET", "/api/groups");
    });
    expect(listed.filter((group) => group.id.startsWith("scale_small_group_"))).toHaveLength(30);
    expect(listed.find((group) => group.id === "scale_small_group_07")!.roles).toEqual([smallRole]);
    // Every role defined (over 300) was read.
    expect(rolesRead).toBeLessThan(10);
  });

  it("reads only the roles, and the groups, the users listed hold, and a group's members in a few statements", async () => {
    let listed: Array<{ id: string; roles: unknown[]; groups: Array<{ id: string; roles: unknown[] }> }> = [];
    const rolesRead = await rowsReadFrom("roles", async () => {
      listed = await apiOk("GET", "/api/users");
    });
    const first = listed.find((user) => user.id === "zy_scale_member_0000")!;
    expect(first.roles).toEqual([smallRole]);
    expect(first.groups).toMatchObject([{ id: "scale_small_group_07", roles: [smallRole] }]);
    expect(rolesRead).toBeLessThan(10);

    // Its 41 members: their assignments, groups and roles read together, not a statement or more for each.
    let members: Array<{ id: string; roles: unknown[]; groups: Array<{ id: string }> }> = [];
    const statements = await statementsOf(async () => {
      members = await apiOk("GET", "/api/groups/scale_small_group_07/users");
    });
    expect(members).toHaveLength(41);
    expect(members[0]).toMatchObject({ id: "zy_scale_grouped_only", roles: [], groups: [{ id: "scale_small_group_07", roles: [smallRole] }] });
    expect(members[1]).toMatchObject({ id: "zy_scale_member_0000", roles: [smallRole], groups: [{ id: "scale_small_group_07" }] });
    expect(statements.length).toBeLessThan(10);
  });

  it("names who holds access however many users there are, reading in the isolate only those holding it", async () => {
    const holders = await apiOk<Record<string, Array<{ type: string; id: string }>>>("GET", "/api/auth/authorization/WORKFLOW_DEF/scale_held_target");
    // The user past the first 1,000 was never looked at.
    expect(holders["READ"]).toEqual([{ type: "USER", id: "zz_scale_direct_holder" }, { type: "ROLE", id: "scale_small_role" }]);
  });
});

describe("a group of many members", () => {
  // 20,000 members of 128-character ids (the longest a user id may be): their ids as one JSON list come to 2.6 MB, over
  // the 2 MB one bound value may hold in D1 (2.2 MB locally), as 50,000 members of 40-character ids are.
  const members = 20_000;
  beforeAll(async () => {
    await apiOk("PUT", "/api/groups/scale_crowd", { description: "everyone" });
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
       INSERT INTO group_members (group_id, user_id) SELECT 'scale_crowd', printf('crowd_%0122d', i) FROM n`,
    )
      .bind(members)
      .run();
  }, 60_000);

  it("lists every member, however many, where their ids bound as one value were refused (a 500)", async () => {
    const listed = await apiOk<Array<{ id: string; groups: Array<{ id: string }> }>>("GET", "/api/groups/scale_crowd/users");
    expect(listed).toHaveLength(members);
    expect(listed[0]).toMatchObject({ id: `crowd_${"0".repeat(122)}`, groups: [{ id: "scale_crowd" }] });
    expect(listed[members - 1]!.id).toBe(`crowd_${String(members - 1).padStart(122, "0")}`);
    await env.DB.prepare(`DELETE FROM group_members WHERE group_id = 'scale_crowd'`).run();
  });
});
