/**
 * The server page's time range, from its address (`?range=24h`, or `?range=custom&from=...&to=...` in UTC): the
 * window to read and the parameters the charts pass to the metrics API. A range that does not parse falls back
 * to the default with the reason, so the page still opens.
 */
import { PRESETS, type Window, customWindow, parseRfc3339 } from "../metrics/window.ts";

export const CONSOLE_RANGES = ["1h", "24h", "7d", "30d"] as const;
const DEFAULT = "24h";

export interface TimeRange {
  range: string;
  window: Window;
  /** time_range (and time_start/time_end) for the API. */
  api: Record<string, string>;
  from?: string;
  to?: string;
  error?: string;
}

/** `datetime-local` values carry no zone: the page labels them UTC, so read them so. */
const asUtc = (v: string) => (/[zZ]|[+-]\d\d:\d\d$/.test(v) ? v : `${v.length === 16 ? `${v}:00` : v}Z`);

export function timeRange(q: { range?: string; from?: string; to?: string }, now: number): TimeRange {
  const preset = (range: string, error?: string): TimeRange => ({
    range,
    window: { start: now - PRESETS[range as keyof typeof PRESETS], end: now },
    api: { time_range: range },
    error,
  });
  const range = q.range ?? DEFAULT;
  if (range !== "custom")
    return (CONSOLE_RANGES as readonly string[]).includes(range)
      ? preset(range)
      : preset(DEFAULT, `unknown range ${JSON.stringify(range)}; showing ${DEFAULT}`);
  try {
    if (!q.from || !q.to) throw new Error("a custom range needs both from and to");
    const [from, to] = [asUtc(q.from), asUtc(q.to)];
    const window = customWindow(parseRfc3339(from, "from"), parseRfc3339(to, "to"), now, { start: "from", end: "to" });
    return {
      range,
      window,
      api: { time_range: "custom", time_start: new Date(window.start).toISOString(), time_end: new Date(window.end).toISOString() },
      from: q.from,
      to: q.to,
    };
  } catch (err) {
    return preset(DEFAULT, `${(err as Error).message}; showing ${DEFAULT}`);
  }
}
