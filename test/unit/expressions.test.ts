import { scriptRunner } from "./script-runner";
import { jqRunner } from "./jq-runner";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type { JsonObject, JsonValue, WorkflowDef } from "../../src/engine/model";
import { BoundedCache } from "../../src/engine/expressions/cache";
import { cachedTemplateChars } from "../../src/engine/expressions/template";
import { BUILT_IN_ROOTS } from "../../src/engine/expressions/ast";
import { MAX_QUERY_VALUES } from "../../src/engine/expressions/query";
import {
  evaluateExpression,
  ExpressionLimitError,
  ExpressionSyntaxError,
  findTemplateErrors,
  hasExpression,
  isExpressionFailure,
  referencedEnvironmentVariables,
  MissingSecretError,
  parseTemplate,
  referencedSecrets,
  resolveValue,
  SecretFieldReadError,
  type EvaluationContext,
} from "../../src/engine/expressions";
import { DEFAULT_ENGINE_CONFIG } from "../../src/engine/config";
import { createExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { evaluationContext } from "../../src/engine/evaluation";
import { httpOutput } from "../../src/engine/tasks/http";

const SECRETS = new Map<string, string>([
  ["token", "s3cr3t"],
  ["api key", "k-123"],
  ["123", "numeric-name"],
]);

/** A context over `tasks` (reference name → record) and the rest of `overrides`. */
function makeContext(overrides: Partial<EvaluationContext> & { tasks?: Record<string, JsonObject> } = {}): EvaluationContext {
  const { tasks: givenTasks, ...rest } = overrides;
  const tasks: Record<string, JsonObject> = givenTasks ?? {
    fetch: {
      taskId: "t-1",
      status: "COMPLETED",
      input: { x: "in-x" },
      output: { n: 5, response: { body: { items: [{ id: 7 }, { id: 8 }] } } },
    },
    "my-task": { taskId: "t-2", status: "FAILED", input: {}, output: { value: "hyphen" } },
    a: { taskId: "t-3", status: "COMPLETED", input: {}, output: { n: 4 } },
    workflow: { taskId: "t-4", status: "COMPLETED", input: {}, output: { shadow: true } },
  };
  return {
    workflow: {
      workflowId: "wf-1",
      correlationId: "corr-9",
      input: {
        count: 3,
        tier: "gold",
        flag: true,
        off: false,
        force: false,
        id: "abc",
        str: "hello",
        zero: 0,
        empty: "",
        nothing: null,
        obj: { a: 1, b: [1, 2] },
        sameObj: { b: [1, 2], a: 1 },
        list: [10, 20, 30],
        emptyList: [],
        emptyObj: {},
        "a b": "spaced",
        map: { "0": "zero-key" },
        brace: "}",
      },
      // Must never be reachable: secrets only come from the `secret` callback.
      secrets: { token: "leaked-from-workflow" },
    },
    now: 1_700_000_000_000,
    taskId: "task-42",
    task: (reference) => (Object.hasOwn(tasks, reference) ? tasks[reference] : undefined),
    secret: (name) => SECRETS.get(name),
    ...rest,
  };
}

const ctx = makeContext();

/** Evaluates `${source}` as a lone template, so the JSON type is kept. */
function ev(source: string, context: EvaluationContext = ctx): JsonValue {
  return resolveValue("${" + source + "}", context);
}

/** The syntax error `fn` throws; fails the test when it throws nothing or something else. */
function syntaxErrorOf(fn: () => unknown): ExpressionSyntaxError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ExpressionSyntaxError);
    return error as ExpressionSyntaxError;
  }
  throw new Error("expected an ExpressionSyntaxError, nothing was thrown");
}

describe("hasExpression", () => {
  it.each([
    ["${a}", true],
    ["x ${a} y", true],
    ["${", true],
    ["$${a} and ${b}", true],
    ["plain text", false],
    ["", false],
    ["cost $5 {x}", false],
    ["$ {a}", false],
    ["$${a}", false],
    ["$$${a}", false],
  ])("%j → %s", (text, expected) => {
    expect(hasExpression(text)).toBe(expected);
  });
});

