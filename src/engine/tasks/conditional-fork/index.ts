/**
 * CONDITIONAL_FORK (Conductor OSS's): a FORK_JOIN whose branches are chosen as it starts. Each of its
 * `conditionalBranches` runs when its condition holds for the fork's input, or always when it has none; when none is
 * chosen its `defaultCase` runs, and when that is empty too it fails for good (Conductor terminates the workflow). The
 * decider runs the chosen branches as lanes, side by side, as a FORK_JOIN's (see `lanesRun`), and the JOIN after it
 * waits for their last tasks (see `chosenBranchEnds`).
 */
import type { BranchCondition, JsonObject } from "../../model";
import { evaluateWith, type ScriptRunner } from "../../scripts";
import { failedAtStart, type TaskTypeModule } from "../task-type";

/** Why a CONDITIONAL_FORK that chose nothing fails: Conductor's words. */
export const NOTHING_CHOSEN = "CONDITIONAL_FORK has no branches selected and no defaultCase defined";

/**
 * True when `condition` holds for `input`, as Conductor's ConditionalForkTaskMapper reads the evaluator's result: true,
 * or a text that is "true" whatever its case. A condition that cannot be evaluated does not hold (Conductor skips its
 * branch), so a branch whose script throws is left out, not the workflow failed.
 */
function holds(condition: BranchCondition, input: JsonObject, scripts: ScriptRunner): boolean {
  const outcome = evaluateWith(condition.evaluatorType, condition.expression, input, scripts);
  if (!outcome.ok) return false;
  return outcome.value === true || (typeof outcome.value === "string" && outcome.value.toLowerCase() === "true");
}

/** CONDITIONAL_FORK: completes at once, empty output, recording the branches it chose (see `forkedBranches`). */
export const conditionalForkTask: TaskTypeModule = {
  type: "CONDITIONAL_FORK",
  start(task, definition, _execution, env) {
    const branches = definition.conditionalBranches ?? [];
    const chosen = branches.flatMap((branch, position) => (branch.tasks.length > 0 && (branch.condition === undefined || holds(branch.condition, task.inputData, env.scripts)) ? [position] : []));
    if (chosen.length === 0 && (definition.defaultCase ?? []).length > 0) chosen.push(branches.length);
    if (chosen.length === 0) return { task: failedAtStart(task, NOTHING_CHOSEN, env.now), dispatch: false };
    return { task: { ...task, status: "COMPLETED", outputData: {}, forkedBranches: chosen, startTime: env.now, endTime: env.now, updateTime: env.now }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
