import { waitForWebhookTask } from "@io-orkes/conductor-javascript";
import { describe, expect, it } from "vitest";
import type { JsonObject, WorkflowTaskDef } from "../../src/engine/model";
import { eventMatchKey, eventMeets, parseMatchesKey, parseMatchPath, parseWebhookKey, parseWebhookKeyPath, valueAt, waitingMatch, writtenMatches } from "../../src/engine/tasks/wait-for-webhook/matches";
import { registrationErrors, startedWith, taskDefNamed } from "./engine-env";

// Orkes' webhook matches (src/engine/tasks/wait-for-webhook/matches.ts): the engine alone.

describe("webhook match paths", () => {
  it("follow $['a']['b'], $.a.b, [\"a\"] and list positions, and refuse what selects several values", () => {
    expect(parseMatchPath("$['event']['type']")).toEqual(["event", "type"]);
    expect(parseMatchPath('$.data["order id"].items[2]')).toEqual(["data", "order id", "items", 2]);
    expect(parseMatchPath("$['it\\'s']")).toEqual(["it's"]);
    for (const bad of ["event.type", "$", "$.items[*]", "$..id", "$.items[?(@.x)]", "$['a'", "$.items[-1]"]) expect(parseMatchPath(bad)).toBeInstanceOf(Error);
    expect(valueAt({ data: { items: [{ id: 1 }, { id: 2 }] } }, ["data", "items", 1, "id"])).toBe(2);
    expect(valueAt({ data: {} }, ["data", "missing"])).toBeUndefined();
    // Own fields only.
    expect(valueAt({}, ["constructor"])).toBeUndefined();
  });

  it("name after a dot what a workflow expression's dotted step reads, as Jayway JsonPath reads a property up to '.', '[' or '(': $, @, #, letters beyond ASCII", () => {
    expect(parseMatchPath("$.data.@type")).toEqual(["data", "@type"]);
    expect(parseMatchPath("$.größe.#text")).toEqual(["größe", "#text"]);
    expect(parseMatchPath("$.schema.$ref.名前[0]")).toEqual(["schema", "$ref", "名前", 0]);
    expect(parseMatchPath("$.😀.e@x#y")).toEqual(["😀", "e@x#y"]);
    expect(parseMatchesKey("@type")).toEqual(["@type"]);
    // A webhook's idempotencyKey written as an expression names the key the workflow's expressions read.
    expect(parseWebhookKeyPath("${workflow.input.@id}")).toEqual(["@id"]);
    expect(parseWebhookKeyPath("${workflow.input.bestellung.größe}")).toEqual(["bestellung", "größe"]);
    // Whitespace (ASCII or not) and the characters a dotted step refuses still need a bracket.
    for (const bad of ["$.a b", "$.a\u00a0b", "$.\u3000", "$.a/b", "$.a+b", "$.a%b", "$.a*"]) expect(parseMatchPath(JSON.parse(`"${bad}"`))).toBeInstanceOf(Error);
  });

  it("as a webhook's idempotencyKey, are a JSONPath or a text with ${workflow.input.<path>} references (Orkes resolves the key's references in its text)", () => {
    expect(parseWebhookKey("$.id")).toEqual([{ path: ["id"] }]);
    expect(parseWebhookKey("${workflow.input.bug_id}")).toEqual([{ path: ["bug_id"] }]);
    expect(parseWebhookKey("${workflow.input['a}b']}")).toEqual([{ path: ["a}b"] }]);
    expect(parseWebhookKey("pr-${workflow.input.repository.id}/${ workflow.input['number'] }")).toEqual([{ text: "pr-" }, { path: ["repository", "id"] }, { text: "/" }, { path: ["number"] }]);
    for (const bad of ["pr-fixed", "${workflow.variables.id}", "a-${workflow.input.id}-${secret}", "${workflow.input}", "$.items[*]"]) expect(parseWebhookKey(bad)).toBeInstanceOf(Error);
  });

  it("as matches keys, may leave out the $ (Conductor's docs write field names: event, data.id), read from the top of the event", () => {
    expect(parseMatchesKey("event")).toEqual(["event"]);
    expect(parseMatchesKey("data.items[0].id")).toEqual(["data", "items", 0, "id"]);
    expect(parseMatchesKey("['order id']")).toEqual(["order id"]);
    expect(parseMatchesKey("$.event")).toEqual(["event"]);
    for (const bad of ["items[*]", "", "..id"]) expect(parseMatchesKey(bad)).toBeInstanceOf(Error);
    const event = { event: "payment.completed", customer_id: "cus_123" };
    expect(eventMeets(event, "orders", 1, "paid", { event: "payment.completed", customer_id: "cus_123" })).toBe(true);
    expect(eventMeets(event, "orders", 1, "paid", { event: "payment.completed", customer_id: "cus_999" })).toBe(false);
  });

  it("make one key of a waiting task's resolved values and of an event holding them, as text trimmed and case-insensitive", () => {
    const match = waitingMatch("orders", 1, "paid", { "$.data.orderId": "A-1", "$['event']['type']": "Payment.Completed", "$.data.count": 3 });
    if (match instanceof Error) throw match;
    expect(match.paths).toEqual(["$.data.count", "$.data.orderId", "$['event']['type']"]);
    const event = { event: { type: " payment.completed" }, data: { orderId: "a-1", count: "3" } };
    expect(eventMatchKey(event, "orders", 1, "paid", match.paths)).toBe(match.key);
    expect(eventMatchKey({ ...event, data: { orderId: "A-2", count: 3 } }, "orders", 1, "paid", match.paths)).not.toBe(match.key);
    // Another version, another task: another key.
    expect(eventMatchKey(event, "orders", 2, "paid", match.paths)).not.toBe(match.key);
    expect(eventMatchKey({ event: { type: { nested: true } } }, "orders", 1, "paid", ["$['event']['type']"])).toBeUndefined();
    expect(waitingMatch("orders", 1, "paid", { "$.id": null })).toBeInstanceOf(Error);
    expect(eventMeets(event, "orders", 1, "paid", { "$.data.orderId": "A-1", "$['event']['type']": "Payment.Completed", "$.data.count": 3 })).toBe(true);
    expect(eventMeets(event, "orders", 1, "paid", { "$.data.orderId": "A-2" })).toBe(false);
    expect(eventMeets(event, "orders", 1, "paid", { "$.id": null })).toBe(false);
    expect(waitingMatch("orders", 1, "paid", {})).toEqual({ paths: [], key: eventMatchKey({}, "orders", 1, "paid", []) });
  });

  it("are read from inputParameters.matches and from the input's own $ keys (the official client's builder)", () => {
    expect(writtenMatches({ matches: { "$.a": "1" }, "$.b": "2", timeoutSeconds: 5 })).toEqual({ "$.a": "1", "$.b": "2" });
    expect(writtenMatches({ timeoutSeconds: 5 })).toBeUndefined();
  });
});

