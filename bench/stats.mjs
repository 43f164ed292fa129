// @ts-check
/**
 * Percentiles and number formatting for the report.
 */

/**
 * Nearest-rank percentile (p in 0..100) of unsorted values; NaN for an empty list.
 * @param {number[]} values
 * @param {number} p
 */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return /** @type {number} */ (sorted[Math.min(rank, sorted.length) - 1]);
}

/**
 * @param {number} value
 * @param {number} [digits]
 */
export function fmt(value, digits = 1) {
  return Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}
