/** The time window of a metrics request. */
import { InputError } from "../errors.ts";

export interface Window {
  start: number; // epoch ms
  end: number; // epoch ms
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const PRESETS = { "1h": HOUR, "6h": 6 * HOUR, "24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY } as const;
export type Preset = keyof typeof PRESETS;
export const TIME_RANGES = [...Object.keys(PRESETS), "custom"] as const;
export const MAX_SPAN_MS = 366 * DAY;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function parseRfc3339(value: string, name: string): number {
  const ms = RFC3339.test(value) ? Date.parse(value.replace(" ", "T")) : Number.NaN;
  if (Number.isNaN(ms)) throw new InputError(`\`${name}\` is not an RFC 3339 timestamp (e.g. 2026-01-31T12:00:00Z): ${JSON.stringify(value)}`);
  return ms;
}

/** Checks a window given as two instants: ordering, not in the future, span limit; clamps a future end. */
export function customWindow(start: number, end: number, now: number, names = { start: "time_start", end: "time_end" }): Window {
  if (end <= start) throw new InputError(`\`${names.end}\` must be after \`${names.start}\``);
  if (start >= now) throw new InputError(`\`${names.start}\` must be before the present moment`);
  const clampedEnd = Math.min(end, now);
  if (clampedEnd - start > MAX_SPAN_MS) throw new InputError(`the window spans more than 366 days; narrow \`${names.start}\`..\`${names.end}\``);
  return { start, end: clampedEnd };
}

/** REST: a preset rolling window, or `custom` with both RFC 3339 timestamps. */
export function resolveWindow(params: { time_range?: string; time_start?: string; time_end?: string }, now: number): Window {
  const range = params.time_range ?? "1h";
  if (range in PRESETS) return { start: now - PRESETS[range as Preset], end: now };
  if (range !== "custom") throw new InputError(`\`time_range\` must be one of ${TIME_RANGES.join(", ")}; got ${JSON.stringify(range)}`);
  const missing = (["time_start", "time_end"] as const).filter((k) => !params[k]);
  if (missing.length) throw new InputError(`time_range=custom needs ${missing.map((m) => `\`${m}\``).join(" and ")} (RFC 3339)`);
  return customWindow(parseRfc3339(params.time_start!, "time_start"), parseRfc3339(params.time_end!, "time_end"), now);
}

const RELATIVE = /^(\d+(?:\.\d+)?)(s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { s: SECOND, m: MINUTE, h: HOUR, d: DAY };
const ISO_DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const ISO_NO_ZONE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/** An ISO 8601 instant; a value without a zone is read as UTC. */
function parseIso(value: string, name: string): number {
  let text = value;
  if (ISO_DATE_ONLY.test(text)) text = `${text}T00:00:00Z`;
  else if (ISO_NO_ZONE.test(text)) text = `${text.replace(" ", "T")}Z`;
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms))
    throw new InputError(
      `\`${name}\` must be an RFC 3339 (ISO 8601) timestamp or a relative duration such as 30m, 1h, 24h, 7d${name === "time_end" ? ", or now" : ""}; got ${JSON.stringify(value)}`,
    );
  return ms;
}

/** A relative duration (`30m`, `1h`, `7d`) in ms, or null when `text` is not one. */
function relativeMs(text: string, name: string): number | null {
  const relative = RELATIVE.exec(text.toLowerCase());
  if (!relative) return null;
  const amount = Number(relative[1]) * UNIT_MS[relative[2]];
  if (amount <= 0) throw new InputError(`\`${name}\` must be a positive duration; got ${JSON.stringify(text)}`);
  return amount;
}

/** A tool's time_end: `now` (or absent), a relative duration before now, or ISO 8601. */
function toolEnd(timeEnd: string | undefined, now: number): number {
  const text = (timeEnd ?? "").trim();
  if (text === "" || text.toLowerCase() === "now") return now;
  const ago = relativeMs(text, "time_end");
  return ago === null ? parseIso(text.toUpperCase(), "time_end") : now - ago;
}

/**
 * MCP: `time_start` relative to `time_end` (`1h`, `30m`, `7d`) or ISO 8601 (default `defaultStart` before the
 * end); `time_end` relative to now, ISO 8601 or `now`.
 */
export function toolWindow(timeStart: string | undefined, timeEnd: string | undefined, now: number, defaultStart = "1h"): Window {
  const end = toolEnd(timeEnd, now);
  const startText = (timeStart ?? "").trim() || defaultStart;
  const back = relativeMs(startText, "time_start");
  const start = back === null ? parseIso(startText.toUpperCase(), "time_start") : Math.min(end, now) - back;
  return customWindow(start, end, now);
}

/** MCP filters on one instant (e.g. alerts triggered after `time_start`): relative to now, ISO 8601 or `now`. */
export function toolInstant(value: string, name: "time_start" | "time_end", now: number): number {
  const text = value.trim();
  if (text.toLowerCase() === "now") return now;
  const ago = relativeMs(text, name);
  return ago === null ? parseIso(text.toUpperCase(), name) : now - ago;
}