describe("parseTemplate", () => {
  it("splits text and expressions, merging escaped text", () => {
    const template = parseTemplate("a $${b} ${workflow.input.id}!");
    expect(template.source).toBe("a $${b} ${workflow.input.id}!");
    expect(template.parts.map((p) => p.kind)).toEqual(["text", "expression", "text"]);
    expect(template.parts[0]).toEqual({ kind: "text", text: "a ${b} " });
    expect(template.parts[1]).toMatchObject({ kind: "expression", start: 8, end: 28 });
    expect(template.parts[2]).toEqual({ kind: "text", text: "!" });
  });

  it("returns the cached template for the same string", () => {
    const text = "${workflow.input.cached_" + "probe}";
    expect(parseTemplate(text)).toBe(parseTemplate(text));
  });

  it("freezes cached templates so one caller cannot corrupt another", () => {
    const template = parseTemplate("${workflow.input.id}");
    expect(Object.isFrozen(template)).toBe(true);
    expect(Object.isFrozen(template.parts)).toBe(true);
  });

  it("keeps the cache bounded by dropping the oldest entries", () => {
    const first = parseTemplate("${bounded.first}");
    for (let i = 0; i < 2_100; i++) parseTemplate(`\${bounded.filler${i}}`);
    const again = parseTemplate("${bounded.first}");
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it("parses the empty string to no parts", () => {
    expect(parseTemplate("").parts).toEqual([]);
  });

  it("keeps the characters of the cached strings to a megabyte: distinct strings of 16 KB (the longest cached) from many definitions cannot fill the isolate", () => {
    const long = (i: number) => `\${workflow.input.long${i}} `.padEnd(16_384, "x");
    for (let i = 0; i < 200; i++) expect(parseTemplate(long(i)).source).toBe(long(i));
    expect(cachedTemplateChars()).toBeLessThanOrEqual(1_000_000);
    // Still cached, the newest first kept.
    expect(parseTemplate(long(199))).toBe(parseTemplate(long(199)));
  });
});

describe("BoundedCache", () => {
  it("evicts the oldest entry once full and never exceeds its capacity", () => {
    const cache = new BoundedCache<string, number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("a", 10);
    expect(cache.size).toBe(2);
    cache.set("c", 3);
    expect(cache.size).toBe(2);
    expect(cache.get("a")).toBeUndefined();
    expect(cache.get("b")).toBe(2);
    expect(cache.get("c")).toBe(3);
  });

  it("evicts the oldest entries until the characters of the keys fit its budget, and keeps no key over the whole budget", () => {
    const cache = new BoundedCache<string, number>(100, 10);
    cache.set("aaaa", 1);
    cache.set("bbbb", 2);
    cache.set("cccccc", 3);
    expect([...cache.keys()]).toEqual(["bbbb", "cccccc"]);
    expect(cache.keyChars).toBe(10);
    cache.set("d".repeat(11), 4);
    expect(cache.get("d".repeat(11))).toBeUndefined();
    expect(cache.keyChars).toBe(10);
    cache.clear((key) => key.startsWith("b"));
    expect(cache.keyChars).toBe(6);
    cache.delete("cccccc");
    expect(cache.size).toBe(0);
    expect(cache.keyChars).toBe(0);
  });
});

describe("resolveValue: strings", () => {
  it("returns a string without ${ unchanged (same value)", () => {
    const text = "just text with $ and { and }";
    expect(resolveValue(text, ctx)).toBe(text);
  });

  it.each<[string, JsonValue]>([
    ["${workflow.input.count}", 3],
    ["${workflow.input.flag}", true],
    ["${workflow.input.nothing}", null],
    ["${workflow.input.missing}", null],
    ["${workflow.input.obj}", { a: 1, b: [1, 2] }],
    ["${workflow.input.list}", [10, 20, 30]],
    ["${workflow.input.id}", "abc"],
    ["${  workflow.input.count  }", 3],
  ])("a lone expression %s keeps its JSON type", (template, expected) => {
    expect(resolveValue(template, ctx)).toStrictEqual(expected);
  });

  it.each<[string, string]>([
    ["id-${workflow.input.id}/x", "id-abc/x"],
    ["n=${workflow.input.count}", "n=3"],
    ["flag=${workflow.input.flag}", "flag=true"],
    ["o=${workflow.input.obj}", 'o={"a":1,"b":[1,2]}'],
    ["l=${workflow.input.list}", "l=[10,20,30]"],
    // null (unresolved too) reads as Conductor's Objects.toString writes it.
    ["null=[${workflow.input.nothing}]", "null=[null]"],
    ["missing=[${workflow.input.missing}]", "missing=[null]"],
    [" ${workflow.input.count}", " 3"],
    ["${workflow.input.count}${workflow.input.count}", "33"],
    ["${workflow.input.id}-${fetch.output.n}-${workflow.input.flag}", "abc-5-true"],
  ])("embedded expressions interpolate as strings: %s", (template, expected) => {
    expect(resolveValue(template, ctx)).toBe(expected);
  });

  it.each<[string, string]>([
    ["$${workflow.input.id}", "${workflow.input.id}"],
    ["$${x} and ${workflow.input.id}", "${x} and abc"],
    ["$$${workflow.input.id}", "$${workflow.input.id}"],
    ["price: $${not parsed (", "price: ${not parsed ("],
    ["cost $5 ${workflow.input.count}$", "cost $5 3$"],
  ])("$${ escapes a literal ${: %s", (template, expected) => {
    expect(resolveValue(template, ctx)).toBe(expected);
  });

  it("does not close an expression at a } inside a string literal", () => {
    expect(resolveValue("${workflow.input.str == '}' ? 'a' : 'b'}", ctx)).toBe("b");
    expect(resolveValue("${workflow.input.brace == '}' ? 'a' : 'b'}", ctx)).toBe("a");
    expect(resolveValue('x${"}"}y', ctx)).toBe("x}y");
    expect(resolveValue("${workflow.input.brace == '${' ? 'a' : 'b'}", ctx)).toBe("b");
  });
});

describe("resolveValue: non-string values", () => {
  it("passes numbers, booleans and null through", () => {
    expect(resolveValue(42, ctx)).toBe(42);
    expect(resolveValue(false, ctx)).toBe(false);
    expect(resolveValue(null, ctx)).toBe(null);
  });

  it("resolves objects and arrays recursively", () => {
    const input: JsonValue = {
      uri: "https://api/${workflow.input.id}",
      count: "${workflow.input.count}",
      nested: { list: ["${fetch.output.n}", 1, { deep: "${workflow.correlationId}" }], keep: true },
      "${workflow.input.id}": "keys are not templates",
    };
    expect(resolveValue(input, ctx)).toEqual({
      uri: "https://api/abc",
      count: 3,
      nested: { list: [5, 1, { deep: "corr-9" }], keep: true },
      "${workflow.input.id}": "keys are not templates",
    });
  });

  it("builds new containers and leaves the definition untouched", () => {
    const definition: JsonObject = { a: { b: ["${workflow.input.id}"] }, c: [] };
    const snapshot = structuredClone(definition);
    const resolved = resolveValue(definition, ctx) as JsonObject;
    expect(resolved).not.toBe(definition);
    expect(resolved["a"]).not.toBe(definition["a"]);
    expect(resolved["c"]).not.toBe(definition["c"]);
    expect(definition).toEqual(snapshot);
  });

  it("keeps a __proto__ key as an own property instead of changing the prototype", () => {
    const definition = JSON.parse('{"__proto__": "${workflow.input.id}", "x": 1}') as JsonObject;
    const resolved = resolveValue(definition, ctx) as JsonObject;
    expect(Object.getPrototypeOf(resolved)).toBe(Object.prototype);
    expect(Object.hasOwn(resolved, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(resolved, "__proto__")?.value).toBe("abc");
    expect(resolved["x"]).toBe(1);
  });
});

describe("paths", () => {
  it.each<[string, JsonValue]>([
    ["workflow.workflowId", "wf-1"],
    ["workflow.correlationId", "corr-9"],
    ["workflow.input.tier", "gold"],
    ["workflow['input']['count']", 3],
    ['workflow.input["a b"]', "spaced"],
    ["workflow.input['a b']", "spaced"],
    ["workflow.input.list[0]", 10],
    // JSONPath's index from the end, as Conductor reads it.
    ["workflow.input.list[-1]", 30],
    ["workflow.input.list[ -3 ]", 10],
    ["workflow.input.list[2]", 30],
    ["workflow.input.list.1", 20],
    ["workflow.input.list['1']", 20],
    ["workflow.input.map.0", "zero-key"],
    ["workflow.input.map[0]", "zero-key"],
    ["workflow.input.obj.b[1]", 2],
    ["fetch.output.response.body.items[0].id", 7],
    ["fetch.output.response.body.items.1.id", 8],
    ["fetch.output.response.body.items [ 1 ] . id", 8],
    ["fetch.input.x", "in-x"],
    ["fetch.status", "COMPLETED"],
    ["fetch.taskId", "t-1"],
    ["my-task.output.value", "hyphen"],
    ["my-task.status", "FAILED"],
    ["system.currentTimeMillis", 1_700_000_000_000],
    ["TASK_ID", "task-42"],
    ["CPEWF_TASK_ID", "task-42"],
    ["workflow.input.count", 3],
  ])("%s → %j", (source, expected) => {
    expect(ev(source)).toStrictEqual(expected);
  });

  it("gives built-in roots precedence over a task reference of the same name", () => {
    expect(ev("workflow.workflowId")).toBe("wf-1");
    expect(ev("workflow.output.shadow")).toBeNull();
  });

  it("resolves TASK_ID to null when no task is being resolved", () => {
    expect(ev("TASK_ID", makeContext({ taskId: undefined }))).toBeNull();
    expect(ev("CPEWF_TASK_ID", makeContext({ taskId: undefined }))).toBeNull();
  });

  it.each([
    "workflow.input.missing",
    "workflow.input.missing.deeper",
    "workflow.input.list[3]",
    "workflow.input.list[-4]",
    "workflow.input.list[99].x",
    "workflow.input.list.x",
    "workflow.input.list['-1']",
    "workflow.input.obj[0]",
    "workflow.input.str.length",
    "workflow.input.count.x",
    "workflow.input.nothing.x",
    "workflow.input.flag[0]",
    "unknownRef.output.x",
    "unknownRef",
    "fetch.output.response.body.items[0].id.more",
    "system.other",
    "TASK_ID.x",
    "workflow.input.__proto__",
    "workflow.input.constructor",
    "workflow.input.obj.toString",
    "workflow.input.list.length",
    "toString",
    "constructor.name",
    "__proto__",
    "hasOwnProperty",
  ])("%s is unresolved → null", (source) => {
    expect(ev(source)).toBeNull();
  });

  it("never throws for an unresolved path in any position", () => {
    expect(resolveValue("a${nope.x[4]['k']}b", ctx)).toBe("anullb");
  });

  it("reads $. and $[...] as JSONPath's root, the document the roots are fields of (Conductor's ${$.externalId})", () => {
    expect(ev("$.workflow.input.tier")).toBe("gold");
    expect(ev("$['workflow']['input']['count']")).toBe(3);
    expect(ev("$.fetch.output.n")).toBe(5);
    expect(ev("$.workflow.input.count > 2 && $['workflow'].input.flag")).toBe(true);
    expect(resolveValue("id-${$.workflow.correlationId}", ctx)).toBe("id-corr-9");
  });

  it("reads a step holding $ after a dot as a key, as Conductor's JsonPath does (${workflow.variables.$ref}, json-path/JsonPath#766)", () => {
    const context = makeContext({ workflow: { workflowId: "wf-1", input: { schema: { $ref: "#/defs/a", $id: "x" }, "price$": 3, "a$b": { $: 1 } }, variables: { $count: 2 } } });
    expect(ev("workflow.variables.$count", context)).toBe(2);
    expect(ev("workflow.input.schema.$ref", context)).toBe("#/defs/a");
    expect(ev("$.workflow.input.schema.$id", context)).toBe("x");
    expect(ev("workflow.input.price$", context)).toBe(3);
    expect(ev("workflow.input.a$b.$", context)).toBe(1);
    expect(ev("workflow.input..$ref", context)).toEqual(["#/defs/a"]);
    expect(ev("workflow.variables.$count > 1", context)).toBe(true);
    expect(resolveValue("n=${workflow.variables.$count}", context)).toBe("n=2");
    // A `${` still opens a nested expression inside a name: `item_${…}` writes the value into the step.
    expect(ev("workflow.input.schema.$${workflow.input.k}", makeContext({ workflow: { workflowId: "wf-1", input: { k: "ref", schema: { $ref: 5 } } } }))).toBe(5);
    expect(findTemplateErrors("${workflow.variables.$count} ${a.output.$ref.b}", "p")).toEqual([]);
  });

  it("reads a step holding @, # or letters beyond ASCII after a dot as a key, as Conductor's JsonPath does (${body.@type}, ${workflow.variables.größe})", () => {
    const context = makeContext({ workflow: { workflowId: "wf-1", input: { doc: { "@type": "Person", "#text": "hi", "e@x#y": 1 } }, variables: { größe: 42, 名前: "太郎", "😀": "smile" } } });
    expect(ev("workflow.input.doc.@type", context)).toBe("Person");
    expect(ev("workflow.input.doc.#text", context)).toBe("hi");
    expect(ev("workflow.input.doc.e@x#y", context)).toBe(1);
    expect(ev("workflow.variables.größe", context)).toBe(42);
    expect(ev("workflow.variables.名前", context)).toBe("太郎");
    expect(ev("workflow.variables.😀", context)).toBe("smile");
    expect(ev("workflow.input.doc.@type == 'Person' ? workflow.variables.größe : 0", context)).toBe(42);
    expect(ev("workflow.input..@type", context)).toEqual(["Person"]);
    expect(findTemplateErrors("${workflow.variables.größe} ${a.output.@id}", "p")).toEqual([]);
    // Whitespace is no part of a step (a no-break space stays refused), and the filter's own `@` is still the value tested.
    expect(syntaxErrorOf(() => ev("workflow.variables.größe\u00a0x", context)).message).toContain("unexpected character");
    for (const space of ["\u2028", "\u3000", "\ufeff"]) expect(syntaxErrorOf(() => ev(`workflow.variables.größe${space}x`, context)).message).toContain("unexpected character");
    // Any other character beyond ASCII is part of the step, a symbol as a letter (docs/api.md), a lone surrogate half too.
    const symbols = makeContext({ workflow: { workflowId: "wf-1", input: { "x≥1": "key", x: 0, "\ud800": "lone" } } });
    expect(ev("workflow.input.x≥1", symbols)).toBe("key");
    expect(ev("workflow.input.\ud800", symbols)).toBe("lone");
    expect(ev("workflow.input.list[?(@ > 15)]")).toEqual([20, 30]);
  });
});

describe("empty expressions", () => {
  it.each<[string, JsonValue]>([
    ["${}", ""],
    ["${    }", ""],
    ["a${}b", "ab"],
    ["${}${workflow.input.tier}", "gold"],
  ])("%s → %j, as Conductor's ParametersUtils resolves a blank ${}", (template, expected) => {
    expect(resolveValue(template, ctx)).toStrictEqual(expected);
    expect(findTemplateErrors(template, "")).toEqual([]);
  });
});

describe("nested expressions", () => {
  // Conductor's ParametersUtilsTest.testNestedPathExpressions, its input under workflow.input.
  const nestedCtx = makeContext({
    workflow: {
      input: {
        name: "conductor",
        index: 1,
        mapValue: "a",
        recordIds: [1, 2, 3],
        map: { a: [1, 2, 3], b: [2, 4, 5], c: [3, 7, 8] },
        key: "x",
        missing: null,
      },
    },
    tasks: { lookup: { taskId: "t-1", status: "COMPLETED", input: {}, output: { byId: { x: "found", item_1: "first" } } } },
  });

  it.each<[string, JsonValue]>([
    ["${workflow.input.recordIds[${workflow.input.index}]}", 2],
    ["${workflow.input.map.${workflow.input.mapValue}[${workflow.input.index}]}", 2],
    ["${workflow.input.map.b[${workflow.input.map.${workflow.input.mapValue}[${workflow.input.index}]}]}", 5],
    ["${lookup.output.byId.${workflow.input.key}}", "found"],
    ["${lookup.output.byId['${workflow.input.key}']}", null],
    ["${lookup.output.byId.item_${workflow.input.index}}", "first"],
    ["${$.workflow.input.recordIds[${$.workflow.input.index}]}", 2],
    ["${workflow.input.recordIds[${workflow.input.index}] > 1 ? 'big' : 'small'}", "big"],
    ["${workflow.input.map.${workflow.input.mapValue}.length()}", 3],
    ["id-${workflow.input.recordIds[${workflow.input.index}]}-${workflow.input.name}", "id-2-conductor"],
  ])("%s → %j", (template, expected) => {
    expect(findTemplateErrors(template, "")).toEqual([]);
    expect(resolveValue(template, nestedCtx)).toStrictEqual(expected);
  });

  it("is null when an inner part is null or names nothing, as Conductor reads the path with `null` written in", () => {
    expect(resolveValue("${workflow.input.recordIds[${workflow.input.missing}]}", nestedCtx)).toBeNull();
    expect(resolveValue("${workflow.input.map.${workflow.input.absent}}", nestedCtx)).toBeNull();
    expect(resolveValue("${workflow.input.map.b[${workflow.input.map.${workflow.input.absent}[0]}]}", nestedCtx)).toBeNull();
    expect(resolveValue("x-${workflow.input.recordIds[${workflow.input.missing}]}", nestedCtx)).toBe("x-null");
  });

  it("is null when the written-in value does not make a path (Conductor's JsonPath fails and reads null)", () => {
    const injected = makeContext({ workflow: { input: { list: [1], at: "0] || workflow.input.list", quote: "'" } } });
    expect(resolveValue("${workflow.input.list[${workflow.input.at}]}", injected)).toBeNull();
    expect(resolveValue("${workflow.input.list.${workflow.input.quote}}", injected)).toBeNull();
  });

  it("never reads a secret, an environment variable the definition does not name, or the whole workflow record by a written-in name", () => {
    const probing = makeContext({
      workflow: { input: { secrets: "secrets", token: "token", env: "env", star: "*", nothing: "" }, env: { HOME: "/h", J: "[5,6]", I: "1" } },
    });
    expect(resolveValue("${workflow.${workflow.input.secrets}.token}", probing)).toBeNull();
    expect(resolveValue("${$['workflow']['${workflow.input.secrets}'].token}", probing)).toBeNull();
    expect(resolveValue("${workflow.${workflow.input.env}.HOME}", probing)).toBeNull();
    expect(resolveValue("${workflow.${workflow.input.star}}", probing)).toBeNull();
    expect(resolveValue("${workflow${workflow.input.nothing}}", probing)).toBeNull();
    // The variable the definition names may be read with a computed step.
    expect(resolveValue("${workflow.env.J.$[${workflow.env.I}]}", probing)).toBe(6);
  });

  it("never reads a masked key that only the written-in values name: what is shown could not be masked", () => {
    const masking = makeContext({ workflow: { input: { which: "_masked", card: { _masked: ["4111"], last4: "1111" }, i: 0 } }, maskedKeys: new Set(["_masked"]) });
    expect(resolveValue("${workflow.input.card.${workflow.input.which}}", masking)).toBeNull();
    expect(resolveValue("${workflow.input.card.${workflow.input.which}[0]}", masking)).toBeNull();
    expect(resolveValue("${workflow.input.card[${workflow.input.i}]._masked}", masking)).toBeNull();
    // Named where the definition writes it, it is read (and shown masked, as any read of it is).
    expect(resolveValue("${workflow.input.card._masked[${workflow.input.i}]}", masking)).toBe("4111");
  });

  it("registers only what can be checked: the inner expressions, the path's syntax, and names of secrets and variables written out", () => {
    expect(findTemplateErrors("${workflow.input.a[${workflow.input.b c}]}", "")).toEqual([
      { path: "", message: "malformed expression at position 38: expected an operator or '}' but found 'c'" },
    ]);
    expect(findTemplateErrors("${workflow.input.a[${workflow.input.b}}", "")).toEqual([
      { path: "", message: "malformed expression at position 38: expected ']' to close '[' at position 18 but found '}'" },
    ]);
    const [secretName] = findTemplateErrors("${workflow.secrets.${workflow.input.name}}", "").map((issue) => issue.message);
    expect(secretName).toMatch(/workflow\.secrets at position 2 may only be used as a value .* not followed by a nested \$\{…\}/);
    const [secretKey] = findTemplateErrors("${workflow.input.map[${workflow.secrets.k}]}", "").map((issue) => issue.message);
    expect(secretKey).toMatch(/workflow\.secrets\.k at position 23 may only be used as a value .* not in a nested \$\{…\} of a path/);
    const [variableName] = findTemplateErrors("${workflow.env.${workflow.input.name}}", "").map((issue) => issue.message);
    expect(variableName).toMatch(/workflow\.env at position 2 must be followed by the variable's name/);
    expect(findTemplateErrors("${workflow.env.J.$[${workflow.env.I}]}", "")).toEqual([]);
  });

  it("counts the secrets and variables named in inner expressions and in the written-out part of the path", () => {
    const template = { a: "${workflow.input.map[${workflow.secrets.inner}]}", b: "${workflow.secrets.outer[${workflow.input.i}]}", c: "${workflow.env.J.$[${workflow.env.I}]}" };
    expect(referencedSecrets(template)).toEqual(["inner", "outer"]);
    expect(referencedEnvironmentVariables(template)).toEqual(["J", "I"]);
  });

  it("refuses ${ nested more than 10 deep", () => {
    const deep = (levels: number): string => (levels === 0 ? "${workflow.input.index}" : `\${workflow.input.recordIds[${deep(levels - 1)}]}`);
    expect(findTemplateErrors(deep(10), "")).toEqual([]);
    expect(findTemplateErrors(deep(11), "")[0]?.message).toMatch(/nested more than 10 levels deep/);
    expect(() => parseTemplate("${".repeat(100_000))).toThrow(ExpressionSyntaxError);
  });
});

describe("JSONPath queries (Conductor's Jayway paths)", () => {
  const orders: JsonObject = {
    items: [
      { id: 1, sku: "a", price: 5, tags: ["x"] },
      { id: 2, sku: "b", price: 12, active: false },
      { id: 3, price: 30, tags: [] },
    ],
    meta: { count: 3, nested: { id: 99 } },
  };
  const context = makeContext({ tasks: { orders: { taskId: "t-9", status: "COMPLETED", input: {}, output: orders } } });

  it.each<[string, JsonValue]>([
    ["orders.output.items[*].id", [1, 2, 3]],
    ["orders.output.items.*.price", [5, 12, 30]],
    // Missing fields select nothing, as Jayway with SUPPRESS_EXCEPTIONS does.
    ["orders.output.items[*].sku", ["a", "b"]],
    ["orders.output..id", [1, 2, 3, 99]],
    ["orders.output..tags[0]", ["x"]],
    ["orders.output.meta.*", [3, { id: 99 }]],
    ["orders.output.items[0,2].id", [1, 3]],
    ["orders.output.meta['count','missing']", [3]],
    ["orders.output.items[1:].id", [2, 3]],
    ["orders.output.items[:2].id", [1, 2]],
    ["orders.output.items[-2:].id", [2, 3]],
    ["orders.output.items[?(@.price > 10)].id", [2, 3]],
    ["orders.output.items[?(@.price > 10 && @.id != 3)].sku", ["b"]],
    ["orders.output.items[?(@.sku == 'a' || @.id == 3)].id", [1, 3]],
    // A lone `@.field` asks whether the field is there, whatever its value.
    ["orders.output.items[?(@.active)].id", [2]],
    ["orders.output.items[?(!@.tags)].id", [2]],
    ["orders.output.items[?(@.price > 100)].id", []],
    ["orders.output.items[?(@.price >= workflow.input.count)].id", [1, 2, 3]],
    ["orders.output.items[?(@.tags[0] == 'x')].id", [1]],
    ["orders.output.meta[?(@.count == 3)].count", [3]],
    ["workflow.input.list[?(@ > 15)]", [20, 30]],
    ["orders.output.missing[*]", []],
    ["orders.output.items[*].missing", []],
    ["orders.output.items.length()", 3],
    ["orders.output.items[*].length()", 3],
    ["orders.output.items[?(@.price > 10)].length()", 2],
    ["workflow.input.str.length()", 5],
    ["orders.output.meta.length()", 2],
    ["orders.output.meta.keys()", ["count", "nested"]],
    ["orders.output.items[*].price.sum()", 47],
    ["orders.output.items[*].price.min()", 5],
    ["orders.output.items[*].price.max()", 30],
    ["workflow.input.list.avg()", 20],
    ["workflow.input.emptyList.avg()", null],
    ["orders.output.items[*].id.first()", 1],
    ["orders.output.items[*].id.last()", 3],
    ["orders.output.missing.length()", null],
    ["orders.output.items[*].id.length() == 3", true],
  ])("%s → %j", (source, expected) => {
    expect(ev(source, context)).toStrictEqual(expected);
  });

  it("keeps the stddev of a list as Jayway does (population)", () => {
    expect(ev("workflow.input.list.stddev()")).toBeCloseTo(Math.sqrt(200 / 3), 10);
  });

  it("interpolates a selection into text as JSON", () => {
    expect(resolveValue("ids=${orders.output.items[*].id}", context)).toBe("ids=[1,2,3]");
  });

  it("walks a deep document without overflowing the stack", () => {
    let deep: JsonValue = { id: "bottom" };
    for (let level = 0; level < 20_000; level++) deep = { next: deep };
    const deepContext = makeContext({ tasks: { d: { taskId: "t", status: "COMPLETED", input: {}, output: deep } } });
    expect(ev("d.output..id", deepContext)).toEqual(["bottom"]);
  });

  it("refuses a query whose deep scans multiply past MAX_QUERY_VALUES, rather than running out of memory", () => {
    // A hundred arrays nested in each other: some 200 bytes, whose every `..*` multiplies what the one before selected.
    let nested: JsonValue = [];
    for (let level = 0; level < 100; level++) nested = [nested];
    const nestedContext = makeContext({ workflow: { input: { nested } } });
    // Three scans select some 160,000 values at their last step: within the bound, and as before.
    expect((ev("workflow.input.nested..*..*..*", nestedContext) as JsonValue[]).length).toBe(161_700);
    // A fourth would select some four million; the fifth, ninety.
    expect(() => ev("workflow.input.nested..*..*..*..*", nestedContext)).toThrow(ExpressionLimitError);
    expect(() => resolveValue({ all: "${workflow.input.nested..*..*..*..*..*}" }, nestedContext)).toThrow(
      `the JSONPath queries resolved together select more than ${MAX_QUERY_VALUES} values`,
    );
    // The queries of a filter's predicate count with the query around them: 95 predicates of some 160,000 values each.
    expect(() => ev("workflow.input.nested..[?(@..*..*..*)]", nestedContext)).toThrow(ExpressionLimitError);
    // So do those of the parts of one expression: each of these takes some 340,000 values, its steps together.
    const scans = "workflow.input.nested..*..*..*.length() > 0";
    expect(ev(`${scans} && ${scans}`, nestedContext)).toBe(true);
    expect(() => ev(`${scans} && ${scans} && ${scans}`, nestedContext)).toThrow(ExpressionLimitError);
    expect(ev("workflow.input.nested..*..*..*.length()", nestedContext)).toBe(161_700);
    // A list of a hundred thousand values, each selected twice over, is within it.
    const list = Array.from({ length: 100_000 }, (_, index) => ({ id: index }));
    const listContext = makeContext({ workflow: { input: { list } } });
    expect(ev("workflow.input.list[*].id.length()", listContext)).toBe(100_000);
  });

  it("counts the queries of one resolution together: fifty expressions each within MAX_QUERY_VALUES, over it in all, fail the task's input", () => {
    // Each `${workflow.input.list[*].length()}` takes 25,000 values (and gives a number): forty take MAX_QUERY_VALUES
    // exactly, fifty 1,250,000.
    const list = Array.from({ length: 25_000 }, (_, index) => index);
    const inputOf = (count: number): JsonObject => Object.fromEntries(Array.from({ length: count }, (_, index) => [`v${index}`, "${workflow.input.list[*].length()}"]));
    const definition = (count: number): WorkflowDef => ({ name: "many_queries", version: 1, schemaVersion: 2, tasks: [{ name: "w", taskReferenceName: "w", type: "SIMPLE", inputParameters: inputOf(count) }] });
    const env = { now: 1_000, newId: () => `id-${Math.random()}`, config: DEFAULT_ENGINE_CONFIG, scripts: scriptRunner, jq: jqRunner, taskDefs: () => null };
    const execution = createExecution({ workflowId: "wf", definition: definition(50), input: { list } }, 1_000);

    // One context, one resolution: its expressions share one budget.
    expect(() => resolveValue(inputOf(50), evaluationContext(execution, 1_000))).toThrow(ExpressionLimitError);
    expect(() => resolveValue(inputOf(50), evaluationContext(execution, 1_000))).toThrow(`the JSONPath queries resolved together select more than ${MAX_QUERY_VALUES} values`);
    expect(Object.values(resolveValue(inputOf(40), evaluationContext(execution, 1_000)) as JsonObject)).toEqual(Array(40).fill(25_000));
    // Each of them alone is well within it.
    expect(resolveValue("${workflow.input.list[*].length()}", evaluationContext(execution, 1_000))).toBe(25_000);

    // The engine fails the task on it, as on a malformed expression, and runs the same input of forty.
    const [failed] = decide(execution, { type: "start" }, env).state.tasks;
    expect(failed).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringContaining("Invalid task input: expression too costly to evaluate: the JSONPath queries resolved together") as unknown });
    const [scheduled] = decide(createExecution({ workflowId: "wf2", definition: definition(40), input: { list } }, 1_000), { type: "start" }, env).state.tasks;
    expect(scheduled?.status).toBe("SCHEDULED");
  });

  it("stops interpolated text as it passes the context's maxBytes (MAX_PAYLOAD_BYTES), never writing a query's values out whole", () => {
    // A chain 20 deep ending in 50 numbers: `..*` selects every level, each holding those below it, 4.7 KB as text.
    let chain: JsonValue = Array.from({ length: 50 }, (_, index) => index);
    for (let level = 0; level < 20; level++) chain = { next: chain };
    const context = makeContext({ workflow: { input: { chain, word: "y".repeat(600) } }, maxBytes: 1_000 });
    const stringify = vi.spyOn(JSON, "stringify");
    let written: number[] = [];
    try {
      const tooLong = "the text it writes its values into is over the limit of 1000 bytes (MAX_PAYLOAD_BYTES)";
      expect(() => resolveValue({ all: "x${workflow.input.chain..*}" }, context)).toThrow(ExpressionLimitError);
      expect(() => resolveValue({ all: "x${workflow.input.chain..*}" }, context)).toThrow(tooLong);
      // Text alone, and a spliced path's text, are bounded alike.
      expect(() => resolveValue("${workflow.input.word} ${workflow.input.word}", context)).toThrow(tooLong);
      expect(() => resolveValue("${workflow.input.${workflow.input.chain..*}}", context)).toThrow(tooLong);
      // Within it, as before.
      expect(resolveValue("${workflow.input.word}-${workflow.input.chain.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next[0]}", context)).toBe(`${"y".repeat(600)}-0`);
      expect(resolveValue("x${workflow.input.chain.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next}", context)).toBe(`x{"next":${JSON.stringify(Array.from({ length: 50 }, (_, index) => index))}}`);
      written = stringify.mock.results.map((result) => (typeof result.value === "string" ? result.value.length : 0));
    } finally {
      stringify.mockRestore();
    }
    // Nothing near the whole (4.7 KB) was written out.
    expect(Math.max(0, ...written)).toBeLessThan(1_000);
    // Without a bound (a context made by hand), the whole is built.
    expect((resolveValue("x${workflow.input.chain..*}", makeContext({ workflow: { input: { chain } } })) as string).length).toBeGreaterThan(4_000);
  });

  it("never reaches a prototype through a query", () => {
    expect(ev("workflow.input.obj['constructor','__proto__']")).toEqual([]);
    expect(ev("workflow.input..constructor")).toEqual([]);
  });

  it("selects nothing from a secret, and never looks one up for it", () => {
    const calls: string[] = [];
    const spying = makeContext({ secret: (name) => (calls.push(name), SECRETS.get(name)) });
    expect(ev("workflow.secrets.token.length()", spying)).toBeNull();
    expect(ev("workflow.secrets[*]", spying)).toBeNull();
    expect(ev("workflow..token", spying)).toEqual([]);
    expect(calls).toEqual([]);
  });

  it.each<[string, number, string]>([
    ["${a.items.count()}", 10, "unknown path function 'count()'"],
    ["${a.items.length(1)}", 17, "length() takes no arguments"],
    ["${a.length().x}", 12, "nothing may follow length() in a path"],
    ["${a.length()[0]}", 12, "nothing may follow length() in a path"],
    ["${a..}", 5, "'..' must be followed by a name, '*' or '[' but found '}'"],
    ["${a..length()}", 11, "expected an operator or '}' but found '('"],
    ["${@.x}", 2, "'@' is the value a filter tests"],
    ["${a[?(@.x > 1]}", 13, "expected ')' to close '('"],
    ["${a[?@.x]}", 5, "expected '(' after '[?'"],
    ["${a['k':2]}", 4, "a slice's bounds must be integers"],
    ["${a[1:'k']}", 6, "a slice's bounds must be integers"],
    ["${a[0,]}", 6, "expected an array index or a quoted key after '['"],
  ])("%s → position %i: %s", (template, position, reason) => {
    const error = syntaxErrorOf(() => parseTemplate(template));
    expect(error.message).toContain(reason);
    expect(error.position).toBe(position);
  });

  it("refuses at registration a secret that a query selects from, measures, or filters by", () => {
    const misuse = (text: string) => findTemplateErrors({ v: text }, "").map((issue) => issue.message);
    expect(misuse("${workflow.secrets.k.length()}")).toEqual([expect.stringContaining("not followed by a JSONPath step or function")]);
    expect(misuse("${workflow.secrets.k[*]}")).toEqual([expect.stringContaining("not followed by a JSONPath step or function")]);
    expect(misuse("${workflow.input.list[?(@ == workflow.secrets.k)]}")).toEqual([expect.stringContaining("not in a filter")]);
    expect(misuse("${workflow.input.list[?(workflow.secrets.k)]}")).toEqual([expect.stringContaining("not in a filter")]);
    expect(referencedSecrets({ v: "${workflow.input.list[?(@ == workflow.secrets.k)]}" })).toEqual(["k"]);
  });

  it.each<[string, string, string]>([
    ["${workflow.secrets.creds.user}", "${workflow.secrets.creds}", ".user"],
    ["${workflow.secrets.creds['user']}", "${workflow.secrets.creds}", ".user"],
    ["${workflow.secrets.creds[0]}", "${workflow.secrets.creds}", "[0]"],
    ["${workflow.secrets['api key'].a['b c']}", "${workflow.secrets['api key']}", ".a['b c']"],
    ["u=${workflow.secrets.creds.user}", "${workflow.secrets.creds}", ".user"],
    ["${workflow.input.on ? workflow.secrets.creds.user : 'none'}", "${workflow.secrets.creds}", ".user"],
    ["${workflow.secrets.creds.items[*]}", "${workflow.secrets.creds}", ".items"],
  ])("refuses at registration %s, a field read inside a secret (Conductor OSS reads a JSON path into it, here it is null)", (text, whole, field) => {
    const issues = findTemplateErrors({ h: { v: text } }, "in");
    expect(issues).toEqual([{ path: "in.h.v", message: expect.stringContaining(`a secret is read whole here: \`${whole}\``) as unknown }]);
    expect(issues[0]!.message).toContain(`reading a field inside one (\`${field}\`) is not supported (Conductor OSS reads a JSON path into it)`);
  });

  it("does not refuse a secret read whole, one whose name holds a dot, or the bare collection", () => {
    for (const text of ["${workflow.secrets.creds}", "${workflow.secrets['a.b']}", "x ${workflow.input.on ? workflow.secrets.creds : 'none'}", "${workflow.secrets}"]) {
      expect(findTemplateErrors({ v: text }, "")).toEqual([]);
    }
    expect(referencedSecrets({ v: "${workflow.secrets['a.b']}" })).toEqual(["a.b"]);
  });

  it.each(["${workflow.secrets['api key']}", "Bearer ${workflow.secrets['a/b']}", "${workflow.secrets['..']}", `\${workflow.secrets.${"k".repeat(129)}}`, "${workflow.input.on ? workflow.secrets['x:y'] : 'none'}"])(
    "refuses at registration %s, a name no secret can have (the secrets API's rule): every run would fail its task",
    (text) => {
      expect(findTemplateErrors({ h: { v: text } }, "in")).toEqual([{ path: "in.h.v", message: expect.stringContaining("which no secret can be named: a secret's name is 1 to 128 characters of A-Z, a-z, 0-9, '_', '.' or '-'") as unknown }]);
    },
  );

  it.each(["${workflow.env['odd.name']}", "https://${workflow.env['base url']}/x", "${workflow.env['a/b'].$.region}"])(
    "refuses at registration %s, a name no environment variable can have (the environment API's rule): it would read null",
    (text) => {
      expect(findTemplateErrors({ v: text }, "in")).toEqual([{ path: "in.v", message: expect.stringContaining("which no environment variable can be named: a variable's name is 1 to 128 characters of A-Z, a-z, 0-9, '_' or '-'") as unknown }]);
    },
  );

  it("takes every name the environment API takes, and a path read in a variable's JSON", () => {
    for (const text of ["${workflow.env.db-config.region}", "${workflow.env.cfg.$.hosts[0]}", `\${workflow.env.${"v".repeat(128)}}`, "${workflow.env}"]) {
      expect(findTemplateErrors({ v: text }, ""), text).toEqual([]);
    }
  });

  it("takes every name the secrets API takes: 128 characters, digits first, dots, dashes", () => {
    for (const text of [`\${workflow.secrets.${"k".repeat(128)}}`, "${workflow.secrets.123}", "${workflow.secrets['a.b-c_d']}", "${workflow.secrets.my-token}"]) {
      expect(findTemplateErrors({ v: text }, ""), text).toEqual([]);
    }
  });
});

describe("literals", () => {
  it.each<[string, JsonValue]>([
    ["'single'", "single"],
    ['"double"', "double"],
    ["'it\\'s'", "it's"],
    ['"say \\"hi\\""', 'say "hi"'],
    ["'back\\\\slash'", "back\\slash"],
    ["'line\\nbreak\\ttab\\rcr'", "line\nbreak\ttab\rcr"],
    ["'mixed \"quotes\"'", 'mixed "quotes"'],
    ["''", ""],
    ["42", 42],
    ["0", 0],
    ["3.25", 3.25],
    ["-3", -3],
    ["- 3", -3],
    ["-3.5", -3.5],
    ["--3", 3],
    ["-(2)", -2],
    ["1e3", 1000],
    ["2.5E-1", 0.25],
    ["true", true],
    ["false", false],
    ["null", null],
  ])("%s → %j", (source, expected) => {
    expect(ev(source)).toStrictEqual(expected);
  });

  it("applies unary minus to a number from a path and yields null for anything else", () => {
    expect(ev("-workflow.input.count")).toBe(-3);
    expect(ev("-workflow.input.str")).toBeNull();
    expect(ev("-workflow.input.missing")).toBeNull();
  });

  it("treats a word starting with a keyword as a path, not a literal", () => {
    expect(ev("true-ish.output")).toBeNull();
    expect(ev("nullable")).toBeNull();
  });
});

describe("operators", () => {
  it.each<[string, boolean]>([
    ["1 == 1", true],
    ["1 == '1'", false],
    ["'1' == 1", false],
    ["0 == false", false],
    ["null == false", false],
    ["'' == false", false],
    ["null == null", true],
    ["workflow.input.missing == null", true],
    ["workflow.input.obj == workflow.input.sameObj", true],
    ["workflow.input.obj == workflow.input.list", false],
    ["workflow.input.list == workflow.input.list", true],
    ["workflow.input.emptyList == workflow.input.emptyObj", false],
    ["workflow.input.tier == 'gold'", true],
    ["workflow.input.tier != 'gold'", false],
    ["1 != '1'", true],
    ["workflow.input.obj != workflow.input.sameObj", false],
    ["fetch.output.response.body.items[0] == fetch.output.response.body.items[1]", false],
  ])("equality %s → %s", (source, expected) => {
    expect(ev(source)).toBe(expected);
  });

  it("compares objects deeply, not by reference or key order", () => {
    const context = makeContext({
      workflow: { input: { x: { a: [1, { b: null }], c: "s" }, y: { c: "s", a: [1, { b: null }] }, z: { c: "s", a: [1, { b: 0 }] } } },
    });
    expect(ev("workflow.input.x == workflow.input.y", context)).toBe(true);
    expect(ev("workflow.input.x == workflow.input.z", context)).toBe(false);
    expect(ev("workflow.input.x != workflow.input.z", context)).toBe(true);
  });

  it.each<[string, boolean]>([
    ["1 < 2", true],
    ["2 < 1", false],
    ["2 < 2", false],
    ["2 <= 2", true],
    ["3 <= 2", false],
    ["3 > 2", true],
    ["2 > 2", false],
    ["2 >= 2", true],
    ["1 >= 2", false],
    ["-1 < 0", true],
    ["'a' < 'b'", true],
    ["'b' < 'a'", false],
    ["'abc' >= 'abc'", true],
    ["'10' < '9'", true],
    ["1 < '2'", false],
    ["'1' < 2", false],
    ["1 > '0'", false],
    ["null < 1", false],
    ["null >= null", false],
    ["true > false", false],
    ["workflow.input.missing <= 0", false],
    ["fetch.output.n > 3", true],
  ])("comparison %s → %s", (source, expected) => {
    expect(ev(source)).toBe(expected);
  });

  it.each<[string, boolean]>([
    ["workflow.input.zero", false],
    ["workflow.input.empty", false],
    ["workflow.input.nothing", false],
    ["workflow.input.missing", false],
    ["workflow.input.off", false],
    ["workflow.input.count", true],
    ["workflow.input.str", true],
    ["'0'", true],
    ["'false'", true],
    ["workflow.input.emptyList", true],
    ["workflow.input.emptyObj", true],
    ["-1", true],
  ])("truthiness of %s is %s", (source, truthy) => {
    expect(ev(`${source} ? 'yes' : 'no'`)).toBe(truthy ? "yes" : "no");
    expect(ev(`!${source}`)).toBe(!truthy);
    expect(ev(`!!${source}`)).toBe(truthy);
  });

  it.each<[string, JsonValue]>([
    ["workflow.input.zero || 'default'", "default"],
    ["workflow.input.str || 'default'", "hello"],
    ["workflow.input.missing || workflow.input.empty", ""],
    ["workflow.input.str && workflow.input.count", 3],
    ["workflow.input.empty && 'x'", ""],
    ["workflow.input.nothing && 'x'", null],
    ["workflow.input.list && workflow.input.obj", { a: 1, b: [1, 2] }],
  ])("&& and || return the deciding operand: %s", (source, expected) => {
    expect(ev(source)).toStrictEqual(expected);
  });

  it("makes ! return a boolean", () => {
    expect(ev("!workflow.input.str")).toBe(false);
    expect(ev("!workflow.input.zero")).toBe(true);
    expect(ev("!workflow.input.obj")).toBe(false);
  });

  it.each<[string, JsonValue]>([
    // && binds tighter than ||
    ["true || false && false", true],
    ["false && false || true", true],
    ["(true || false) && false", false],
    // comparison binds tighter than equality
    ["1 < 2 == true", true],
    ["2 == 1 < 3", false],
    // equality binds tighter than &&
    ["1 == 1 && 2 == 3", false],
    // ! binds tighter than equality
    ["!workflow.input.count == true", false],
    ["!(workflow.input.count == true)", true],
    // equality and comparison are left-associative
    ["'a' == 'a' == true", true],
    ["1 < 2 < 3", false],
    // ?: has the lowest precedence
    ["workflow.input.count > 2 && true ? 'yes' : 'no'", "yes"],
    ["false || true ? 1 : 2", 1],
    ["true ? 1 : 2 == 2", 1],
  ])("precedence: %s → %j", (source, expected) => {
    expect(ev(source)).toStrictEqual(expected);
  });

  it.each<[string, JsonValue]>([
    ["false ? 'a' : true ? 'b' : 'c'", "b"],
    ["false ? 'a' : false ? 'b' : 'c'", "c"],
    ["true ? false ? 'x' : 'y' : 'z'", "y"],
    ["true ? true ? 'x' : 'y' : 'z'", "x"],
    ["workflow.input.count == 1 ? 'one' : workflow.input.count == 2 ? 'two' : workflow.input.count == 3 ? 'three' : 'many'", "three"],
    ["(workflow.input.flag ? workflow.input.obj : null)", { a: 1, b: [1, 2] }],
  ])("nested ternary: %s → %j", (source, expected) => {
    expect(ev(source)).toStrictEqual(expected);
  });

  it("handles the examples of the contract", () => {
    expect(resolveValue("${workflow.input.tier == 'gold' ? 'fast_path' : 'slow_path'}", ctx)).toBe("fast_path");
    expect(resolveValue("${workflow.input.flag ? 'a' : 'b'}", ctx)).toBe("a");
    expect(resolveValue("${(a.output.n > 3 && !workflow.input.off) || workflow.input.force}", ctx)).toBe(true);
    const other = makeContext({ tasks: { a: { output: { n: 2 } } }, workflow: { input: { off: false, force: "yes" } } });
    expect(resolveValue("${(a.output.n > 3 && !workflow.input.off) || workflow.input.force}", other)).toBe("yes");
    const silver = makeContext({ workflow: { input: { tier: "silver" } } });
    expect(resolveValue("sub_${workflow.input.tier == 'gold' ? 'fast_path' : 'slow_path'}", silver)).toBe("sub_slow_path");
  });

  it("only evaluates the operand that decides, so untaken secrets are never looked up", () => {
    expect(ev("false && workflow.secrets.absent")).toBe(false);
    expect(ev("true || workflow.secrets.absent")).toBe(true);
    expect(ev("true ? 'ok' : workflow.secrets.absent")).toBe("ok");
    expect(ev("false ? workflow.secrets.absent : 'ok'")).toBe("ok");
    expect(() => ev("true && workflow.secrets.absent")).toThrow(MissingSecretError);
    expect(() => ev("false ? 'ok' : workflow.secrets.absent")).toThrow(MissingSecretError);
  });
});

describe("secrets", () => {
  it.each<[string, JsonValue]>([
    ["${workflow.secrets.token}", "s3cr3t"],
    ["Bearer ${workflow.secrets.token}", "Bearer s3cr3t"],
    ["${workflow.secrets['api key']}", "k-123"],
    ["${workflow['secrets'].token}", "s3cr3t"],
    ["${workflow.secrets.123}", "numeric-name"],
  ])("%s → %j", (template, expected) => {
    expect(resolveValue(template, ctx)).toBe(expected);
  });

  it("throws MissingSecretError naming the missing secret", () => {
    let thrown: unknown;
    try {
      resolveValue({ headers: { Authorization: "Bearer ${workflow.secrets.nope}" } }, ctx);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MissingSecretError);
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as MissingSecretError).secretName).toBe("nope");
    expect((thrown as MissingSecretError).message).toBe("secret 'nope' is not defined");
  });

  it("treats every secret as missing when no lookup is given", () => {
    expect(() => resolveValue("${workflow.secrets.token}", makeContext({ secret: undefined }))).toThrow(
      "secret 'token' is not defined",
    );
  });

  it("never exposes the secrets collection or what lies below a secret", () => {
    const calls: string[] = [];
    const spying = makeContext({ secret: (name) => (calls.push(name), SECRETS.get(name)) });
    expect(resolveValue("${workflow.secrets}", spying)).toBeNull();
    expect(resolveValue("${workflow['secrets']}", spying)).toBeNull();
    expect(resolveValue("[${workflow.secrets}]", spying)).toBe("[null]");
    // Below a secret's name: refused (see the next test), never read.
    expect(() => resolveValue("${workflow.secrets.token.length}", spying)).toThrow(SecretFieldReadError);
    expect(() => resolveValue("${workflow.secrets.token[0]}", spying)).toThrow(SecretFieldReadError);
    expect(resolveValue("${workflow.secrets[0]}", spying)).toBeNull();
    expect(calls).toEqual([]);
  });

  it.each([
    "${workflow.secrets.creds.user}",
    "u=${workflow.secrets.creds['user']}",
    "${workflow.secrets.token[0]}",
    "${workflow.secrets.creds.items[*]}",
    "${workflow.input.on ? workflow.secrets.creds.user : 'none'}",
    "${workflow.input.list[?(@ == workflow.secrets.creds.user)]}",
  ])("refuses %s as it is evaluated, with the words registration uses: a definition stored before registration refused it sends nothing", (text) => {
    const calls: string[] = [];
    const spying = makeContext({ workflow: { input: { on: true, list: [1] } }, secret: (name) => (calls.push(name), SECRETS.get(name)) });
    let thrown: unknown;
    try {
      resolveValue({ h: text }, spying);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SecretFieldReadError);
    // The task fails with it, as with a malformed expression, and its reason is what registration answers.
    expect(isExpressionFailure(thrown)).toBe(true);
    expect((thrown as Error).message).toBe(findTemplateErrors({ h: text }, "")[0]!.message);
    expect(calls).toEqual([]);
  });

  it("evaluates a secret read whole, and a field read in a branch not taken, as before", () => {
    const context = makeContext({ workflow: { input: { on: false } }, secret: (name) => SECRETS.get(name) });
    expect(resolveValue({ a: "${workflow.secrets.token}", b: "${workflow.secrets['api key']}", c: "${workflow.input.on ? workflow.secrets.creds.user : 'none'}" }, context)).toEqual({
      a: "s3cr3t",
      b: "k-123",
      c: "none",
    });
  });

  it("does not read a secrets field of the workflow record", () => {
    const context = makeContext({ secret: () => undefined });
    expect(() => resolveValue("${workflow.secrets.token}", context)).toThrow(MissingSecretError);
  });
});

