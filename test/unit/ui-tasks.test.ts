// The web UI's Tasks page: how its filters become a task search query (plain ES modules of ui/, run in Node: only
// pure helpers).
import { describe, expect, it } from "vitest";
import { applyQuery, type Filter } from "../../src/worker/search";

interface TasksModule {
  TASK_STATUSES: string[];
  taskQuery(filters: { status?: string; taskType?: string; workflowType?: string }): string;
}

// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const { TASK_STATUSES, taskQuery } = (await import(/* @vite-ignore */ new URL("../../ui/views/tasks.js", import.meta.url).href)) as TasksModule;

describe("the UI's Tasks page", () => {
  it("joins the filters that are set with AND, each value quoted, and asks nothing for none", () => {
    expect(taskQuery({})).toBe("");
    expect(taskQuery({ status: "FAILED" })).toBe("status = 'FAILED'");
    expect(taskQuery({ status: "FAILED", taskType: "send email", workflowType: "orders" })).toBe("status = 'FAILED' AND taskType = 'send email' AND workflowType = 'orders'");
    expect(taskQuery({ status: "", taskType: "HTTP" })).toBe("taskType = 'HTTP'");
  });

  it("quotes a name holding quotes or backslashes so that the service reads it back as typed", () => {
    for (const name of ["O'Brien flow", "it's 'quoted'", "back\\slash", "end\\", "a = 'b' AND c"]) {
      const query = taskQuery({ status: "FAILED", workflowType: name });
      // The service's own reading of a query (the workflow search's fields hold status and workflowType too).
      const filter: Filter = { clauses: [], bindings: [] };
      applyQuery(filter, query);
      expect(filter.bindings, query).toContain(name);
      expect(filter.clauses, query).toHaveLength(2);
    }
  });

  it("offers the task statuses the service knows", async () => {
    const { TASK_STATUSES: serviceStatuses } = await import("../../src/engine/model");
    expect(TASK_STATUSES).toEqual([...serviceStatuses]);
  });
});
