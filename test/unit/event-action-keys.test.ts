import { describe, expect, it } from "vitest";
import { actionKeys } from "../../src/actors/dispatch/event";
import type { EventHandler } from "../../src/worker/event-handlers";

const handlerWith = (actions: unknown[]): EventHandler => ({ name: "h", event: "conductor:w:e", active: true, actions } as unknown as EventHandler);
const start = (input: unknown, extra: Record<string, unknown> = {}) => ({ action: "start_workflow", start_workflow: { name: "w", input }, expandInlineJSON: false, ...extra });

describe("event handler actions' keys (actionKeys)", () => {
  it("are the same for the same action written with its keys in another order, at any depth, and differ where an array's order or a value differs", async () => {
    const [written] = await actionKeys(handlerWith([{ action: "start_workflow", start_workflow: { name: "w", input: { a: 1, b: { x: "é", y: [1, 2] } } }, expandInlineJSON: false }]), true);
    const [reordered] = await actionKeys(handlerWith([{ expandInlineJSON: false, start_workflow: { input: { b: { y: [1, 2], x: "é" }, a: 1 }, name: "w" }, action: "start_workflow" }]), true);
    expect(reordered).toBe(written);
    const [arrayReversed] = await actionKeys(handlerWith([start({ a: 1, b: { x: "é", y: [2, 1] } })]), true);
    const [valueChanged] = await actionKeys(handlerWith([start({ a: 2, b: { x: "é", y: [1, 2] } })]), true);
    const [numberAsText] = await actionKeys(handlerWith([start({ a: "1", b: { x: "é", y: [1, 2] } })]), true);
    expect(new Set([written, arrayReversed, valueChanged, numberAsText]).size).toBe(4);
    expect(written).toMatch(/^[0-9a-f]{32}:0$/);
  });

  it("number equal actions by their occurrence, so one put before two equal ones leaves the first two keys as they were and gives the third a key of its own", async () => {
    const a = start({ n: "a" });
    const b = start({ n: "b" });
    const before = await actionKeys(handlerWith([a, b, a]), true);
    const after = await actionKeys(handlerWith([a, a, b, a]), true);
    expect(before[0]).toMatch(/:0$/);
    expect(before[2]).toBe(before[0]!.replace(/:0$/, ":1"));
    expect(after.slice(0, 2)).toEqual([before[0], before[2]]);
    expect(after[2]).toBe(before[1]);
    expect(after[3]).toBe(before[0]!.replace(/:0$/, ":2"));
  });

  it("are places for a publication owed before actions were keyed by content", async () => {
    expect(await actionKeys(handlerWith([start(1), start(1), start(2)]), false)).toEqual(["0", "1", "2"]);
  });
});
