// The lanes' walk over an execution's task list (lanes.ts), kept per list and taken on by the copy a decision's draft
// makes of it: what it finds must be what a walk afresh over the same tasks finds, whatever decisions were taken on the
// same execution before and thrown away (a refused command, the actor's trial decision before a child's resume, a test
// run's mock applied again after a refusal).
import { describe, expect, it } from "vitest";
import { decide } from "./frozen-decide";
import { Draft } from "../../src/engine/draft";
import { latestInstance } from "../../src/engine/lanes";
import type { TaskExecution, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { planIndexOf } from "../../src/engine/plan";
import { env, latestNamed, startedWith } from "./engine-env";

/** A WAIT with neither duration nor until: it waits to be completed from outside. */
const hold = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "WAIT", inputParameters: {} });

/** An execution of a DO_WHILE over WAIT `x` that ran `iterations` times (two tasks, the loop and `x__1`, and one per iteration after). */
function loopedExecution(iterations: number): WorkflowExecution {
  const loop: WorkflowTaskDef = { name: "loop", taskReferenceName: "loop", type: "DO_WHILE", inputParameters: {}, loopOver: [hold("x")], loopCondition: "$.loop['iteration'] < 1000" };
  let state = startedWith("walked", [loop, hold("after")]).state;
  for (let iteration = 1; iteration < iterations; iteration++) {
    state = decide(state, { type: "externalUpdate", taskId: latestNamed(state, `x__${iteration}`).taskId, status: "COMPLETED", output: {} }, env(2_000 + iteration)).state;
  }
  return state;
}

/** A new instance of plan step `index` of `state`, as the next one scheduled. */
function instanceOf(state: WorkflowExecution, index: number, taskId: string): TaskExecution {
  const last = state.tasks.at(-1)!;
  return { ...last, taskId, definitionIndex: index, seq: last.seq + 1, status: "SCHEDULED", referenceTaskName: taskId };
}

describe("the lanes' walk over a task list", () => {
  it("is not taken on by a second copy of a list once a first copy, a decision thrown away, walked past its end", () => {
    // Long enough for the draft to record its copy and latestInstance to walk (see copiedFrom, SHORT_TASK_LIST).
    const state = loopedExecution(40);
    expect(state.tasks.length).toBeGreaterThan(32);
    const x = planIndexOf(state.definition, "x");
    const after = planIndexOf(state.definition, "after");
    const lastX = latestInstance(state, x);
    expect(lastX?.referenceTaskName).toBe("x__40");
    // A decision on the execution adds an `x`, looks it up, and is thrown away.
    const thrownAway = new Draft(state);
    thrownAway.addTask(instanceOf(state, x, "x-thrown-away"));
    expect(latestInstance(thrownAway.state, x)?.taskId).toBe("x-thrown-away");
    // The next decision on the same execution adds an `after` where that one added its `x`.
    const kept = new Draft(state);
    kept.addTask(instanceOf(state, after, "after-kept"));
    expect(latestInstance(kept.state, after)?.taskId).toBe("after-kept");
    expect(latestInstance(kept.state, x)).toBe(lastX);
  });
});
