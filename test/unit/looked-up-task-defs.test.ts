import { describe, expect, it } from "vitest";
import type { DecideEnv } from "../../src/engine/config";
import { awaitedTaskDefNames, createExecution, nextDeadline, type Decision, type ExecutionEvent } from "../../src/engine/decider";
import { decide } from "./frozen-decide";
import { registeredTaskDefNames, withRegisteredTaskDefs } from "../../src/engine/definition/task-def";
import { definitionBytesWith, rememberDefinitionBytes } from "../../src/engine/limits";
import type { JsonObject, TaskDef, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { withLookedUpTaskDefs } from "../../src/engine/plan";
import { toTaskView, toWorkflowView } from "../../src/engine/view";
import { env as baseEnv, latestNamed, taskDefNamed } from "./engine-env";

const taskDef = taskDefNamed;

/** The decider's environment at `now`, where the actor knows `known` (by name; anything else must be looked up). */
function env(now: number, known: Record<string, TaskDef | null> = {}): DecideEnv {
  return { ...baseEnv(now), taskDefs: (name) => (Object.hasOwn(known, name) ? known[name] : undefined) };
}

/** A fork of one worker task `resize` per entry of `workflow.input.items`, joined. */
const fanOut: WorkflowTaskDef[] = [
  { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskInputs: "${workflow.input.items}", forkTaskName: "resize" } },
  { name: "fan_join", taskReferenceName: "fan_join", type: "JOIN", inputParameters: {}, joinOn: [] },
];
/** A DYNAMIC running the task `workflow.input.task` names. */
const chooser: WorkflowTaskDef[] = [{ name: "chooser", taskReferenceName: "pick", type: "DYNAMIC", dynamicTaskNameParam: "task", inputParameters: { task: "${workflow.input.task}", size: 3 } }];

function start(tasks: WorkflowTaskDef[], input: JsonObject, known: Record<string, TaskDef | null> = {}): Decision {
  const definition = { name: "looked_up", version: 1, schemaVersion: 2, tasks };
  return decide(createExecution({ workflowId: "wf-1", definition, input }, 1_000), { type: "start" }, env(1_000, known));
}

const forked = (state: WorkflowExecution) => state.tasks.filter((task) => task.taskDefName === "resize");
const queuedIds = (decision: Decision) => decision.effects.flatMap((effect) => (effect.kind === "queueTask" ? [effect.entry.taskId] : []));
const loaded = (state: WorkflowExecution, taskDefs: Record<string, TaskDef | null>, now = 2_000): Decision => decide(state, { type: "taskDefsLoaded", taskDefs }, env(now));
const report = (state: WorkflowExecution, taskId: string, status: "COMPLETED" | "FAILED", now: number): Decision => {
  const polled = decide(state, { type: "taskPolled", taskId }, env(now));
  const event: ExecutionEvent = { type: "externalUpdate", taskId, status, output: {} };
  return decide(polled.state, event, env(now));
};

