/** The console's pure parts: a server's one-word status, the sparkline's runs, the server page's time range. */
import { describe, expect, it } from "vitest";
import { serverStatus } from "../../src/console/server-status.ts";
import { sparklineRuns } from "../../src/console/sparkline.tsx";
import { timeRange } from "../../src/console/time-range.ts";

describe("serverStatus", () => {
  const base = { demo: false, connectionError: null, inBlackout: false, openAlerts: 0 };
  it("names a demo first, then what needs acting on", () => {
    expect(serverStatus(base)).toBe("ok");
    expect(serverStatus({ ...base, openAlerts: 2 })).toBe("alerting");
    expect(serverStatus({ ...base, openAlerts: 2, inBlackout: true })).toBe("in a blackout");
    expect(serverStatus({ ...base, openAlerts: 2, inBlackout: true, connectionError: "timeout" })).toBe("unreachable");
    expect(serverStatus({ ...base, connectionError: "timeout", demo: true })).toBe("demo");
  });
});

describe("sparklineRuns", () => {
  it("breaks the line where a value is missing and puts zero at the bottom, the top at the top", () => {
    expect(sparklineRuns([0, 10, null, 5])).toEqual(["0.0,27.0 40.0,1.0", "120.0,14.0"]);
    expect(sparklineRuns([null, null])).toEqual([]);
    expect(sparklineRuns([0, 0])).toEqual(["0.0,27.0 120.0,27.0"]);
  });
});

describe("timeRange", () => {
  const now = Date.parse("2026-11-28T12:00:00Z");
  it("reads presets and custom ranges (UTC) into the window and the API's parameters", () => {
    expect(timeRange({}, now)).toMatchObject({ range: "24h", api: { time_range: "24h" }, window: { start: now - 86_400_000, end: now } });
    expect(timeRange({ range: "7d" }, now).api).toEqual({ time_range: "7d" });
    expect(timeRange({ range: "custom", from: "2026-11-27T08:00", to: "2026-11-27T09:30" }, now)).toMatchObject({
      api: { time_range: "custom", time_start: "2026-11-27T08:00:00.000Z", time_end: "2026-11-27T09:30:00.000Z" },
    });
    expect(timeRange({ range: "custom", from: "2026-11-27T08:00", to: "2026-11-27T09:30" }, now).error).toBeUndefined();
  });
  it("falls back to a day, saying why, when the range does not parse", () => {
    expect(timeRange({ range: "5y" }, now)).toMatchObject({ range: "24h", error: 'unknown range "5y"; showing 24h' });
    expect(timeRange({ range: "custom", from: "2026-11-27T08:00" }, now).error).toBe("a custom range needs both from and to; showing 24h");
    expect(timeRange({ range: "custom", from: "yesterday", to: "2026-11-27T09:30" }, now).error).toContain("`from` is not an RFC 3339 timestamp");
  });
});
