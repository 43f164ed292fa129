import { describe, expect, it } from "vitest";
import { parseExpression } from "../../src/engine/expressions/parser";
import { ExpressionSyntaxError } from "../../src/engine/expressions";
import type { WorkflowDef, WorkflowTaskDef } from "../../src/engine/model";
import { flattenTasks, mapTasks, nextPlanIndex, planIndexOf, planOf } from "../../src/engine/plan";
import { evaluateSwitchScript, switchScriptProblem } from "../../src/engine/tasks/switch/expression";

const task = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: {} });
const switchOf = (ref: string, decisionCases: Record<string, WorkflowTaskDef[]>, defaultCase: WorkflowTaskDef[] = []): WorkflowTaskDef => ({
  name: ref,
  taskReferenceName: ref,
  type: "SWITCH",
  evaluatorType: "value-param",
  expression: "x",
  decisionCases,
  defaultCase,
});
const definitionOf = (tasks: WorkflowTaskDef[]): WorkflowDef => ({ name: "plan", version: 1, schemaVersion: 2, tasks });
const refs = (definition: WorkflowDef) => planOf(definition).steps.map((step) => step.task.taskReferenceName);
/** Where the plan goes after task `ref` ends with `status` (a SWITCH having chosen `chosen`). */
const after = (definition: WorkflowDef, ref: string, chosen?: string, status: "COMPLETED" | "SKIPPED" | "COMPLETED_WITH_ERRORS" = "COMPLETED") => {
  const index = nextPlanIndex(definition, { definitionIndex: planIndexOf(definition, ref), status, outputData: chosen === undefined ? {} : { evaluationResult: [chosen] } });
  return refs(definition)[index] ?? "end";
};

describe("a definition's plan", () => {
  it("is the task list itself for a definition without SWITCH tasks, so stored indexes keep their meaning", () => {
    const definition = definitionOf([task("a"), task("b"), task("c")]);
    expect(refs(definition)).toEqual(["a", "b", "c"]);
    expect(planOf(definition).steps.map((step) => step.next)).toEqual([1, 2, 3]);
    expect(after(definition, "c")).toBe("end");
  });

  it("lays out each SWITCH's cases in order, then its defaultCase, then what follows it, and routes by the chosen case", () => {
    const definition = definitionOf([
      task("first"),
      switchOf("route", { a: [task("a1"), switchOf("inner", { x: [task("x1")] }, [task("d_inner")]), task("a3")], b: [], c: [task("c1")] }, [task("d1")]),
      task("last"),
    ]);
    expect(refs(definition)).toEqual(["first", "route", "a1", "inner", "x1", "d_inner", "a3", "c1", "d1", "last"]);
    expect(after(definition, "first")).toBe("route");
    expect(after(definition, "route", "a")).toBe("a1");
    // An empty case runs the defaultCase, as in Conductor.
    expect(after(definition, "route", "b")).toBe("d1");
    expect(after(definition, "route", "c")).toBe("c1");
    expect(after(definition, "route", "zzz")).toBe("d1");
    expect(after(definition, "a1")).toBe("inner");
    expect(after(definition, "inner", "x")).toBe("x1");
    expect(after(definition, "inner", "y")).toBe("d_inner");
    expect(after(definition, "x1")).toBe("a3");
    expect(after(definition, "d_inner")).toBe("a3");
    expect(after(definition, "a3")).toBe("last");
    expect(after(definition, "c1")).toBe("last");
    expect(after(definition, "d1")).toBe("last");
    // A SWITCH that was skipped or failed as optional runs none of its branches.
    expect(after(definition, "route", "a", "SKIPPED")).toBe("last");
    expect(after(definition, "route", "a", "COMPLETED_WITH_ERRORS")).toBe("last");
    expect(after(definition, "route")).toBe("last");
  });

  it("ends the workflow after the last task of a branch of a SWITCH that ends the definition, and after an empty defaultCase", () => {
    const definition = definitionOf([switchOf("route", { a: [task("a1")], b: [] })]);
    expect(after(definition, "a1")).toBe("end");
    expect(after(definition, "route", "other")).toBe("end");
    expect(after(definition, "route", "b")).toBe("end");
  });

  it("keeps a case named __proto__ an ordinary case", () => {
    const cases: Record<string, WorkflowTaskDef[]> = {};
    Object.defineProperty(cases, "__proto__", { value: [task("proto")], enumerable: true });
    const definition = definitionOf([switchOf("route", cases)]);
    expect(after(definition, "route", "__proto__")).toBe("proto");
    const mapped = mapTasks(definition.tasks, (each) => (each.taskReferenceName === "proto" ? { ...each, description: "changed" } : each));
    expect(Object.hasOwn(mapped[0]!.decisionCases!, "__proto__")).toBe(true);
    expect(flattenTasks(mapped).map((each) => each.description)).toEqual([undefined, "changed"]);
  });

  it("mapTasks returns the very same list when nothing changed", () => {
    const tasks = [switchOf("route", { a: [task("a1")] }, [task("d1")])];
    expect(mapTasks(tasks, (each) => each)).toBe(tasks);
  });
});

describe("a SWITCH's javascript expression", () => {
  it("reads the input through $, with JavaScript's === and !== spelling", () => {
    expect(evaluateSwitchScript("$.a === 'x' ? 'yes' : 'no'", { a: "x" })).toBe("yes");
    expect(evaluateSwitchScript("$.a !== 'x' && $['b-c'][1] > 2", { a: "y", "b-c": [0, 3] })).toBe(true);
    expect(evaluateSwitchScript("$.missing.deep", {})).toBe(null);
  });

  it("is refused with the subset described when it uses anything else, or a root other than $", () => {
    for (const source of ["(function(){ return 1; })()", "$.a + 1", "$.list.length()", "workflow.input.x", "x"]) {
      expect(switchScriptProblem(source), source).toMatch(/subset of JavaScript/);
    }
    expect(switchScriptProblem("workflow.input.x")).toMatch(/'workflow' is not defined/);
    expect(switchScriptProblem("$.a == 1 ? $.b : null")).toBeUndefined();
  });

  it("refuses JavaScript it would read differently: a '-' after a name is a minus, not part of the name", () => {
    // In JavaScript `$.count-1` is count minus one; reading it as the key "count-1" would pick the wrong case.
    for (const source of ["$.count-1 > 0", "$.a.b-c", "$.retries-1"]) {
      expect(switchScriptProblem(source), source).toMatch(/subset of JavaScript/);
    }
    // A key with a '-' is still read JavaScript's way.
    expect(evaluateSwitchScript("$['count-1'] > 0", { "count-1": 2 })).toBe(true);
  });

  it("refuses .length, which JavaScript answers for strings and lists and this subset does not", () => {
    for (const source of ["$.items.length > 0", "$.name['length'] === 0", "$.length"]) {
      expect(switchScriptProblem(source), source).toMatch(/length.*subset of JavaScript/);
    }
  });

  it("leaves $ and === out of ${...} templates", () => {
    expect(() => parseExpression("$.a", 0, { kind: "bare" })).toThrow(ExpressionSyntaxError);
    expect(() => parseExpression("a === b", 0, { kind: "bare" })).toThrow(ExpressionSyntaxError);
  });
});
