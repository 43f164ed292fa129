import { describe, expect, it } from "vitest";
import { parseWebhookCallback, type WebhookCallbackParse } from "../../src/engine/tasks/wait-for-webhook/callback";

/** The reason a FAILED callback with `output` gives its task. */
function reasonOf(output: Record<string, unknown>): string | undefined {
  const parsed: WebhookCallbackParse = parseWebhookCallback(JSON.stringify({ status: "FAILED", output }));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.callback.reason;
}

describe("parseWebhookCallback: a FAILED callback's reason", () => {
  it("is output.reason, else output.error, else the default", () => {
    expect(reasonOf({ error: "CARD_DECLINED", reason: "insufficient funds" })).toBe("insufficient funds");
    expect(reasonOf({ error: "CARD_DECLINED" })).toBe("CARD_DECLINED");
    expect(reasonOf({})).toBe("The callback reported a failure");
  });

  it("is output.error when output.reason is empty, as when it is absent: an empty reason says nothing", async () => {
    expect(reasonOf({ error: "CARD_DECLINED", reason: "" })).toBe("CARD_DECLINED");
    expect(reasonOf({ error: "", reason: "" })).toBe("The callback reported a failure");
    expect(reasonOf({ error: "", reason: "insufficient funds" })).toBe("insufficient funds");
  });
});
