/**
 * `new Date(t).toISOString()` for epoch milliseconds, faster where consecutive times share a day (a series' point
 * times): the date is formatted once per day, the time of day by arithmetic. toISOString took 1 to 1.5 µs a call,
 * about a tenth of an hour's metrics request in JavaScript (lab); this takes a fifth of that.
 */
const DAY_MS = 86_400_000;
let cachedDay = Number.NaN;
let cachedPrefix = ""; // "YYYY-MM-DDT" of cachedDay

const pad = (n: number, width: number) => String(n).padStart(width, "0");

export function isoTime(t: number): string {
  const ms = Math.trunc(t); // as Date's constructor does
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) {
    cachedDay = day;
    cachedPrefix = new Date(day * DAY_MS).toISOString().slice(0, -13);
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${cachedPrefix}${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(rest - seconds * 1000, 3)}Z`;
}