describe("syntax errors", () => {
  it.each<[string, number, string]>([
    ["abc ${workflow.input.x", 4, "expected '}' to close '${'"],
    ["${workflow.input.x ${y}", 0, "expected '}' to close '${'"],
    ["${a[${b}", 0, "expected '}' to close '${'"],
    ["${a[${b]}", 0, "expected '}' to close '${'"],
    ["${a[${b c}]}", 8, "expected an operator or '}' but found 'c'"],
    ["${a ${b}}", 4, "expected an operator or '}' but found '${b}'"],
    ["${a..${b}}", 5, "'..' must be followed by a name, '*' or '[' but found '${b}'"],
    ["${$}", 2, "'$' must be followed by the name of a root"],
    ["${$[0]}", 2, "'$' must be followed by the name of a root"],
    ["${$ workflow}", 2, "'$' must be followed by the name of a root"],
    ["${$..id}", 2, "'$' must be followed by the name of a root"],
    ["${$['workflow'}", 14, "expected ']' to close '[' at position 3 but found '}'"],
    ["${a # b}", 4, "unexpected character '#'"],
    ["${a = 'b'}", 4, "unexpected character '='; did you mean '=='?"],
    ["${a & b}", 4, "did you mean '&&'?"],
    ["${a | b}", 4, "did you mean '||'?"],
    ["${a.%b}", 4, "unexpected character '%'"],
    ["${a == 'b}", 7, "unterminated string literal"],
    ['${a == "b}', 7, "unterminated string literal"],
    ["${'abc\\", 2, "unterminated string literal"],
    ["${'a\\qb'}", 4, "unknown escape sequence '\\q' in string literal"],
    ["${a ? 'b'}", 9, "expected ':' in conditional expression but found '}'"],
    ["${a ? b c}", 8, "expected ':' in conditional expression but found 'c'"],
    ["${(a == b}", 9, "expected ')' to close '(' at position 2 but found '}'"],
    ["${((a)}", 6, "expected ')' to close '(' at position 2"],
    ["${a == b)}", 8, "unexpected ')' without a matching '('"],
    ["${)}", 2, "unexpected ')' without a matching '('"],
    ["${a b}", 4, "expected an operator or '}' but found 'b'"],
    ["${a 'x'}", 4, "expected an operator or '}' but found a string literal"],
    ["${1 2}", 4, "expected an operator or '}' but found '2'"],
    ["${true.x}", 6, "expected an operator or '}' but found '.'"],
    ["${.a}", 2, "a path cannot start with '.'"],
    ["${a.}", 3, "a path cannot end with '.'"],
    ["${a.b. }", 5, "a path cannot end with '.'"],
    ["${a...b}", 5, "'..' must be followed by a name, '*' or '[' but found '.'"],
    ["${a.'b'}", 4, "expected a name after '.' but found a string literal"],
    ["${a[0}", 5, "expected ']' to close '[' at position 3 but found '}'"],
    ["${a['k'.b]}", 7, "expected ']' to close '[' at position 3"],
    ["${a[}", 4, "expected an array index or a quoted key after '[' but found '}'"],
    ["${a[b]}", 4, "expected an array index or a quoted key after '['"],
    ["${a[-b]}", 4, "expected an array index or a quoted key after '['"],
    ["${a[1.5]}", 4, "an array index must be an integer"],
    ["${a == }", 7, "expected a value but found '}'"],
    ["${!}", 3, "expected a value but found '}'"],
    ["${a && ?}", 7, "expected a value but found '?'"],
    ["${1e999}", 2, "number is too large"],
    ["${a {b}", 4, "unexpected character '{'"],
  ])("%s → position %i: %s", (template, position, reason) => {
    const error = syntaxErrorOf(() => parseTemplate(template));
    expect(error.position).toBe(position);
    expect(error.message).toContain(reason);
  });

  it("formats the message with the position and keeps the bare reason", () => {
    const error = syntaxErrorOf(() => parseTemplate("prefix ${a b}"));
    expect(error.message).toBe("malformed expression at position 11: expected an operator or '}' but found 'b'");
    expect(error.reason).toBe("expected an operator or '}' but found 'b'");
    expect(error.name).toBe("ExpressionSyntaxError");
    expect(error).toBeInstanceOf(Error);
  });

  it("reports offsets in the whole template, after earlier valid expressions", () => {
    const error = syntaxErrorOf(() => parseTemplate("ok ${workflow.input.id} then ${x y}"));
    expect(error.position).toBe(33);
  });

  it("rejects pathologically deep nesting with a syntax error, not a stack overflow", () => {
    const deep = "${" + "(".repeat(5_000) + "1" + ")".repeat(5_000) + "}";
    expect(syntaxErrorOf(() => parseTemplate(deep)).message).toContain("nested more than");
    const bangs = "${" + "!".repeat(5_000) + "true}";
    expect(syntaxErrorOf(() => parseTemplate(bangs)).message).toContain("nested more than");
    expect(ev("(".repeat(50) + "1" + ")".repeat(50))).toBe(1);
  });

  it.each(["||", "&&", "==", "<"])(
    "rejects a chain of 15,000 '%s' with a syntax error at parse time, not a stack overflow when evaluated",
    (operator) => {
      const chain = "${" + Array.from({ length: 15_001 }, () => "a").join(` ${operator} `) + "}";
      const error = syntaxErrorOf(() => parseTemplate(chain));
      expect(error.message).toContain("operators deep");
      // Reported at the operator that crosses the limit: the 1,001st, after 1,000 of "a <op> ".
      expect(error.position).toBe("${a ".length + 1_000 * `a ${operator} `.length);
      expect(findTemplateErrors({ when: chain }, "")).toEqual([{ path: "when", message: error.message }]);
    },
  );

  it("counts operator chains nested in parentheses towards the same limit, and evaluates chains within it", () => {
    const chainOf = (count: number) => Array.from({ length: count + 1 }, () => "workflow.input.off").join(" || ");
    expect(ev(chainOf(1_000))).toBe(false);
    expect(ev(Array.from({ length: 1_001 }, () => "true").join(" && "))).toBe(true);
    const nested = "${(" + chainOf(600) + ") || " + chainOf(600) + "}";
    expect(syntaxErrorOf(() => parseTemplate(nested)).message).toContain("operators deep");
  });

  it("counts the operators of a nested ${…} towards the path it sits in: ten levels of long chains are refused, not a stack overflow", () => {
    // Each level: a chain of 998 `||` whose first operand is a path with the next level nested in its index.
    const levels = (count: number): string => {
      let template = "0";
      for (let level = 0; level < count; level++) {
        const first = level === 0 ? "0" : `workflow.input.list[${template}]`;
        template = "${" + first + " || 0".repeat(998) + "}";
      }
      return template;
    };
    const deep = levels(10);
    const [issue] = findTemplateErrors({ when: deep }, "");
    expect(issue?.message).toContain("operators deep");
    expect(() => resolveValue(deep, ctx)).toThrow(ExpressionSyntaxError);
    // One level of such a chain is within the limit, and so is a nested one with the outer short.
    expect(findTemplateErrors({ when: levels(1) }, "")).toEqual([]);
    expect(resolveValue("${workflow.input.list[" + levels(1) + "] || 0}", ctx)).toBe(10);
  });

  it("raises the syntax error from resolveValue too", () => {
    expect(() => resolveValue({ a: ["${a b}"] }, ctx)).toThrow(ExpressionSyntaxError);
  });
});

