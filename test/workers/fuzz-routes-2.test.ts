/**
 * Part 1 of the fuzzing of every route fuzz.test.ts does not fuzz by its schema (fuzz-routes.ts), in a file of its own
 * so that it runs in a workerd of its own (cloudflare/workers-sdk#15446).
 */
import { describe, it } from "vitest";
import { fuzzPart } from "./fuzz-routes";

describe("fuzzing every route through the router", () => {
  it("hostile bodies and queries never cause a server error, and a refused request changes nothing (part 1)", () => fuzzPart(1), 120_000);
});
