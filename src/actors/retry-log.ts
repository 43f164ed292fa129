/**
 * When work retried on a timer (a background job every 2 s, an owed notice every round) keeps failing, each failure
 * logged would be a line every few seconds for as long as the cause lasts (D1 down for an hour is 1,800 lines per
 * execution): the log an operator reads would be that flood. A failure is logged at its 1st, 2nd, 4th, 8th… attempt in
 * a row, each line saying which (`attempt`): the first failure is seen at once, and one still failing after a day of
 * 2-second retries has left about 16 lines, not 43,200.
 */
export function retryFailureLogged(attempt: number): boolean {
  return attempt >= 1 && (attempt & (attempt - 1)) === 0;
}

/**
 * Counts one more failure in a row of `key` in `failures` (cleared by its caller on success): the attempt's number
 * when its failure is to be logged (see {@link retryFailureLogged}), else undefined.
 */
export function failedAgain(failures: Map<string, number>, key: string): number | undefined {
  const attempt = (failures.get(key) ?? 0) + 1;
  failures.set(key, attempt);
  return retryFailureLogged(attempt) ? attempt : undefined;
}
