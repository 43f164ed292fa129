/**
 * Parts 2 and 3 of the walk of every route (route-walk.ts), in a file of their own so that they run in a workerd of
 * their own, beside the other parts' (cloudflare/workers-sdk#15446: each `SELF.fetch` is slower the more requests
 * its workerd has served). The route table's own check and the other methods' walks are in route-coverage.test.ts.
 */
import { describe, it } from "vitest";
import { WALK_TITLE, walkPart } from "./route-walk";

describe("every registered route", () => {
  it.each([2, 3])(WALK_TITLE, walkPart, 120_000);
});