describe("evaluateExpression", () => {
  it("evaluates a bare expression without ${ }", () => {
    expect(evaluateExpression("workflow.input.count > 2", ctx)).toBe(true);
    expect(evaluateExpression("fetch.output.response.body.items", ctx)).toEqual([{ id: 7 }, { id: 8 }]);
    expect(evaluateExpression("workflow.input.tier == 'gold' ? 'fast' : 'slow'", ctx)).toBe("fast");
    expect(evaluateExpression("'}'", ctx)).toBe("}");
  });

  it("reports positions relative to the source", () => {
    const trailing = syntaxErrorOf(() => evaluateExpression("a b", ctx));
    expect(trailing.position).toBe(2);
    expect(trailing.reason).toBe("expected an operator or the end of the expression but found 'b'");
    const empty = syntaxErrorOf(() => evaluateExpression("   ", ctx));
    expect(empty.position).toBe(0);
    expect(empty.reason).toBe("empty expression");
    const brace = syntaxErrorOf(() => evaluateExpression("a }", ctx));
    expect(brace.position).toBe(2);
    expect(brace.reason).toBe("unexpected character '}'");
    const missingColon = syntaxErrorOf(() => evaluateExpression("a ? b", ctx));
    expect(missingColon.reason).toBe("expected ':' in conditional expression but found the end of the expression");
  });

  it("throws MissingSecretError for a missing secret", () => {
    expect(() => evaluateExpression("workflow.secrets.gone", ctx)).toThrow(MissingSecretError);
  });
});

