import { describe, expect, it } from "vitest";
import { createExecution } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { validateWorkflowDef } from "../../src/engine/definition/validate";
import type { WorkflowDef, WorkflowExecution } from "../../src/engine/model";
import { MAX_RETENTION_SECONDS, removalDueAt } from "../../src/engine/retention";
import { serviceConfig } from "../../src/worker/config";
import { attemptEnds, env, httpGet } from "./engine-env";

const DAY_MS = 24 * 60 * 60 * 1000;

function definition(extra: Partial<WorkflowDef> = {}): WorkflowDef {
  return { name: "kept", version: 1, schemaVersion: 2, tasks: [httpGet("only")], ...extra };
}

function started(def: WorkflowDef): WorkflowExecution {
  return decide(createExecution({ workflowId: "wf-1", definition: def, input: {} }, 1_000), { type: "start" }, env(1_000)).state;
}

describe("removalDueAt", () => {
  it("counts from the end of the latest run, by the definition's retentionSeconds, else the service's default", () => {
    const running = started(definition({ retentionSeconds: 60 }));
    expect(removalDueAt(running, DAY_MS)).toBeUndefined();
    const ended = attemptEnds(running, "only", 5_000).state;
    expect(ended.status).toBe("COMPLETED");
    expect(removalDueAt(ended, DAY_MS)).toBe(ended.endTime + 60_000);

    const byDefault = attemptEnds(started(definition()), "only", 5_000).state;
    expect(removalDueAt(byDefault, DAY_MS)).toBe(byDefault.endTime + DAY_MS);
    expect(removalDueAt(byDefault, undefined)).toBeUndefined();

    // 0 keeps this workflow's executions whatever the service's default.
    const keptForGood = attemptEnds(started(definition({ retentionSeconds: 0 })), "only", 5_000).state;
    expect(removalDueAt(keptForGood, DAY_MS)).toBeUndefined();
  });

  it("is never due for an execution that is not finished: failed and retried, it counts again from its new end", () => {
    const failed = attemptEnds(started(definition({ retentionSeconds: 60 })), "only", 5_000, "FAILED").state;
    expect(failed.status).toBe("FAILED");
    expect(removalDueAt(failed, undefined)).toBe(failed.endTime + 60_000);
    const retried = decide(failed, { type: "retry" }, env(100_000)).state;
    expect(retried.status).toBe("RUNNING");
    expect(removalDueAt(retried, undefined)).toBeUndefined();
    const endedAgain = attemptEnds(retried, "only", 200_000).state;
    expect(endedAgain.status).toBe("COMPLETED");
    expect(removalDueAt(endedAgain, undefined)).toBe(endedAgain.endTime + 60_000);
    expect(endedAgain.endTime).toBeGreaterThanOrEqual(200_000);
  });
});

describe("retentionSeconds in a definition", () => {
  it("is kept when it is a whole number of seconds from 0 up to a hundred years", () => {
    for (const seconds of [0, 1, 30 * 24 * 3600, MAX_RETENTION_SECONDS]) {
      const result = validateWorkflowDef({ ...definition(), retentionSeconds: seconds });
      expect(result.ok && result.value.retentionSeconds).toBe(seconds);
    }
    const absent = validateWorkflowDef(definition());
    expect(absent.ok && "retentionSeconds" in absent.value).toBe(false);
  });

  it("is refused at its path when negative, fractional, too long or not a number", () => {
    for (const bad of [-1, 1.5, MAX_RETENTION_SECONDS + 1, "30d", true]) {
      const result = validateWorkflowDef({ ...definition(), retentionSeconds: bad });
      expect(result.ok ? [] : result.errors.map((issue) => issue.path), JSON.stringify(bad)).toEqual(["retentionSeconds"]);
      expect(result.ok ? "" : result.errors[0]!.message).toMatch(/retentionSeconds must be a whole number of seconds from 0/);
    }
  });
});

describe("EXECUTION_RETENTION", () => {
  const retentionOf = (value: string | undefined) => serviceConfig({ EXECUTION_RETENTION: value } as unknown as Env).executionRetentionMs;

  it("reads a duration as a WAIT task does", () => {
    expect(retentionOf("30d")).toBe(30 * DAY_MS);
    expect(retentionOf("1d 12h")).toBe(1.5 * DAY_MS);
    expect(retentionOf("90 seconds")).toBe(90_000);
    expect(retentionOf("36500d")).toBe(MAX_RETENTION_SECONDS * 1000);
    expect(retentionOf(undefined)).toBeUndefined();
    expect(retentionOf(" ")).toBeUndefined();
  });

  it("keeps executions, and says so in the log, when it is not a duration longer than nothing and at most a hundred years", () => {
    const logged: string[] = [];
    const original = console.error;
    console.error = (line: string) => void logged.push(line);
    try {
      expect(retentionOf("30 days please")).toBeUndefined();
      expect(retentionOf("0s")).toBeUndefined();
      // Longer than a definition's retentionSeconds may be: its alarm would fall after 2189, which setAlarm refuses.
      expect(retentionOf("36501d")).toBeUndefined();
      expect(retentionOf("99999999d")).toBeUndefined();
    } finally {
      console.error = original;
    }
    expect(logged).toHaveLength(4);
    expect(JSON.parse(logged[0]!)).toMatchObject({ msg: "EXECUTION_RETENTION ignored: executions are kept until removed", received: "30 days please" });
  });
});