describe("WAIT_FOR_WEBHOOK with matches", () => {
  const hook = (inputParameters: JsonObject): WorkflowTaskDef => ({ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters });

  it("registers either way of writing them, and refuses paths it cannot follow or values no event can hold", () => {
    expect(registrationErrors([hook({ matches: { "$['event']['type']": "message", "$.channel": "${workflow.input.channel}" } })])).toEqual([]);
    expect(registrationErrors([JSON.parse(JSON.stringify(waitForWebhookTask("hook", { matches: { "$['event']['type']": "message" } })))])).toEqual([]);
    expect(registrationErrors([hook({ matches: "${workflow.input.matches}" })])).toEqual([]);
    expect(registrationErrors([hook({ matches: { event: "payment.completed", customer_id: "${workflow.input.customer}" } })])).toEqual([]);
    expect(registrationErrors([hook({ matches: { "$.items[*]": "x" } })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.matches\.\$\.items\[\*\]: the key can only name fields/)]);
    expect(registrationErrors([hook({ matches: { "$.a": { nested: 1 } } })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.matches\.\$\.a: must be the text, number or boolean/)]);
    expect(registrationErrors([hook({ matches: ["$.a"] })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.matches: matches must be an object/)]);
  });

  it("waits IN_PROGRESS when its matches resolve to values; fails at once when one resolves to nothing", () => {
    const waiting = startedWith("hooks", [hook({ matches: { "$.id": "${workflow.input.id}" } })], { id: "x" }).state;
    expect(waiting.tasks[0]).toMatchObject({ status: "IN_PROGRESS", inputData: { matches: { "$.id": "x" } } });
    const failed = startedWith("hooks", [hook({ matches: { "$.id": "${workflow.input.id}" } })], {}).state;
    expect(failed.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining('matches "$.id" resolved to null') });
  });

  // The stored input holds a secret as "***": the match would hold only for an event carrying "***".
  it("refuses secrets in its matches, written in the task or added by its task definition's inputTemplate", () => {
    const secretIssue = (path: string) => expect.stringMatching(new RegExp(`^tasks\\[0\\]\\.inputParameters\\.${path}: matches must not use secrets \\(slack_token\\)`));
    expect(registrationErrors([hook({ matches: { "$.token": "${workflow.secrets.slack_token}", "$.type": "msg" } })])).toEqual([secretIssue("matches\\.\\$\\.token")]);
    expect(registrationErrors([hook({ "$.token": "t-${workflow.secrets.slack_token}" })])).toEqual([secretIssue("\\$\\.token")]);
    expect(registrationErrors([hook({ matches: "${workflow.secrets.slack_token}" })])).toEqual([secretIssue("matches")]);
    // Elsewhere in the input a secret is what it always was (a header the callback must carry).
    expect(registrationErrors([hook({ matches: { "$.type": "msg" }, headers: { "X-Token": "${workflow.secrets.slack_token}" } })])).toEqual([]);
    const fromTaskDef = startedWith("hooks", [{ ...hook({ matches: { "$.type": "msg" } }), taskDefinition: taskDefNamed("hook", { inputTemplate: { "$.token": "${workflow.secrets.slack_token}" } }) }]).state;
    expect(fromTaskDef.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("matches must not use secrets (slack_token)") });
  });
});
