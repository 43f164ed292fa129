// The web UI's bulk actions on the executions list: what their confirmation says of the executions chosen (a plain
// ES module of ui/, run in Node: only its pure helper).
import { describe, expect, it } from "vitest";

interface Selectable {
  workflowId: string;
  status?: string;
  parentWorkflowId?: string | null;
}
interface SelectionModule {
  bulkConfirmation(operation: string, chosen: Selectable[]): { question: string; warnings: string[] };
}

// By URL: the module is plain JavaScript without type declarations, so TypeScript must not resolve it.
const { bulkConfirmation } = (await import(/* @vite-ignore */ new URL("../../ui/views/execution-selection.js", import.meta.url).href)) as SelectionModule;

describe("the UI's bulk actions on executions", () => {
  it("says a removal terminates the chosen executions still running or paused first, as the service does, and never that it refuses them", () => {
    const chosen = [{ workflowId: "a", status: "RUNNING" }, { workflowId: "b", status: "PAUSED" }, { workflowId: "c", status: "COMPLETED" }];
    const { question, warnings } = bulkConfirmation("delete", chosen);
    expect(question).toBe("Delete the 3 selected executions for good, with their history?");
    expect(warnings).toEqual(["2 of them are still running or paused: each is terminated first (its running tasks canceled, its child workflows terminated), then deleted."]);
    expect(bulkConfirmation("delete", [{ workflowId: "a", status: "RUNNING" }]).warnings[0]).toMatch(/^1 of them is still running or paused/);
    expect(bulkConfirmation("delete", [{ workflowId: "c", status: "FAILED" }]).warnings).toEqual([]);
  });

  it("warns that running sub workflows again may reopen their parents, for retry and restart only", () => {
    const chosen = [{ workflowId: "a", status: "FAILED", parentWorkflowId: "p" }, { workflowId: "b", status: "FAILED", parentWorkflowId: null }];
    expect(bulkConfirmation("retry", chosen).warnings).toEqual(["1 of them is a sub workflow: running one again may also reopen its parent workflow and that one's parents, up the tree."]);
    expect(bulkConfirmation("restart", chosen).warnings).toHaveLength(1);
    expect(bulkConfirmation("pause", chosen)).toEqual({ question: "Pause the 2 selected executions?", warnings: [] });
  });
});
