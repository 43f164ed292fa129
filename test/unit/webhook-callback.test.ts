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

  it("passes over a reason of whitespace only, as an empty one (Conductor's StringUtils.isBlank, as for a TERMINATE reason); a given one is kept as sent", () => {
    expect(reasonOf({ error: "CARD_DECLINED", reason: "  \n\t" })).toBe("CARD_DECLINED");
    expect(reasonOf({ error: " ", reason: " " })).toBe("The callback reported a failure");
    expect(reasonOf({ error: "CARD_DECLINED", reason: " insufficient funds " })).toBe(" insufficient funds ");
    // A reason or error that is not text is still refused, blank or not.
    for (const output of [{ reason: 0, error: "CARD_DECLINED" }, { reason: "x", error: [" "] }]) {
      const parsed = parseWebhookCallback(JSON.stringify({ status: "FAILED", output }));
      expect(parsed.ok).toBe(false);
    }
  });
});
