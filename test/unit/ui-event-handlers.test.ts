// The web UI's Event handlers page: how it words what a handler does (a plain ES module of ui/, run in Node).
import { describe, expect, it } from "vitest";

interface EventHandlersModule {
  actionsText(handler: { actions: Array<{ action: string } & Record<string, unknown>> }): string;
}

// By URL: the module is plain JavaScript without type declarations, so TypeScript must not resolve it.
const { actionsText } = (await import(/* @vite-ignore */ new URL("../../ui/views/event-handlers.js", import.meta.url).href)) as EventHandlersModule;

describe("the UI's Event handlers page", () => {
  it("words each action with what it acts on: the workflow it starts, the task it completes, the workflow it ends", () => {
    expect(
      actionsText({
        actions: [
          { action: "start_workflow", start_workflow: { name: "billing" } },
          { action: "complete_task", complete_task: { workflowId: "${id}", taskRefName: "approval" } },
          { action: "terminate_workflow", terminate_workflow: { workflowId: "${id}" } },
          { action: "fail_task" },
        ],
      }),
    ).toBe("start_workflow billing, complete_task approval, terminate_workflow ${id}, fail_task");
  });
});