describe("registered task definitions of tasks known only as they run (a DYNAMIC's choice, a dynamic fork's tasks)", () => {
  it("a forked task whose definition the actor does not know waits for it, SCHEDULED with no input, neither queued nor timed", () => {
    const { state, effects } = start(fanOut, { items: [{ n: 1 }, { n: 2 }] });
    expect(forked(state)).toHaveLength(2);
    for (const task of forked(state)) expect(task).toMatchObject({ status: "SCHEDULED", awaitingTaskDef: true, inputData: {} });
    expect(effects.filter((effect) => effect.kind === "queueTask")).toEqual([]);
    expect(awaitedTaskDefNames(state)).toEqual(["resize"]);
    // Nothing for the alarm to do about them: the actor brings the definition.
    expect(nextDeadline(state)).toBeUndefined();
    // Not shown as a field of the task.
    expect(toTaskView(forked(state)[0]!, state)).not.toHaveProperty("awaitingTaskDef");
  });

  it("once looked up, the forked tasks follow it: input from its inputTemplate, queued with its limits, retried by its retryCount, shown in workflowTask", () => {
    const resize = taskDef("resize", { retryCount: 1, responseTimeoutSeconds: 120, concurrentExecLimit: 4, inputTemplate: { quality: 80 } });
    const waiting = start(fanOut, { items: [{ n: 1 }, { n: 2 }] }).state;
    const decision = loaded(waiting, { resize });
    const tasks = forked(decision.state);
    for (const task of tasks) expect(task).toMatchObject({ status: "SCHEDULED", pollable: true, inputData: { quality: 80 } });
    expect(tasks.map((task) => task.awaitingTaskDef)).toEqual([undefined, undefined]);
    expect(queuedIds(decision).sort()).toEqual(tasks.map((task) => task.taskId).sort());
    expect(decision.effects.flatMap((effect) => (effect.kind === "queueTask" ? [effect.entry.limits] : []))).toEqual([{ maxHeld: 4 }, { maxHeld: 4 }]);
    expect(awaitedTaskDefNames(decision.state)).toEqual([]);
    const view = toTaskView(tasks[0]!, decision.state);
    expect(view).toMatchObject({ responseTimeoutSeconds: 120, workflowTask: { name: "resize", taskDefinition: { name: "resize", retryCount: 1 } } });
    // The definition as shown is the registered one: no record of what was looked up.
    expect(toWorkflowView(decision.state, false)["workflowDefinition"]).not.toHaveProperty("lookedUpTaskDefs");
    // A failure is retried once, by the looked-up retryCount; the retry follows the same definition without a new look-up.
    const failed = report(decision.state, tasks[0]!.taskId, "FAILED", 3_000);
    const retries = forked(failed.state).filter((task) => task.retryCount === 1);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ status: "SCHEDULED", pollable: true, inputData: { quality: 80 } });
    const again = report(failed.state, retries[0]!.taskId, "FAILED", 4_000);
    expect(again.state.status).toBe("FAILED");
  });

  it("a name with no registered definition runs as before, without one; the actor's knowledge is recorded at once, with no wait", () => {
    const none = loaded(start(fanOut, { items: [{ n: 1 }] }).state, { resize: null });
    expect(forked(none.state)[0]).toMatchObject({ status: "SCHEDULED", pollable: true });
    const failed = report(none.state, forked(none.state)[0]!.taskId, "FAILED", 3_000);
    expect(failed.state.status).toBe("FAILED");
    const known = start(fanOut, { items: [{ n: 1 }] }, { resize: taskDef("resize", { retryCount: 2 }) });
    expect(forked(known.state)[0]).toMatchObject({ status: "SCHEDULED", pollable: true });
    expect(known.state.definition.lookedUpTaskDefs).toEqual({ resize: taskDef("resize", { retryCount: 2 }) });
    // Kept for the execution's life: a later change the actor knows of does not alter its tasks.
    const failedOnce = decide(
      decide(known.state, { type: "taskPolled", taskId: forked(known.state)[0]!.taskId }, env(3_000)).state,
      { type: "externalUpdate", taskId: forked(known.state)[0]!.taskId, status: "FAILED", output: {} },
      env(3_000, { resize: taskDef("resize", { retryCount: 0 }) }),
    );
    expect(failedOnce.state.status).toBe("RUNNING");
    expect(forked(failedOnce.state).map((task) => task.retryCount)).toEqual([0, 1]);
  });

  it("a DYNAMIC follows the definition registered under the name it chose, not under its own", () => {
    const definition = { name: "looked_up", version: 1, schemaVersion: 2, tasks: chooser };
    // At the start, the DYNAMIC's own name is not one whose definition is copied in.
    expect(registeredTaskDefNames(definition)).toEqual([]);
    expect(withRegisteredTaskDefs(definition, new Map([["chooser", taskDef("chooser", { retryCount: 5 })]]))).toBe(definition);
    const waiting = start(chooser, { task: "encode" });
    expect(latestNamed(waiting.state, "pick")).toMatchObject({ taskType: "SIMPLE", taskDefName: "encode", status: "SCHEDULED", awaitingTaskDef: true });
    const decision = loaded(waiting.state, { encode: taskDef("encode", { retryCount: 1, inputTemplate: { codec: "vp9" } }) });
    const task = latestNamed(decision.state, "pick");
    expect(task).toMatchObject({ status: "SCHEDULED", pollable: true, inputData: { task: "encode", size: 3, codec: "vp9" } });
    expect(toTaskView(task, decision.state)).toMatchObject({ workflowTask: { type: "DYNAMIC", name: "encode", taskDefinition: { name: "encode", retryCount: 1 } } });
    const failed = report(decision.state, task.taskId, "FAILED", 3_000);
    expect(latestNamed(failed.state, "pick")).toMatchObject({ retryCount: 1, status: "SCHEDULED", pollable: true, taskDefName: "encode" });
    // A DYNAMIC with a taskDefinition of its own follows that one, and waits for nothing.
    const own = start([{ ...chooser[0]!, taskDefinition: taskDef("chooser", { retryCount: 2 }) }], { task: "encode" });
    expect(latestNamed(own.state, "pick")).toMatchObject({ status: "SCHEDULED", pollable: true });
    expect(own.state.definition.lookedUpTaskDefs).toBeUndefined();
  });

  it("a paused execution records them but starts nothing until it resumes; an ended one ignores them", () => {
    const waiting = start(fanOut, { items: [{ n: 1 }] }).state;
    const paused = decide(waiting, { type: "pause" }, env(1_500)).state;
    const whilePaused = loaded(paused, { resize: taskDef("resize") });
    expect(forked(whilePaused.state)[0]).toMatchObject({ status: "SCHEDULED", inputData: { n: 1, __index: 0 } });
    expect(forked(whilePaused.state)[0]!.pollable).toBeUndefined();
    const resumed = decide(whilePaused.state, { type: "resume" }, env(2_500));
    expect(forked(resumed.state)[0]).toMatchObject({ status: "SCHEDULED", pollable: true });
    const ended = decide(waiting, { type: "terminate", reason: "stop" }, env(1_500)).state;
    expect(loaded(ended, { resize: taskDef("resize") }).state).toBe(ended);
  });
});

describe("the size of an execution's copy of its definition with a looked-up task definition added", () => {
  const bytesOf = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

  it("is exact whether the copy has looked up none, an empty set or some, and stays exact over a run of additions each measured from the last", () => {
    // A dynamic fork of many names adds them one at a time, each measured from the sum kept for the copy before: an
    // overcount each time (the field's name and braces counted again) grew with their number, failing a task that fit.
    const plain: WorkflowDef = { name: "sized", version: 1, schemaVersion: 2, tasks: fanOut };
    for (const start of [plain, { ...plain, lookedUpTaskDefs: {} }, { ...plain, lookedUpTaskDefs: { before: taskDef("before") } }]) {
      let definition: WorkflowDef = start;
      for (const [index, added] of [taskDef("résumé_0"), null, taskDef("quote\"_2")].entries()) {
        const name = added === null ? `none_${index}` : added.name;
        const bytes = definitionBytesWith(definition, name, added);
        definition = withLookedUpTaskDefs(definition, new Map([[name, added]]));
        expect(bytes).toBe(bytesOf(definition));
        rememberDefinitionBytes(definition, bytes);
      }
    }
  });
});
