// The web UI's router reading the page's address (ui/lib/hash.js, a plain ES module run in Node): the names and
// filters the views write into it come back to the views as they were written.
import { describe, expect, it } from "vitest";
import { COUNTED_HITS as SERVER_COUNTED_HITS } from "../../src/worker/search";

interface HashModule {
  readHash(hash: string): { raw: string; path: string; params: URLSearchParams };
  decodePart(part: string): string;
  createHash(section: string): string;
  formerCreateHash(path: string): string | undefined;
}
interface SearchPageModule {
  searchHash(route: string, filters: Array<[string, string]>, pageStart: number, trailing?: Array<[string, string]>): string;
  pagerText(start: number, shown: number, total: number, countedUpTo?: number): string;
  COUNTED_HITS: number;
}

// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const { readHash, decodePart, createHash, formerCreateHash } = (await import(/* @vite-ignore */ new URL("../../ui/lib/hash.js", import.meta.url).href)) as HashModule;
const { searchHash, pagerText, COUNTED_HITS } = (await import(/* @vite-ignore */ new URL("../../ui/lib/search-page.js", import.meta.url).href)) as SearchPageModule;

/** Two of the router's routes (ui/app.js), matched as it matches them: against the path, each part decoded. */
const DEFINITION = /^definitions\/([^/]+)\/(\d+)$/;
const TASK_DEF = /^taskdefs\/(.+)$/;
function routed(pattern: RegExp, hash: string): string[] | null {
  const match = pattern.exec(readHash(hash).path);
  return match === null ? null : match.slice(1).map(decodePart);
}

// Workflow and task definition names may hold any character but ':' (src/engine/definition/validate.ts, task-def.ts).
const NAMES = ["orders", "R&D", "50% off", "a/b", "C++ build", "why?", "#1 flow", "naïve"];

describe("the UI's router", () => {
  it("hands a definition's page its name whole, however the name is spelt", () => {
    for (const name of NAMES) {
      expect(routed(DEFINITION, `#/definitions/${encodeURIComponent(name)}/2`)).toEqual([name, "2"]);
      expect(routed(TASK_DEF, `#/taskdefs/${encodeURIComponent(name)}`)).toEqual([name]);
    }
  });

  it("hands the executions list the workflow name its filter was given, and the other filters beside it", () => {
    for (const name of NAMES) {
      const { path, params } = readHash(searchHash("#/executions", [["status", "FAILED"], ["workflowName", name]], 25, [["live", "off"]]));
      expect(path).toBe("executions");
      expect(Object.fromEntries(params)).toEqual({ status: "FAILED", workflowName: name, start: "25", live: "off" });
      // As the definition page's Executions link and the Metrics page write it.
      expect(readHash(`#/executions?workflowName=${encodeURIComponent(name)}`).params.get("workflowName")).toBe(name);
    }
  });

  it("keeps the address as written to come back to after a login, and takes a % typed by hand as it is", () => {
    expect(readHash("#/definitions/R%26D/2?x=1").raw).toBe("definitions/R%26D/2?x=1");
    expect(readHash("").path).toBe("");
    expect(routed(TASK_DEF, "#/taskdefs/100%")).toEqual(["100%"]);
  });

  it("addresses a create page so that no name's address is one, and takes an address of the former form to it only in its sections", () => {
    for (const name of [...NAMES, "new", "+new", " new"]) expect(readHash(`#/taskdefs/${encodeURIComponent(name)}`).path).not.toBe(readHash(createHash("taskdefs")).path);
    expect(createHash("access/roles")).toBe("#/access/roles/+new");
    expect(formerCreateHash("access/roles/new")).toBe("#/access/roles/+new");
    expect(formerCreateHash("definitions/new")).toBe("#/definitions/+new");
    // Not a user's or a group's (they have no create page), nor a name ending in `new`, nor a version of one named so.
    for (const path of ["access/users/new", "access/groups/new", "taskdefs/renew", "taskdefs/x/new", "definitions/new/1", "new"]) expect(formerCreateHash(path)).toBeUndefined();
  });
});

describe("the UI's pager", () => {
  it("says a total the search stopped counting at is a lower bound (10,000+) while hits follow the page, and the exact count elsewhere", () => {
    expect(COUNTED_HITS).toBe(SERVER_COUNTED_HITS);
    expect(pagerText(0, 50, 120, COUNTED_HITS)).toBe("1–50 of 120");
    expect(pagerText(100, 20, 120, COUNTED_HITS)).toBe("101–120 of 120");
    // The workflow search's count of 10,080 hits: 10,000 on the first page, the page's end plus one near it.
    expect(pagerText(0, 50, 10_000, COUNTED_HITS)).toBe("1–50 of 10,000+");
    expect(pagerText(9_950, 50, 10_001, COUNTED_HITS)).toBe("9,951–10,000 of 10,001+");
    // The last page's count is exact.
    expect(pagerText(10_050, 30, 10_080, COUNTED_HITS)).toBe("10,051–10,080 of 10,080");
    // A list counted whole (a pager given no bound) is never a lower bound.
    expect(pagerText(0, 50, 12_000)).toBe("1–50 of 12,000");
    expect(pagerText(0, 1, 1)).toBe("1–1 of 1");
  });
});
