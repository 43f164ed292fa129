// The web UI's Task definitions page: how it words a definition's limits and a worker's last poll (plain ES modules
// of ui/, run in Node: only pure helpers).
import { describe, expect, it } from "vitest";

interface TaskDefsModule {
  limitsText(taskDef: { concurrentExecLimit?: number; rateLimitPerFrequency?: number; rateLimitFrequencyInSeconds?: number }): string;
  pollAgeText(lastPollTime: number, now: number): string;
}

interface DomModule {
  matchesFilter(name: string, tags: Array<{ key: string; value: string }> | undefined, needle: string): boolean;
}

// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const { limitsText, pollAgeText } = (await import(/* @vite-ignore */ new URL("../../ui/views/task-defs.js", import.meta.url).href)) as TaskDefsModule;
const { matchesFilter } = (await import(/* @vite-ignore */ new URL("../../ui/lib/dom.js", import.meta.url).href)) as DomModule;

describe("the UI's Task definitions page", () => {
  it("words the limits on handing tasks out; 0 or none is no limit, nor is a window of 0; the window is a second by default", () => {
    expect(limitsText({})).toBe("none");
    expect(limitsText({ concurrentExecLimit: 0, rateLimitPerFrequency: 0 })).toBe("none");
    expect(limitsText({ concurrentExecLimit: 2 })).toBe("2 at once");
    expect(limitsText({ rateLimitPerFrequency: 10 })).toBe("10 per 1 s");
    // A window of 0 is no rate limit (as Conductor applies none then).
    expect(limitsText({ rateLimitPerFrequency: 10, rateLimitFrequencyInSeconds: 0 })).toBe("none");
    expect(limitsText({ concurrentExecLimit: 2, rateLimitPerFrequency: 10, rateLimitFrequencyInSeconds: 0 })).toBe("2 at once");
    expect(limitsText({ concurrentExecLimit: 2, rateLimitPerFrequency: 10, rateLimitFrequencyInSeconds: 60 })).toBe("2 at once, 10 per 60 s");
  });

  it("says how long ago a worker polled, in the unit that reads best", () => {
    const now = Date.UTC(2027, 0, 1);
    expect(pollAgeText(now, now)).toBe("just now");
    // A clock a little ahead of the browser's is not the future.
    expect(pollAgeText(now + 1500, now)).toBe("just now");
    expect(pollAgeText(now - 45_000, now)).toBe("45 s ago");
    expect(pollAgeText(now - 5 * 60_000, now)).toBe("5 min ago");
    expect(pollAgeText(now - 3 * 3_600_000, now)).toBe("3 h ago");
    expect(pollAgeText(now - 3 * 86_400_000, now)).toBe("3 days ago");
  });

  it("the list filters find a definition by a part of its name or of one of its tags, key=value, in any case", () => {
    const tags = [{ key: "team", value: "Billing" }];
    expect(matchesFilter("encode_video", tags, "video")).toBe(true);
    expect(matchesFilter("encode_video", tags, "team=bill")).toBe(true);
    expect(matchesFilter("encode_video", tags, "=billing")).toBe(true);
    expect(matchesFilter("encode_video", tags, "ops")).toBe(false);
    expect(matchesFilter("encode_video", undefined, "team")).toBe(false);
  });
});
