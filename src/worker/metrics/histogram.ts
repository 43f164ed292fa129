/**
 * The duration buckets of the metrics' histograms (`workflow_completed_seconds`, `task_completed_seconds`): upper
 * bounds in seconds, from a fast HTTP step to a day-long approval. A duration is counted in the first bucket it fits,
 * past the last in the `+Inf` one (index {@link DURATION_BUCKETS_SECONDS}.length); the exposition sums them up to
 * Prometheus' cumulative `le` buckets.
 */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400];

/**
 * A SQL expression for the bucket of the duration `durationMs` (a SQL expression in milliseconds): counted where it is
 * computed, in the statement that counts it. The bounds are constants of this module, never input.
 */
export function durationBucketSql(durationMs: string): string {
  const cases = DURATION_BUCKETS_SECONDS.map((bound, index) => `WHEN ${durationMs} <= ${Math.round(bound * 1000)} THEN ${index}`).join(" ");
  return `CASE ${cases} ELSE ${DURATION_BUCKETS_SECONDS.length} END`;
}