describe("findTemplateErrors", () => {
  it("returns nothing for valid and expression-free values", () => {
    expect(findTemplateErrors({ a: "${workflow.input.id}", b: [1, null, "$${x"], c: "plain" }, "")).toEqual([]);
    expect(findTemplateErrors(5, "x")).toEqual([]);
  });

  it("lists every malformed string with its path and positioned message", () => {
    const definition: JsonValue = {
      tasks: [
        { inputParameters: { ok: "${workflow.input.id}" } },
        {
          inputParameters: {
            headers: { X: "v=${a b}", "Y-Header": "${(a}" },
            list: ["fine", "${", { deep: "${.a}" }],
          },
        },
      ],
    };
    expect(findTemplateErrors(definition, "")).toEqual([
      { path: "tasks[1].inputParameters.headers.X", message: "malformed expression at position 6: expected an operator or '}' but found 'b'" },
      {
        path: "tasks[1].inputParameters.headers.Y-Header",
        message: "malformed expression at position 4: expected ')' to close '(' at position 2 but found '}'",
      },
      { path: "tasks[1].inputParameters.list[1]", message: "malformed expression at position 0: expected '}' to close '${'" },
      { path: "tasks[1].inputParameters.list[2].deep", message: "malformed expression at position 2: a path cannot start with '.'" },
    ]);
  });

  it("refuses a secret used other than as a value: its result would differ between stored input (***) and what is sent", () => {
    const misuse = (text: string) => findTemplateErrors({ v: text }, "").map((issue) => issue.message);
    expect(misuse("${workflow.secrets.k < workflow.input.probe}")).toEqual([
      "workflow.secrets.k at position 2 may only be used as a value (the whole expression, a branch of ?:, or text in a string), not as an operand of <: the outcome would reveal something about the secret",
    ]);
    for (const [text, operator] of [
      ["${workflow.input.p == workflow.secrets.k}", "=="],
      ["${workflow.secrets.k != 'x'}", "!="],
      ["${workflow.secrets.k > 'm'}", ">"],
      ["${workflow.secrets.k <= 'm'}", "<="],
      ["${workflow.secrets.k >= 'm'}", ">="],
      ["${!workflow.secrets.k}", "!"],
      ["${-workflow.secrets.k}", "-"],
      ["${workflow.secrets.k && 'a'}", "&&"],
      ["${workflow.input.x || workflow.secrets.k}", "||"],
      ["${workflow.secrets.k ? 'a' : 'b'}", "?:"],
      ["${workflow['secrets']['k'] == 'x'}", "=="],
      ["a ${workflow.input.on ? (workflow.secrets.k == 'x') : 'b'}", "=="],
    ]) {
      const role = operator === "?:" ? "as the condition of ?:" : `as an operand of ${operator!}`;
      expect(misuse(text!), text).toEqual([expect.stringContaining(`, not ${role}:`)]);
    }
    for (const text of ["${workflow.secrets.k}", "Bearer ${workflow.secrets.k}", "${workflow.input.on ? workflow.secrets.k : workflow.secrets.j}", "${workflow.input.on ? 'a' : workflow.secrets.k}", "${workflow.secrets}"]) {
      expect(misuse(text), text).toEqual([]);
    }
  });

  it("prefixes paths with the given parent path", () => {
    expect(findTemplateErrors({ uri: "${a b}" }, "workflowDef.tasks[0].inputParameters")).toEqual([
      { path: "workflowDef.tasks[0].inputParameters.uri", message: "malformed expression at position 4: expected an operator or '}' but found 'b'" },
    ]);
    expect(findTemplateErrors("${a b}", "outputParameters.result")).toEqual([
      { path: "outputParameters.result", message: "malformed expression at position 4: expected an operator or '}' but found 'b'" },
    ]);
    expect(findTemplateErrors(["ok", "${a[}"], "")).toEqual([
      { path: "[1]", message: "malformed expression at position 4: expected an array index or a quoted key after '[' but found '}'" },
    ]);
  });
});

