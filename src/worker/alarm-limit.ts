/**
 * The latest time a Durable Object alarm may be set for: the end of 2189. workerd's `setAlarm` refuses a later date
 * with "This API doesn't support dates after 2189" (a rejected promise), though it was seen to take later ones: the end
 * of 2190 in one workerd test, the year 2200 in another (which refused the year 3000). The message's year is kept, the
 * safer bound.
 */
export const LATEST_ALARM_MILLIS = Date.UTC(2189, 11, 31, 23, 59, 59, 999);
