// The web UI's Webhooks page: how it words the workflows a webhook names (a plain ES module of ui/, run in Node).
import { describe, expect, it } from "vitest";

interface WebhooksModule {
  workflowsText(versions: Record<string, unknown> | undefined, none: string): string;
}

// By URL: the module is plain JavaScript without type declarations, so TypeScript must not resolve it.
const { workflowsText } = (await import(/* @vite-ignore */ new URL("../../ui/views/webhooks.js", import.meta.url).href)) as WebhooksModule;

describe("the UI's Webhooks page", () => {
  it("names each workflow with its version (none for any or the latest), leaving out the start settings", () => {
    expect(workflowsText({ orders: 2, payments: 0 }, "none")).toBe("orders v2, payments");
    expect(workflowsText({ billing: 1, idempotencyKey: "$.id", idempotencyStrategy: "FAIL" }, "none")).toBe("billing v1");
    expect(workflowsText({ idempotencyKey: "$.id" }, "none")).toBe("none");
    expect(workflowsText(undefined, "nothing")).toBe("nothing");
  });
});
