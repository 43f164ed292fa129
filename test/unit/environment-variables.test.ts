import { describe, expect, it } from "vitest";
import { createExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { environmentVariablesOf } from "../../src/engine/environment";
import { evaluateExpression, findTemplateErrors, type EvaluationContext } from "../../src/engine/expressions";
import type { JsonValue, WorkflowDef } from "../../src/engine/model";
import { env } from "./engine-env";

/** A context whose workflow holds the environment `values`. */
function withEnvironment(values: Record<string, string>): EvaluationContext {
  return { workflow: { env: values, input: {} }, task: () => undefined, now: 0 };
}

describe("Orkes' environment variables in expressions", () => {
  const ctx = withEnvironment({ base: "https://pay.example.com", "db-config": '{"region":"eu","hosts":["a","b"]}', plain: "not json" });

  it("reads a variable as text, or with .$ as JSON walked further", () => {
    expect(evaluateExpression("workflow.env.base", ctx)).toBe("https://pay.example.com");
    expect(evaluateExpression("workflow.env.db-config.$.region", ctx)).toBe("eu");
    expect(evaluateExpression("workflow.env.db-config.$.hosts[1]", ctx)).toBe("b");
    expect(evaluateExpression("workflow.env.db-config.$", ctx)).toEqual({ region: "eu", hosts: ["a", "b"] });
    // A path straight after the name reads the JSON too, as Conductor's ParametersUtils reads workflow.env.<name>.<path>.
    expect(evaluateExpression("workflow.env.db-config.region", ctx)).toBe("eu");
    expect(evaluateExpression("workflow.env.db-config.hosts[1]", ctx)).toBe("b");
    expect(evaluateExpression("workflow.env.db-config.hosts.length()", ctx)).toBe(2);
    // Text that is not JSON (also below it), a variable that does not exist: null, as any missing data.
    expect(evaluateExpression("workflow.env.plain.$", ctx)).toBeNull();
    expect(evaluateExpression("workflow.env.missing", ctx)).toBeNull();
    expect(evaluateExpression("workflow.env.base.host", ctx)).toBeNull();
    expect(findTemplateErrors({ uri: "${workflow.env.base}/charge", cfg: "${workflow.env.db-config.$}" }, "inputParameters")).toEqual([]);
  });

  it("finds the variables a definition names anywhere in it, once each, valid names only", () => {
    const definition = {
      name: "env_names",
      version: 1,
      tasks: [
        { name: "call", taskReferenceName: "call", type: "HTTP", inputParameters: { uri: "${workflow.env.base}/x", headers: { region: "${workflow.env.cfg.$.region}" } } },
        {
          name: "route",
          taskReferenceName: "route",
          type: "SWITCH",
          evaluatorType: "value-param",
          expression: "v",
          inputParameters: { v: "${workflow.input.v}" },
          decisionCases: { a: [{ name: "inner", taskReferenceName: "inner", type: "SET_VARIABLE", inputParameters: { x: "${workflow.env.inner_value} and ${workflow.env.base}" } }] },
        },
      ],
      outputParameters: { seen: "${workflow.env['odd.name']}" },
    } as unknown as WorkflowDef;
    expect(environmentVariablesOf(definition)).toEqual(["base", "cfg", "inner_value"]);
    // Computed once per definition object.
    expect(environmentVariablesOf(definition)).toBe(environmentVariablesOf(definition));
  });

  it("resolves a task's input from the values the execution started with", () => {
    const definition = { name: "env_run", version: 1, tasks: [{ name: "set", taskReferenceName: "set", type: "SET_VARIABLE", inputParameters: { url: "${workflow.env.base}/charge", region: "${workflow.env.cfg.$.region}" } }] } as unknown as WorkflowDef;
    const execution = createExecution({ workflowId: "wf-env", definition, input: {}, environment: { base: "https://pay.example.com", cfg: '{"region":"eu"}' } }, 1_000);
    const started = decide(execution, { type: "start" }, env(1_000)).state;
    expect(started.variables).toMatchObject({ url: "https://pay.example.com/charge", region: "eu" });
  });

  it("takes the values a command that runs tasks again brings, dropping them all for {}", () => {
    const definition = { name: "env_again", version: 1, tasks: [{ name: "set", taskReferenceName: "set", type: "SET_VARIABLE", inputParameters: { url: "${workflow.env.base}" } }] } as unknown as WorkflowDef;
    const execution = createExecution({ workflowId: "wf-env-again", definition, input: {}, environment: { base: "https://old.example.com" } }, 1_000);
    const ended = decide(execution, { type: "start" }, env(1_000)).state;
    expect(ended.status).toBe("COMPLETED");
    const restarted = decide(ended, { type: "restart", environment: { base: "https://new.example.com" } }, env(2_000)).state;
    expect(restarted.environment).toEqual({ base: "https://new.example.com" });
    expect(restarted.variables).toMatchObject({ url: "https://new.example.com" });
    // Without values the restart keeps those it had; with none at all they go.
    expect(decide(ended, { type: "restart" }, env(2_000)).state.environment).toEqual({ base: "https://old.example.com" });
    const emptied = decide(ended, { type: "rerun", environment: {} }, env(2_000)).state;
    expect(emptied.environment).toBeUndefined();
    expect(emptied.variables).toMatchObject({ url: null });
  });

  it("lets a dynamic fork's tasks read variables the definition names, and an inline child's definition any", () => {
    // The tasks come from the input (data): the definition names only `named`.
    const definition = {
      name: "env_fork_unit",
      version: 1,
      tasks: [
        { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN_DYNAMIC", dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs", inputParameters: { tasks: "${workflow.input.tasks}", inputs: {}, named: "${workflow.env.named}" } },
        { name: "join", taskReferenceName: "join", type: "JOIN" },
      ],
    } as unknown as WorkflowDef;
    const forkOutcome = (tasks: JsonValue) => {
      const execution = createExecution({ workflowId: "wf-env-fork", definition, input: { tasks }, environment: { named: "yes" } }, 1_000);
      return decide(execution, { type: "start" }, env(1_000)).state.tasks.find((task) => task.referenceTaskName === "fork")!;
    };
    const setting = (value: string) => ({ name: "s", taskReferenceName: "s1", type: "SET_VARIABLE", inputParameters: { v: value } });
    expect(forkOutcome([setting("${workflow.env.named}")]).status).toBe("COMPLETED");
    const refused = forkOutcome([setting("${workflow.env.other}")]);
    expect(refused.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(refused.reasonForIncompletion).toContain("(${workflow.env.other})");
    // A child defined inline reads the variables its own definition names as it starts: not the fork's concern.
    const child = { name: "c", taskReferenceName: "c1", type: "SUB_WORKFLOW", subWorkflowParam: { name: "inline_child", workflowDefinition: { name: "inline_child", version: 1, tasks: [setting("${workflow.env.other}")] } } };
    expect(forkOutcome([child]).status).toBe("COMPLETED");
  });
});