describe("referencedSecrets", () => {
  it("collects each secret name once, in order of first use, from nested values", () => {
    const definition: JsonValue = {
      headers: { Authorization: "Bearer ${workflow.secrets.token}", "X-Key": "${workflow.secrets['api key']}" },
      body: ["${workflow.secrets.token}", { nested: "${workflow.input.useB ? workflow.secrets.b : workflow.secrets.c}" }],
      other: "${workflow.input.x == workflow.secrets.d && !workflow.secrets.e || -workflow.secrets.f}",
    };
    expect(referencedSecrets(definition)).toEqual(["token", "api key", "b", "c", "d", "e", "f"]);
  });

  it("ignores escapes, the bare collection, deeper paths, malformed strings and look-alikes", () => {
    const definition: JsonValue = {
      escaped: "$${workflow.secrets.escaped}",
      bare: "${workflow.secrets}",
      deeper: "${workflow.secrets.deep.er}",
      indexed: "${workflow.secrets[0]}",
      malformed: "${workflow.secrets.bad b}",
      taskRef: "${secrets.notOne}",
      input: "${workflow.input.secrets.notOne}",
      literal: "${'workflow.secrets.str'}",
      plain: "workflow.secrets.plain",
      real: "${workflow['secrets'].real}",
    };
    expect(referencedSecrets(definition)).toEqual(["real"]);
  });

  it("returns an empty list for values without secrets", () => {
    expect(referencedSecrets({ a: 1, b: ["x", null, "${workflow.input.a}"] })).toEqual([]);
  });
});

