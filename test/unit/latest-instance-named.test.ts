import { describe, expect, it } from "vitest";
import { Draft } from "../../src/engine/draft";
import { latestInstanceNamed } from "../../src/engine/lanes";
import type { TaskExecution, WorkflowDef, WorkflowExecution, WorkflowTaskDef } from "../../src/engine/model";
import { definitionReferenceName, planOf } from "../../src/engine/plan";
import { startedWith } from "./engine-env";

const http = (ref: string): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "HTTP", inputParameters: { uri: `https://example.com/${ref}`, method: "GET" } });
const loop = (ref: string, loopOver: WorkflowTaskDef[]): WorkflowTaskDef => ({ name: ref, taskReferenceName: ref, type: "DO_WHILE", inputParameters: {}, loopOver, loopCondition: "true" });

/** A small seeded generator (mulberry32): each run of the property sees the same cases. */
function random(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4_294_967_296) * below);
  };
}

/** Whether `candidate` answers to `reference` in an expression of `state` (as evaluation.ts asks it). */
const answersTo = (state: WorkflowExecution, reference: string) => (candidate: TaskExecution): boolean =>
  candidate.referenceTaskName === reference || (candidate.iteration !== undefined && definitionReferenceName(state.definition, candidate) === reference);

/** What `${ref…}` resolution read before the index: the first match searching back from the newest task. */
const scanned = (state: WorkflowExecution, reference: string): TaskExecution | undefined => state.tasks.findLast(answersTo(state, reference));

const indexed = (state: WorkflowExecution, reference: string): TaskExecution | undefined => latestInstanceNamed(state, reference, answersTo(state, reference));

describe("latestInstanceNamed", () => {
  it("finds what the backward scan found, however the drafts change the list between and within decisions", () => {
    const base = startedWith("named", [http("pre"), loop("loop", [http("a"), loop("inner", [http("b")])]), http("post")]).state;
    const steps = planOf(base.definition).steps.length;
    const names = ["pre", "loop", "a", "inner", "b", "post", "a__1", "a__2", "b__1__1", "b__2__1", "loop__1", "other", "dyn_1"];
    let checks = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const next = random(seed);
      let seq = 0;
      let id = 0;
      const made = (): TaskExecution => {
        const index = next(steps);
        const step = definitionReferenceName(base.definition, { definitionIndex: index, referenceTaskName: "?" });
        const referenceTaskName = next(4) === 0 ? names[next(names.length)]! : next(2) === 0 ? step : `${step}__${1 + next(3)}`;
        return { ...base.tasks[0]!, taskId: `t${seed}-${id++}`, definitionIndex: index, referenceTaskName, seq: ++seq, iteration: next(2) === 0 ? undefined : 1 + next(3) };
      };
      let state: WorkflowExecution = { ...base, tasks: Array.from({ length: 20 + next(60) }, made) };
      /** Executions asked about earlier, asked again later: a decision thrown away leaves its execution as it was. */
      const earlier: WorkflowExecution[] = [];
      const check = (of: WorkflowExecution) => {
        for (const name of names) {
          expect(indexed(of, name), `seed ${seed}, ${name}`).toBe(scanned(of, name));
          checks++;
        }
      };
      for (let decision = 0; decision < 12; decision++) {
        const draft = new Draft(state);
        for (let move = 0; move < 1 + next(8); move++) {
          const tasks = draft.state.tasks;
          const target = tasks[next(tasks.length)];
          const kind = next(9);
          if (kind <= 2 || target === undefined) draft.addTask(made());
          else if (kind === 3) draft.updateTask(target.taskId, { status: "COMPLETED" });
          else if (kind === 4) draft.updateTask(target.taskId, { referenceTaskName: made().referenceTaskName });
          else if (kind === 5) draft.updateTask(target.taskId, { iteration: next(2) === 0 ? undefined : 2 });
          else if (kind === 6) draft.updateTask(target.taskId, { definitionIndex: next(steps) });
          else if (kind === 7) draft.insertTask(made(), target.taskId);
          else if (next(4) === 0) draft.retainTasks(() => next(10) !== 0);
          else draft.updateTask(target.taskId, { seq: target.seq });
          if (next(2) === 0) check(draft.state);
        }
        check(draft.state);
        for (const before of earlier.slice(-3)) check(before);
        // Most decisions are kept; some are thrown away (a refused command, a trial), their execution asked about again.
        earlier.push(state);
        if (next(4) !== 0) state = draft.state;
        // An upgrade, or a definition read again: the same tasks under another definition object.
        if (next(10) === 0) state = { ...state, definition: structuredClone(state.definition) as WorkflowDef };
        check(state);
      }
    }
    expect(checks).toBeGreaterThan(10_000);
  });
});
