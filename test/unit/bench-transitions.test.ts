// The engine benchmark's transitions row (bench/transitions.mjs) runs against the engine as it is: its decider
// environment has what the decider reads (a script runner's work is read by every decision, even one running none).
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script of the benchmark, checked by its own // @ts-check, without declarations.
import { measureTransitions } from "../../bench/transitions.mjs";

describe("the transitions benchmark", () => {
  it("runs its three-step workflows to the end through the engine", async () => {
    const result = (await measureTransitions(2)) as { transitions: number };
    // Four decisions each: the start and three HTTP results.
    expect(result.transitions).toBe(8);
  }, 60_000);
});
