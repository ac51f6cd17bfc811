/** Token lifetimes written as `30d`, `12h`, `2w`, `6m`, `1y` or `never`. */
import { InputError } from "../errors.ts";

const UNIT_HOURS: Record<string, number> = { h: 1, d: 24, w: 24 * 7, m: 24 * 30, y: 24 * 365 };
const MAX_DAYS = 3650;

/** The expiry instant, or null for `never`/absent. */
export function parseExpiry(text: string | undefined, now = Date.now()): Date | null {
  const value = (text ?? "never").trim().toLowerCase();
  if (value === "" || value === "never") return null;
  const match = /^(\d+)([hdwmy])$/.exec(value);
  if (!match || Number(match[1]) === 0) throw new InputError(`expiry must look like 12h, 30d, 2w, 6m, 1y or never; got ${JSON.stringify(text)}`);
  const hours = Number(match[1]) * UNIT_HOURS[match[2]];
  if (hours > MAX_DAYS * 24) throw new InputError(`expiry is at most ${MAX_DAYS} days; use never for a token that does not expire`);
  return new Date(now + hours * 3_600_000);
}