describe("properties", () => {
  const noDollar = fc.string({ unit: "binary" }).map((s) => s.replaceAll("$", "_"));

  /** Replaces `$` in every string value (keys too) so nothing can start an expression. */
  function stripDollars(value: unknown): JsonValue {
    if (typeof value === "string") return value.replaceAll("$", "_");
    if (Array.isArray(value)) return value.map(stripDollars);
    if (value !== null && typeof value === "object") {
      const out: JsonObject = {};
      for (const [key, item] of Object.entries(value)) {
        Object.defineProperty(out, key, { value: stripDollars(item), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return value as JsonValue;
  }

  it("returns strings without $ unchanged", () => {
    fc.assert(
      fc.property(noDollar, (text) => {
        expect(resolveValue(text, ctx)).toBe(text);
        expect(hasExpression(text)).toBe(false);
      }),
    );
  });

  it("turns $${ followed by text without $ into a literal ${", () => {
    fc.assert(
      fc.property(noDollar, noDollar, (before, after) => {
        expect(resolveValue(`${before}$\${${after}`, ctx)).toBe(`${before}\${${after}`);
      }),
    );
  });

  it("is the identity on JSON values whose strings contain no $", () => {
    fc.assert(
      fc.property(fc.jsonValue().map(stripDollars), (value) => {
        expect(resolveValue(value, ctx)).toStrictEqual(value);
        expect(findTemplateErrors(value, "")).toEqual([]);
        expect(referencedSecrets(value)).toEqual([]);
      }),
    );
  });

  const fragments = fc
    .array(
      fc.constantFrom(
        "${", "$${", "}", "$", "{", "'", '"', "\\", "(", ")", "[", "]", ".", ",", "a", "b-c", "0", "12", "1.5",
        " ", "==", "!=", "<", ">=", "&&", "||", "?", ":", "!", "-", "true", "null",
        "workflow", "secrets", "input", "TASK_ID", "system", "currentTimeMillis",
      ),
      { maxLength: 25 },
    )
    .map((parts) => parts.join(""));

  it("parseTemplate either returns or throws ExpressionSyntaxError, and parsed templates evaluate", () => {
    const anySecret = makeContext({ secret: (name) => `secret:${name}` });
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary" }), fragments), (text) => {
        let parsed = false;
        try {
          parseTemplate(text);
          parsed = true;
        } catch (error) {
          if (!(error instanceof ExpressionSyntaxError)) throw error;
          expect(error.position).toBeGreaterThanOrEqual(0);
          expect(error.position).toBeLessThanOrEqual(text.length);
          expect(findTemplateErrors(text, "p")).toEqual([{ path: "p", message: error.message }]);
        }
        if (parsed) {
          const value = resolveValue(text, anySecret);
          expect(JSON.parse(JSON.stringify(value))).toStrictEqual(value);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("evaluationContext", () => {
  it("gives a task and the workflow the fields Conductor's ParametersUtils gives them (taskDefName, iteration, pollCount, schemaVersion…)", () => {
    const definition: WorkflowDef = {
      name: "fields",
      version: 1,
      schemaVersion: 2,
      tasks: [{ name: "loop", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "$.loop['iteration'] < 2", inputParameters: {}, loopOver: [{ name: "hook", taskReferenceName: "hook", type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] }],
    };
    const env = (now: number) => ({ now, newId: () => `id-${now}-${Math.random()}`, config: DEFAULT_ENGINE_CONFIG, scripts: scriptRunner, jq: jqRunner, taskDefs: () => null });
    const started = decide(createExecution({ workflowId: "wf", definition, input: {}, correlationId: "c-1" }, 1_000), { type: "start" }, env(1_000)).state;
    const first = started.tasks.find((task) => task.referenceTaskName === "hook__1")!;
    const second = decide(started, { type: "externalUpdate", taskId: first.taskId, status: "COMPLETED", output: {} }, env(2_000)).state;
    const context = evaluationContext(second, 3_000);
    expect(resolveValue({ iteration: "${hook.iteration}", name: "${hook.taskDefName}", polls: "${hook.pollCount}", wf: "${hook.workflowInstanceId}", correlation: "${hook.correlationId}", callback: "${hook.callbackAfterSeconds}" }, context)).toEqual({
      iteration: 2,
      name: "hook",
      polls: 0,
      wf: "wf",
      correlation: "c-1",
      callback: 0,
    });
    expect(resolveValue({ schema: "${workflow.schemaVersion}", reason: "${workflow.reasonForIncompletion}", key: "${workflow.idempotencyKey}" }, context)).toEqual({ schema: 2, reason: null, key: null });
    // Orkes' ${workflow.idempotencyKey}: the key it was started with.
    const keyed = evaluationContext({ ...second, idempotencyKey: "order-7" }, 3_000);
    expect(resolveValue({ key: "${workflow.idempotencyKey}" }, keyed)).toEqual({ key: "order-7" });
  });

  it("gives a task's taskType and taskDefName as its Task JSON shows them: a worker's task by its name, a fork as FORK, a JOIN as JOIN", () => {
    const definition: WorkflowDef = {
      name: "shown_types",
      version: 1,
      schemaVersion: 2,
      tasks: [
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", inputParameters: {}, forkTasks: [[{ name: "encode", taskReferenceName: "enc", type: "SIMPLE", inputParameters: {} }]] },
        { name: "gather", taskReferenceName: "gather", type: "JOIN", inputParameters: {}, joinOn: ["enc"] },
      ],
    };
    const env = { now: 1_000, newId: () => `id-${Math.random()}`, config: DEFAULT_ENGINE_CONFIG, scripts: scriptRunner, jq: jqRunner, taskDefs: () => null };
    const started = decide(createExecution({ workflowId: "wf", definition, input: {} }, 1_000), { type: "start" }, env).state;
    const context = evaluationContext(started, 2_000);
    // Conductor's ParametersUtils reads the task model, whose type its mappers set so (SIMPLE's is the task's name).
    expect(resolveValue({ enc: "${enc.taskType}/${enc.taskDefName}", fan: "${fan.taskType}/${fan.taskDefName}", gather: "${gather.taskType}/${gather.taskDefName}" }, context)).toEqual({
      enc: "encode/encode",
      fan: "FORK/FORK",
      gather: "JOIN/JOIN",
    });
  });

  it("lets a query over an HTTP task, or its whole output, find each value once: its output as Conductor's, {response}, without the top-level copies", () => {
    const definition: WorkflowDef = {
      name: "es_search",
      version: 1,
      schemaVersion: 2,
      tasks: [{ name: "search", taskReferenceName: "get_es_1", type: "HTTP", inputParameters: { http_request: { uri: "http://es.example/_search", method: "GET" } } }],
    };
    const env = { now: 1_000, newId: () => `id-${Math.random()}`, config: DEFAULT_ENGINE_CONFIG, scripts: scriptRunner, jq: jqRunner, taskDefs: () => null };
    const started = decide(createExecution({ workflowId: "wf", definition, input: {} }, 1_000), { type: "start" }, env).state;
    const hits = { hits: [{ _source: { workflowId: "wf-a", status: "COMPLETED" } }, { _source: { workflowId: "wf-b", status: "FAILED" } }] };
    const outputData = httpOutput({ statusCode: 200, statusText: "OK", headers: [["content-type", "application/json"]], body: new TextEncoder().encode(JSON.stringify({ hits })) });
    const done = { ...started, tasks: started.tasks.map((task) => ({ ...task, status: "COMPLETED" as const, outputData })) };
    const context = evaluationContext(done, 2_000);
    // Conductor's kitchensink reads `${get_es_1.output..status}`; its HTTP output holds the body once, under `response`.
    expect(resolveValue({ statuses: "${get_es_1.output..status}", ids: "${get_es_1.output..workflowId}", codes: "${get_es_1..statusCode}", all: "${get_es_1.output.*}" }, context)).toEqual({
      statuses: ["COMPLETED", "FAILED"],
      ids: ["wf-a", "wf-b"],
      codes: [200],
      all: [outputData["response"]],
    });
    // Paths without a query read the copies as before, and the output whole keeps them.
    expect(resolveValue({ body: "${get_es_1.output.body.hits.hits[1]._source.status}", code: "${get_es_1.output.statusCode}", output: "${get_es_1.output}" }, context)).toEqual({ body: "FAILED", code: 200, output: outputData });
    // A copy a caller changed is no copy: a query finds it.
    const changed = evaluationContext({ ...done, tasks: done.tasks.map((task) => ({ ...task, outputData: { ...outputData, statusCode: 299 } })) }, 2_000);
    expect(resolveValue("${get_es_1.output..statusCode}", changed)).toEqual([299, 200]);
  });

  it.each(["__proto__", "constructor", "toString", "hasOwnProperty"])("reads the task whose reference name is %s", (ref) => {
    const definition: WorkflowDef = { name: "odd_refs", version: 1, schemaVersion: 2, tasks: [{ name: "p", taskReferenceName: ref, type: "WAIT_FOR_WEBHOOK", inputParameters: {} }] };
    const env = (now: number) => ({ now, newId: () => `id-${now}`, config: DEFAULT_ENGINE_CONFIG, scripts: scriptRunner, jq: jqRunner, taskDefs: () => null });
    const started = decide(createExecution({ workflowId: "wf", definition, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
    const done = decide(started, { type: "externalUpdate", taskId: started.tasks[0]!.taskId, status: "COMPLETED", output: { v: 42 } }, env(2_000)).state;
    const context = evaluationContext(done, 3_000);
    expect(resolveValue("${" + ref + ".output.v}", context)).toBe(42);
    // Names an object inherits are no tasks.
    for (const absent of ["__proto__", "constructor", "toString", "hasOwnProperty"].filter((name) => name !== ref)) expect(context.task(absent)).toBeUndefined();
  });
});

describe("built-in roots", () => {
  it("are exactly the roots resolvePath answers without asking for a task: registration's BUILT_IN_ROOTS and evaluation agree", () => {
    const asked: string[] = [];
    const context = makeContext({ task: (reference) => (asked.push(reference), { output: {} }) });
    for (const root of ["workflow", "system", "TASK_ID", "CPEWF_TASK_ID", "workflows", "System", "task_id", "fetch"]) {
      asked.length = 0;
      ev(`${root}.x`, context);
      expect({ root, askedForTask: asked.includes(root) }).toEqual({ root, askedForTask: !BUILT_IN_ROOTS.has(root) });
    }
  });
});
