import { describe, expect, it } from "vitest";
import { parseExpression } from "../../src/engine/expressions/parser";
import { ExpressionSyntaxError } from "../../src/engine/expressions";
import type { JsonObject, WorkflowDef, WorkflowTaskDef } from "../../src/engine/model";
import { flattenTasks, mapTasks, nextPlanIndex, planIndexOf, planOf } from "../../src/engine/plan";
import { createExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { env } from "./engine-env";

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
  const cases = (tasks: WorkflowTaskDef[], input: JsonObject) => {
    const definition: WorkflowDef = { name: "switch_js", version: 1, schemaVersion: 2, tasks };
    return decide(createExecution({ workflowId: "wf", definition, input }, 1_000), { type: "start" }, env(1_000)).state.tasks;
  };
  const scripted = (expression: string): WorkflowTaskDef => ({
    ...switchOf("route", { yes: [task("on_yes")], true: [task("on_true")], big: [task("on_big")] }, [task("on_default")]),
    evaluatorType: "javascript",
    expression,
    inputParameters: { a: "${workflow.input.a}", items: "${workflow.input.items}", n: "${workflow.input.n}" },
  });

  it("runs as JavaScript over $ (the task's input): conversions, methods, functions and .length included", () => {
    expect(cases([scripted("$.a === 'x' ? 'yes' : 'no'")], { a: "x" }).map((t) => t.referenceTaskName)).toEqual(["route", "on_yes"]);
    expect(cases([scripted("$.items.length > 2 && $.items.every(function (i) { return i > 0; })")], { items: [1, 2, 3] })[0]!.outputData).toEqual({ evaluationResult: ["true"], selectedCase: "true" });
    // JavaScript's own reading: `$.n-1` is n minus one, and == converts.
    expect(cases([scripted("$.n-1 == '9' ? 'big' : 'small'")], { n: 10 })[0]!.outputData).toEqual({ evaluationResult: ["big"], selectedCase: "big" });
    // The case is in the SWITCH's input too, as Conductor's mapper puts it (`${route.input.case}`).
    expect(cases([scripted("$.n-1 == '9' ? 'big' : 'small'")], { n: 10 })[0]!.inputData).toEqual({ a: null, items: null, n: 10, case: "big", hasChildren: "true" });
    expect(cases([scripted("(function () { var t = 0; for (var i = 0; i < $.n; i++) t += i; return t > 40 ? 'big' : 'small'; })()")], { n: 10 }).map((t) => t.referenceTaskName)).toEqual(["route", "on_big"]);
  });

  it("shows hasChildren \"true\" in its input when the branch taken runs a task, as Conductor's SwitchTaskMapper and DecisionTaskMapper put it", () => {
    const withCases = (decisionCases: Record<string, WorkflowTaskDef[]>, defaultCase: WorkflowTaskDef[], type: "SWITCH" | "DECISION" = "SWITCH"): WorkflowTaskDef => {
      const base = { ...scripted("$.a"), decisionCases, defaultCase };
      return type === "SWITCH" ? base : { name: "route", taskReferenceName: "route", type, caseExpression: "$.a", decisionCases, defaultCase, inputParameters: base.inputParameters ?? {} };
    };
    const inputOf = (definition: WorkflowTaskDef, a: string) => cases([definition], { a })[0]!.inputData;
    // A case with tasks, or the defaultCase taken by an unknown value or by an empty case.
    expect(inputOf(withCases({ x: [task("on_x")], empty: [] }, [task("on_default")]), "x")).toMatchObject({ case: "x", hasChildren: "true" });
    expect(inputOf(withCases({ x: [task("on_x")], empty: [] }, [task("on_default")]), "other")).toMatchObject({ case: "other", hasChildren: "true" });
    expect(inputOf(withCases({ x: [task("on_x")], empty: [] }, [task("on_default")]), "empty")).toMatchObject({ case: "empty", hasChildren: "true" });
    // No task to run: no hasChildren.
    expect(inputOf(withCases({ x: [task("on_x")], empty: [] }, []), "other")).not.toHaveProperty("hasChildren");
    expect(inputOf(withCases({ x: [task("on_x")], empty: [] }, []), "empty")).not.toHaveProperty("hasChildren");
    expect(inputOf(withCases({ x: [task("on_x")] }, []), "__proto__")).not.toHaveProperty("hasChildren");
    // A DECISION likewise.
    expect(inputOf(withCases({ x: [task("on_x")] }, [], "DECISION"), "x")).toMatchObject({ case: "x", hasChildren: "true" });
    expect(inputOf(withCases({ x: [task("on_x")] }, [], "DECISION"), "y")).not.toHaveProperty("hasChildren");
  });

  it("fails the SWITCH, as Conductor does, when the expression throws: no branch and no default runs", () => {
    const tasks = cases([scripted("$.missing.deep")], {});
    expect(tasks.map((t) => [t.referenceTaskName, t.status])).toEqual([["route", "FAILED_WITH_TERMINAL_ERROR"]]);
    expect(tasks[0]!.reasonForIncompletion).toMatch(/^The SWITCH expression could not be evaluated: TypeError/);
  });

  it("a failing expression reading names its input does not hold ($.workflow.input.kind, a ${...} path written as a script) names them and the inputParameters $ holds", () => {
    const tasks = cases([scripted("$.workflow.input.kind == 'big' ? 'big' : $['typo'].x")], {});
    expect(tasks[0]!.reasonForIncompletion).toMatch(/^The SWITCH expression could not be evaluated: TypeError[^;]*; it reads \$\.workflow, \$\.typo, which \$ does not hold: \$ holds the SWITCH's inputParameters \(a, items, n\)$/);
    // Reading only names it holds, the error stands alone.
    expect(cases([scripted("$.a.deep.er")], {})[0]!.reasonForIncompletion).toMatch(/^The SWITCH expression could not be evaluated: TypeError[^;]*$/);
  });

  it("leaves === out of ${...} templates, where $ is JSONPath's root (as Conductor reads it), not the script's input", () => {
    expect(parseExpression("$.a", 0, { kind: "bare" }).expression).toMatchObject({ kind: "path", root: "a", segments: [] });
    expect(() => parseExpression("a === b", 0, { kind: "bare" })).toThrow(ExpressionSyntaxError);
  });
});
