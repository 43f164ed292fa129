import { describe, expect, it } from "vitest";
import { createExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { masked } from "../../src/engine/masking";
import { MAX_SCRUBBED_REASON_LENGTH, reasonMaskedOf } from "../../src/engine/masked-reason";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import type { WorkflowDef } from "../../src/engine/model";
import { summaryRowOf, toTaskView, toWorkflowView } from "../../src/engine/view";
import { attemptEnds, env, httpGet, taskDefNamed } from "./engine-env";

describe("masked parameters (_secrets, _masked)", () => {
  it("shows their values as *** at any depth, in objects and arrays, and copies nothing when there are none", () => {
    const plain = { a: 1, b: { c: [1, { d: "x" }] } };
    expect(masked(plain)).toBe(plain);
    const input = { user: "ann", _secrets: { token: "t0p" }, nested: { list: [{ _masked: "4111" }, 2], keep: "k" } };
    expect(masked(input)).toEqual({ user: "ann", _secrets: "***", nested: { list: [{ _masked: "***" }, 2], keep: "k" } });
    // The value itself is left as it was.
    expect(input._secrets.token).toBe("t0p");
    const proto = JSON.parse('{"__proto__": {"_secrets": "x"}}') as Record<string, unknown>;
    const shown = masked(proto as never) as Record<string, unknown>;
    expect(Object.getPrototypeOf(shown)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(shown, "__proto__")?.value).toEqual({ _secrets: "***" });
  });

  it("masks what the API shows of an execution, its tasks and its search row, keeping the real values in the execution", () => {
    const definition: WorkflowDef = {
      name: "masked",
      version: 1,
      schemaVersion: 2,
      variables: { _masked: { pin: "1234" } },
      tasks: [{ name: "w", taskReferenceName: "w", type: "SIMPLE", inputParameters: { _secrets: { token: "${workflow.input._secrets.token}" }, user: "${workflow.input.user}" } }],
    };
    const state = decide(createExecution({ workflowId: "wf-1", definition, input: { user: "ann", _secrets: { token: "t0p" } } }, 1_000), { type: "start" }, env(1_000)).state;
    expect(state.tasks[0]!.inputData).toEqual({ _secrets: { token: "t0p" }, user: "ann" });
    const view = toWorkflowView(state, true);
    expect(view).toMatchObject({ input: { user: "ann", _secrets: "***" }, variables: { _masked: "***" } });
    expect(toTaskView(state.tasks[0]!, state)["inputData"]).toEqual({ _secrets: "***", user: "ann" });
    expect(JSON.parse(summaryRowOf(state).input)).toEqual({ user: "ann", _secrets: "***" });
    expect(JSON.stringify(view)).not.toContain("t0p");
  });

  it("masks the keys a definition's maskedFields names too, in the execution, its tasks and its search row, at any depth", () => {
    const definition: WorkflowDef = {
      name: "masked_fields",
      version: 1,
      schemaVersion: 2,
      maskedFields: ["ssn", "card"],
      tasks: [{ name: "w", taskReferenceName: "w", type: "SIMPLE", inputParameters: { ssn: "${workflow.input.ssn}", person: { name: "${workflow.input.name}", card: "${workflow.input.card}" } } }],
    };
    const state = decide(createExecution({ workflowId: "wf-2", definition, input: { name: "ann", ssn: "123-45-6789", card: "4111" } }, 1_000), { type: "start" }, env(1_000)).state;
    // Expressions read the real values.
    expect(state.tasks[0]!.inputData).toEqual({ ssn: "123-45-6789", person: { name: "ann", card: "4111" } });
    expect(toWorkflowView(state, true)["input"]).toEqual({ name: "ann", ssn: "***", card: "***" });
    expect(toTaskView(state.tasks[0]!, state)["inputData"]).toEqual({ ssn: "***", person: { name: "ann", card: "***" } });
    expect(JSON.parse(summaryRowOf(state).input)).toEqual({ name: "ann", ssn: "***", card: "***" });
    // Another definition's executions show them.
    const plain = decide(createExecution({ workflowId: "wf-3", definition: { ...definition, maskedFields: undefined }, input: { ssn: "1" } }, 1_000), { type: "start" }, env(1_000)).state;
    expect(toWorkflowView(plain, false)["input"]).toEqual({ ssn: "1" });
  });

  it("masks what a task's input took from a masked value under another key, whole or inside text, as Conductor's e2e MaskSensitiveDataInWorkflowE2ETest has it", () => {
    const definition: WorkflowDef = {
      name: "derived_masking",
      version: 1,
      schemaVersion: 2,
      maskedFields: ["apiKey", "ssn", "creditCard"],
      tasks: [
        {
          name: "call",
          taskReferenceName: "call",
          type: "SIMPLE",
          inputParameters: {
            headers: {
              "X-Api-Key": "${workflow.input.apiKey}",
              "X-Ssn": "This is my SSN ${workflow.input.ssn}, for ${workflow.input.name}",
              "X-Card": "${workflow.input.payment.creditCard}",
              "X-Card-Any": "${workflow.input.cards[*].creditCard}",
              "X-Name": "${workflow.input.name}",
              "X-Inner": "${workflow.input._masked.pin}",
            },
            list: ["${workflow.input.apiKey}", "plain"],
          },
        },
      ],
    };
    const input = { apiKey: "key-789", ssn: "111-22-3333", name: "ann", payment: { creditCard: "4111" }, cards: [{ creditCard: "5500" }], _masked: { pin: "1234" } };
    const state = decide(createExecution({ workflowId: "wf-4", definition, input }, 1_000), { type: "start" }, env(1_000)).state;
    // The task runs with the real values.
    expect(state.tasks[0]!.inputData["headers"]).toMatchObject({ "X-Api-Key": "key-789", "X-Ssn": "This is my SSN 111-22-3333, for ann" });
    const shown = toTaskView(state.tasks[0]!, state)["inputData"];
    expect(shown).toEqual({
      headers: { "X-Api-Key": "***", "X-Ssn": "This is my SSN ***, for ann", "X-Card": "***", "X-Card-Any": "***", "X-Name": "ann", "X-Inner": "***" },
      list: ["***", "plain"],
    });
    // A masked value holding the text that follows it could not be told apart from the next value: the whole text is masked.
    const tricky = decide(createExecution({ workflowId: "wf-6", definition, input: { ...input, ssn: "1, for ann, for x" } }, 1_000), { type: "start" }, env(1_000)).state;
    expect((toTaskView(tricky.tasks[0]!, tricky)["inputData"] as { headers: Record<string, string> }).headers["X-Ssn"]).toBe("***");
    // A definition without those maskedFields shows them.
    const plain = decide(createExecution({ workflowId: "wf-5", definition: { ...definition, name: "derived_plain", maskedFields: undefined, tasks: structuredClone(definition.tasks) }, input }, 1_000), { type: "start" }, env(1_000)).state;
    expect((toTaskView(plain.tasks[0]!, plain)["inputData"] as { headers: Record<string, string> }).headers["X-Api-Key"]).toBe("key-789");
  });

  it("keeps maskedFields as a list of distinct names, none when empty or null, and refuses anything else at its path", () => {
    const base = { name: "m", version: 1, schemaVersion: 2, tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP" }] };
    const kept = validateWorkflowDef({ ...base, maskedFields: ["ssn", "card", "ssn"] });
    expect(kept.ok && kept.value.maskedFields).toEqual(["ssn", "card"]);
    for (const none of [[], null]) {
      const result = validateWorkflowDef({ ...base, maskedFields: none });
      expect(result.ok && "maskedFields" in result.value).toBe(false);
    }
    for (const bad of ["ssn", [""], [7], ["x".repeat(256)], Array.from({ length: 101 }, (_, i) => `f${i}`)]) {
      const result = validateWorkflowDef({ ...base, maskedFields: bad });
      expect(result.ok ? [] : result.errors.map((issue) => issue.path.split("[")[0]), JSON.stringify(bad).slice(0, 40)).toEqual(["maskedFields"]);
    }
  });
});

describe("failure reasons quoting masked values", () => {
  it("shows *** for each value, as written or JSON-escaped, and for a quoted fragment that is part of one", () => {
    expect(reasonMaskedOf("bad ssn 123-45-6789", ["123-45-6789"])).toBe("bad ssn ***");
    expect(reasonMaskedOf('string ("a\\"b-cd") cannot be added', ['a"b-cd'])).toBe('string ("***") cannot be added');
    // QuickJS quotes the token it stopped at: the start of the value only.
    expect(reasonMaskedOf("SyntaxError: unexpected token: 'zq7token'", ["zq7token-of-mine"])).toBe("SyntaxError: unexpected token: '***'");
    // A quoted fragment no value holds, and a short value outside quotes, stay: they are the error's own words.
    expect(reasonMaskedOf("expecting ';' at line 1", ["zq7token-of-mine", "ab"])).toBe("expecting ';' at line 1");
    expect(reasonMaskedOf("an abc", [])).toBe("an abc");
  });

  it("shows *** for the start of a value a message cuts short, as jq's do (11 characters and ...), whole or inside text", () => {
    // jq's "cannot be added" shows each operand's JSON cut to 11 characters, with no closing quote.
    expect(reasonMaskedOf('string ("zq7token-o...) and number (1) cannot be added', ["zq7token-of-mine-0123"])).toBe('string ("***...) and number (1) cannot be added');
    expect(reasonMaskedOf("number (41111111111...) and string (\"a\") cannot be added", [4111111111111111].map(String))).toBe('number (***...) and string ("a") cannot be added');
    expect(reasonMaskedOf('object ({"card":"41...) and number (1) cannot be added', ["4111111111111111"])).toBe('object ({"card":"***...) and number (1) cannot be added');
    expect(reasonMaskedOf('Invalid path expression with result "Bearer zq7token-of-mi...', ["zq7token-of-mine-0123"])).toBe('Invalid path expression with result "Bearer ***...');
    // A cut value that is no masked value's start stays.
    expect(reasonMaskedOf('string ("hello worl...) and number (1) cannot be added', ["zq7token-of-mine-0123"])).toBe('string ("hello worl...) and number (1) cannot be added');
  });

  it("shows *** for the whole of a quoted fragment a shorter masked value was replaced in: the rest may be part of a longer one", () => {
    // "admin" is replaced first; "'***_prod_key'" is then no part of a value, yet "_prod_key" is part of the second.
    expect(reasonMaskedOf("SyntaxError: unexpected token: 'admin_prod_key'", ["admin", "admin_prod_key-2026"])).toBe("SyntaxError: unexpected token: '***'");
  });

  it("cuts a long reason before scrubbing it, masking the start of a value at the cut, and looks up every quoted fragment", () => {
    // A script error that dumps its input: what is kept of it is cut to 500 characters after, so it is cut first.
    const value = "zq7token-of-mine-0123";
    const long = "x".repeat(MAX_SCRUBBED_REASON_LENGTH - 5) + value + " and more".repeat(1_000);
    const scrubbed = reasonMaskedOf(long, [value]);
    expect(scrubbed).toBe("x".repeat(MAX_SCRUBBED_REASON_LENGTH - 5) + "***...");
    // Without masked values it is cut all the same: stored twice in the task's row (its reason and output.error), an
    // error of megabytes made the row too large to store.
    expect(reasonMaskedOf(long, [])).toBe(`${long.slice(0, MAX_SCRUBBED_REASON_LENGTH)}...`);
    // Looking up a fragment no longer reads every masked value again: past the first 64 they are looked up too.
    const fragments = Array.from({ length: 70 }, (_, index) => `'w${index}'`).join(" ") + " 'n-of'";
    const many = reasonMaskedOf(fragments, [value]).split(" ");
    expect(many.slice(0, 70)).toEqual(Array.from({ length: 70 }, (_, index) => `'w${index}'`));
    expect(many[70]).toBe("'***'");
  });
});

describe("failure reasons of checks that quote masked values", () => {
  /** A workflow of one HTTP task following a task definition that enforces schemas `in` and `out`, started with `input`. */
  function schemaChecked(inputParameters: WorkflowDef["tasks"][number]["inputParameters"], schemas: { in?: object; out?: object }, input: Record<string, unknown>, maskedFields?: string[]) {
    const taskDefinition = { ...taskDefNamed("call"), inputSchema: { name: "in" }, outputSchema: { name: "out" }, enforceSchema: true };
    const kept = [{ key: "in@latest", data: (schemas.in ?? {}) as never }, { key: "out@latest", data: (schemas.out ?? {}) as never }];
    const definition: WorkflowDef = { name: "checked", version: 1, schemaVersion: 2, tasks: [{ ...httpGet("call"), inputParameters: { uri: "https://example.com/x", method: "GET", ...inputParameters }, taskDefinition }], schemas: kept, ...(maskedFields === undefined ? {} : { maskedFields }) };
    return decide(createExecution({ workflowId: "wf-s", definition, input: input as never }, 1_000), { type: "start" }, env(1_000));
  }

  it("shows *** for a masked value of a task's input that its input schema's refusal quotes", () => {
    const inSchema = { type: "object", properties: { _secrets: { type: "object", properties: { pin: { maximum: 100 } } }, card: { maximum: 100 } } };
    const refused = schemaChecked({ _secrets: { pin: "${workflow.input._secrets.pin}" } }, { in: inSchema }, { _secrets: { pin: 987654321 } });
    expect(refused.state.tasks[0]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(refused.state.tasks[0]!.reasonForIncompletion).toContain("input._secrets.pin: *** is greater than 100");
    expect(JSON.stringify(toWorkflowView(refused.state, true))).not.toContain("987654321");
    // A definition's maskedFields likewise; and a value at the 500 characters' cut loses no start to it.
    const deep = "k".repeat(430);
    const longSchema = { type: "object", properties: { [deep]: { type: "object", properties: { card: { maximum: 100 } } } } };
    const cut = schemaChecked({ [deep]: { card: "${workflow.input.card}" } }, { in: longSchema }, { card: 41111111111111 }, ["card"]);
    const reason = cut.state.tasks[0]!.reasonForIncompletion!;
    expect(reason).toContain(".card: ***");
    expect(reason).not.toMatch(/card: 4/);
  });

  it("shows *** for a masked value a DYNAMIC's refusal of the task its input names quotes", () => {
    const dynamic = (inputParameters: Record<string, string>, input: Record<string, unknown>, maskedFields?: string[]) => {
      const definition: WorkflowDef = { name: "dyn", version: 1, schemaVersion: 2, tasks: [{ name: "pick", taskReferenceName: "pick", type: "DYNAMIC", dynamicTaskNameParam: "taskToExecute", inputParameters }], ...(maskedFields === undefined ? {} : { maskedFields }) };
      return decide(createExecution({ workflowId: "wf-d", definition, input: input as never }, 1_000), { type: "start" }, env(1_000)).state;
    };
    // A name read from a _secrets value (the input shows *** for it), and one under a maskedFields key.
    const read = dynamic({ taskToExecute: "${workflow.input._secrets.name}" }, { _secrets: { name: 41111111111 } });
    const named = dynamic({ taskToExecute: "${workflow.input.taskToExecute}" }, { taskToExecute: 42222222222 }, ["taskToExecute"]);
    for (const state of [read, named]) {
      expect(state.tasks[0]!.status).toBe("FAILED_WITH_TERMINAL_ERROR");
      expect(state.tasks[0]!.reasonForIncompletion).toContain("but is the number ***");
      expect(JSON.stringify(toWorkflowView(state, true))).not.toMatch(/41111111111|42222222222/);
    }
    // Nothing masked: the reason is as it was.
    expect(dynamic({ taskToExecute: "${workflow.input.n}" }, { n: 7 }).tasks[0]!.reasonForIncompletion).toContain("but is the number 7");
  });

  it("shows *** for a masked value of a task's output that its output schema's refusal quotes, scrubbed before the cut to 500 characters", () => {
    // The number sits where the cut falls: 490 characters precede it.
    const deep = "k".repeat(424);
    const outSchema = { type: "object", properties: { [deep]: { type: "object", properties: { _masked: { maximum: 1 } } } } };
    const started = schemaChecked({}, { out: outSchema }, {});
    expect(started.state.tasks[0]!.status).toBe("IN_PROGRESS");
    const refused = attemptEnds(started.state, "call", 2_000, "COMPLETED", { [deep]: { _masked: 41111111111111 } });
    const task = refused.state.tasks[0]!;
    expect(task.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(task.reasonForIncompletion).toBe(`The task's output does not match its schema out: output.${deep}._masked: *** is gre`);
    expect(JSON.stringify(toWorkflowView(refused.state, true))).not.toContain("4111111111");
    // A value under a maskedFields key, whole.
    const fields = schemaChecked({}, { out: { type: "object", properties: { card: { maximum: 1 } } } }, {}, ["card"]);
    expect(attemptEnds(fields.state, "call", 2_000, "COMPLETED", { card: 4111111111 }).state.tasks[0]!.reasonForIncompletion).toBe("The task's output does not match its schema out: output.card: *** is greater than 1.");
  });
});
