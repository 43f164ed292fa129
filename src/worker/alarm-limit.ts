/**
 * The latest time a Durable Object alarm may be set for: the end of 2189. workerd's `setAlarm` refuses a later date
 * with "This API doesn't support dates after 2189" (a rejected promise). In a workerd test it took dates up to 2262
 * (the range of its clock) and refused the year 3000; the message's year is kept, the safer bound.
 */
export const LATEST_ALARM_MILLIS = Date.UTC(2189, 11, 31, 23, 59, 59, 999);
