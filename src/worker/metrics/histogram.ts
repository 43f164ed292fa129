/**
 * The duration buckets of the metrics' histograms (`workflow_completed_seconds`, `task_completed_seconds`,
 * `task_queue_wait_seconds`): upper bounds in seconds, from a fast HTTP step to a day-long approval. A duration is
 * counted in the first bucket it fits, past the last in the `+Inf` one (index {@link DURATION_BUCKETS_SECONDS}.length);
 * the exposition sums them up to Prometheus' cumulative `le` buckets.
 */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400];

/** The bucket a duration of `durationMs` milliseconds is counted in (bounds included). */
export function durationBucket(durationMs: number): number {
  const index = DURATION_BUCKETS_SECONDS.findIndex((bound) => durationMs <= Math.round(bound * 1000));
  return index < 0 ? DURATION_BUCKETS_SECONDS.length : index;
}

/** The metrics counted in `metric_counts` (migrations/0026_metrics.sql). */
export type CountedMetric = "workflow_started" | "workflow_completed" | "task_completed" | "task_queue_wait";
