/**
 * Conductor's search-v2 (`GET /api/workflow/search-v2`, `GET /api/tasks/search-v2`): the same search as its v1, whose
 * results are summaries from the index, answered with the whole objects instead, each read from its execution.
 */
import type { IRequest } from "itty-router";
import type { JsonObject } from "../engine/model";
import { validationError } from "./http/errors";
import { queryValue } from "./http/params";

/** Most results one page of search-v2 carries: each is a read of its execution. */
export const MAX_SEARCH_V2_SIZE = 100;

/** A search answering summaries (v1), and the whole object of one summary as JSON text (null when it is gone). */
export interface SearchV2 {
  search: (request: IRequest) => Promise<{ totalHits: number; results: JsonObject[] }>;
  read: (summary: JsonObject) => Promise<string | null>;
}

/**
 * The JSON text of `{totalHits, results}` with each summary of the page replaced by its whole object (those removed
 * since the index listed them are left out; `totalHits` is the index's). A `size` over {@link MAX_SEARCH_V2_SIZE} is a
 * 400.
 */
export async function searchV2(request: IRequest, { search, read }: SearchV2): Promise<string> {
  const size = queryValue(request, "size");
  if (size !== undefined && Number(size) > MAX_SEARCH_V2_SIZE) {
    throw validationError("Invalid query parameter size", [{ path: "size", message: `must be at most ${MAX_SEARCH_V2_SIZE} in search-v2, whose results are read whole from their executions (v1 pages up to 1000 summaries)` }]);
  }
  const { totalHits, results } = await search(request);
  const whole = (await Promise.all(results.map(read))).filter((json): json is string => json !== null);
  return `{"totalHits":${totalHits},"results":[${whole.join(",")}]}`;
}
