import { describe, expect, it } from "vitest";
import { WaitingTasks } from "../../src/actors/waiting-tasks";

describe("WaitingTasks", () => {
  it("counts the waiting tasks that send no HTTP request through puts, replacements, deletes and a clear, in the order put in", () => {
    const waiting = new WaitingTasks<{ requests: number }>();
    waiting.set("http", { requests: 1 });
    waiting.set("child", { requests: 0 });
    waiting.set("event", { requests: 0 });
    expect(waiting.withoutRequests).toBe(2);
    // Put again (dispatched anew): counted once, by its new cost, in its first place.
    waiting.set("event", { requests: 0 });
    waiting.set("child", { requests: 2 });
    expect(waiting.withoutRequests).toBe(1);
    expect([...waiting.keys()]).toEqual(["http", "child", "event"]);
    expect(waiting.delete("missing")).toBe(false);
    expect(waiting.delete("event")).toBe(true);
    expect(waiting.delete("event")).toBe(false);
    expect(waiting.withoutRequests).toBe(0);
    waiting.set("later", { requests: 0 });
    waiting.clear();
    expect(waiting.withoutRequests).toBe(0);
    expect(waiting.size).toBe(0);
  });
});
