/**
 * Blackout schedules' timing: standard 5-field cron (minute hour day-of-month month day-of-week; ranges,
 * lists, steps; day-of-month and day-of-week ORed as in Vixie cron) read in an IANA timezone, by croner.
 * A local time a DST change skips runs at the first instant after the gap; one that occurs twice runs once.
 */
import { Cron } from "croner";
import { InputError } from "../errors.ts";

/** Throws InputError naming what is wrong with the timezone. */
export function checkTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    throw new InputError(`timezone: ${JSON.stringify(timezone)} is not an IANA timezone (e.g. UTC, Europe/Berlin, America/New_York)`);
  }
}

/** A parsed schedule; throws InputError naming the problem with the expression or the timezone. */
export function parseSchedule(expression: string, timezone: string): Cron {
  checkTimezone(timezone);
  if (expression.trim().startsWith("@"))
    throw new InputError(`cron_expression: give 5 fields (minute hour day-of-month month day-of-week), not a shorthand like ${expression.trim()}`);
  try {
    return new Cron(expression, { mode: "5-part", timezone, paused: true });
  } catch (err) {
    throw new InputError(`cron_expression ${JSON.stringify(expression)}: ${(err as Error).message.replace(/^CronPattern: /, "")}`);
  }
}

/** The next `n` start times after `from`. */
export const nextStarts = (cron: Cron, n: number, from: Date): Date[] => cron.nextRuns(n, from);

/**
 * The start a schedule's window should have begun at, if one is open at `now`: the latest start at or before
 * now whose window (`durationMinutes`) has not yet ended. An alerter that was down at the minute itself
 * still opens the window later, within its duration.
 */
export function openWindowStart(cron: Cron, durationMinutes: number, now: Date): Date | null {
  // Asked from a second later (a start at `now` itself counts), the latest may lie in that second: then the one before.
  const latest = cron.previousRuns(2, new Date(now.getTime() + 1000)).find((t) => t.getTime() <= now.getTime());
  if (!latest) return null;
  return now.getTime() < latest.getTime() + durationMinutes * 60_000 ? latest : null;
}
