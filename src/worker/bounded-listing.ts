import type { NameFilter } from "./auth/permissions";
import { ApiError } from "./http/errors";
import { anyNameTerm, nameTerms } from "./search";

/**
 * Most characters of stored JSON one unpaginated listing (definitions, schemas) reads from D1 and answers. Conductor
 * answers these listings whole, with no page; here the rows read, the objects parsed from them and the answer written
 * are all held at once in an isolate's 128 MB, and one D1 result is capped too: a listing past the bound is a 413
 * naming a narrower request, never a list silently cut (as the correlation lookups refuse theirs).
 */
export const MAX_LISTING_CHARS = 16 * 1024 * 1024;

/** A listing's rows as {@link boundedListing} reads them: the listed row's columns, or nothing past the bound. */
type Bounded<Row> = { listing_chars: number } & ({ [K in keyof Row]: Row[K] } | { [K in keyof Row]: null });

/**
 * The rows `select` gives (which must have a `listed_chars` column, the characters each row answers with), ordered by
 * `orderBy`, in one statement: their characters are summed first, in D1, and no row is read when the sum is over
 * {@link MAX_LISTING_CHARS}, which is a 413 with `tooLarge`'s message (told the sum). `binds` are `select`'s parameters.
 */
export async function boundedListing<Row extends object>(
  db: D1Database,
  select: string,
  orderBy: string,
  binds: readonly unknown[],
  tooLarge: (chars: number) => string,
): Promise<Row[]> {
  // NOT MATERIALIZED: the sum reads each row's length, the answer its text; a materialized CTE would copy the whole
  // listing into D1's temporary storage first, over the bound too.
  const { results } = await db
    .prepare(
      `WITH listed AS NOT MATERIALIZED (${select}),
         total AS (SELECT COALESCE(SUM(listed_chars), 0) AS listing_chars FROM listed)
       SELECT total.listing_chars, listed.* FROM total LEFT JOIN listed ON total.listing_chars <= ? ORDER BY ${orderBy}`,
    )
    .bind(...binds, MAX_LISTING_CHARS)
    .all<Bounded<Row & { listed_chars: number }>>();
  refuseOverListing(results[0]?.listing_chars ?? 0, tooLarge);
  return results.filter((row): row is { listing_chars: number } & Row & { listed_chars: number } => row.listed_chars !== null);
}

/**
 * Throws the 413 of a listing of `chars` characters over {@link MAX_LISTING_CHARS}, with `tooLarge`'s message (told
 * `chars`): for a listing whose answer is larger than the rows it reads (a group's roles answered with each role's
 * grants), counted before the answer is built.
 */
export function refuseOverListing(chars: number, tooLarge: (chars: number) => string): void {
  if (chars > MAX_LISTING_CHARS) throw new ApiError(413, "PAYLOAD_TOO_LARGE", tooLarge(chars));
}

/** A condition of a listing's `WHERE`, with its parameters. */
export interface ListingCondition {
  sql: string;
  binds: readonly unknown[];
}

/**
 * The conditions keeping the rows whose `column` (a name) every one of `filters` lets through (one a filter, none for
 * a filter letting every name through): what a caller may see, filtered in D1, so that the rows it may not see are
 * neither read nor counted in {@link boundedListing}'s sum, whose 413 tells it that sum.
 */
export function namesLetThrough(column: string, filters: readonly NameFilter[]): ListingCondition[] {
  return filters.flatMap((filter) => {
    const terms = nameTerms(column, filter);
    return terms === "every" ? [] : [{ sql: anyNameTerm(terms), binds: terms.flatMap((term) => term.binds) }];
  });
}

/** The `WHERE` clause (empty for none) keeping the rows meeting every one of `conditions`, with its parameters. */
export function whereEvery(conditions: readonly ListingCondition[]): ListingCondition {
  return {
    sql: conditions.length === 0 ? "" : `WHERE ${conditions.map((condition) => condition.sql).join(" AND ")}`,
    binds: conditions.flatMap((condition) => condition.binds),
  };
}
