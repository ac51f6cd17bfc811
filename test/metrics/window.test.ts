import { describe, expect, it } from "vitest";
import { resolveWindow, toolInstant, toolWindow } from "../../src/metrics/window.ts";

const NOW = Date.parse("2026-06-15T12:00:00Z");
const DAY = 86_400_000;

describe("REST window", () => {
  it("selects a rolling window ending now for presets, ignoring time_start/time_end", () => {
    expect(resolveWindow({}, NOW)).toEqual({ start: NOW - 3_600_000, end: NOW });
    expect(resolveWindow({ time_range: "7d", time_start: "garbage" }, NOW)).toEqual({ start: NOW - 7 * DAY, end: NOW });
    expect(() => resolveWindow({ time_range: "2h" }, NOW)).toThrow("`time_range` must be one of 1h, 6h, 24h, 7d, 30d, custom");
  });

  it("validates a custom window", () => {
    const custom = (time_start?: string, time_end?: string) => resolveWindow({ time_range: "custom", time_start, time_end }, NOW);
    expect(custom("2026-06-15T10:00:00Z", "2026-06-15T11:00:00+00:00")).toEqual({ start: NOW - 2 * 3_600_000, end: NOW - 3_600_000 });
    expect(() => custom(undefined, "2026-06-15T11:00:00Z")).toThrow("time_range=custom needs `time_start` (RFC 3339)");
    expect(() => custom()).toThrow("needs `time_start` and `time_end`");
    expect(() => custom("2026-06-15", "2026-06-15T11:00:00Z")).toThrow("`time_start` is not an RFC 3339 timestamp");
    expect(() => custom("2026-06-15T11:00:00Z", "yesterday")).toThrow("`time_end` is not an RFC 3339 timestamp");
    expect(() => custom("2026-06-15T11:00:00Z", "2026-06-15T11:00:00Z")).toThrow("`time_end` must be after `time_start`");
    expect(() => custom("2026-06-15T12:00:00Z", "2026-06-16T00:00:00Z")).toThrow("`time_start` must be before the present moment");
    expect(() => custom("2025-06-01T00:00:00Z", "2026-06-15T00:00:00Z")).toThrow("more than 366 days");
  });

  it("clamps a future end to now", () => {
    expect(resolveWindow({ time_range: "custom", time_start: "2026-06-15T11:00:00Z", time_end: "2026-06-20T00:00:00Z" }, NOW)).toEqual({
      start: NOW - 3_600_000,
      end: NOW,
    });
  });
});

describe("MCP tool window", () => {
  it("accepts relative starts and ISO 8601 instants", () => {
    expect(toolWindow(undefined, undefined, NOW)).toEqual({ start: NOW - 3_600_000, end: NOW });
    expect(toolWindow("24h", "now", NOW)).toEqual({ start: NOW - DAY, end: NOW });
    expect(toolWindow("7d", undefined, NOW)).toEqual({ start: NOW - 7 * DAY, end: NOW });
    expect(toolWindow("30m", "2026-06-15T11:00:00Z", NOW)).toEqual({ start: NOW - 5_400_000, end: NOW - 3_600_000 });
    expect(toolWindow("2026-06-15", "2026-06-15T06:00:00", NOW)).toEqual({
      start: Date.parse("2026-06-15T00:00:00Z"),
      end: Date.parse("2026-06-15T06:00:00Z"),
    });
  });

  it("takes a relative end as that long before now, a default start, and single instants in the same forms", () => {
    expect(toolWindow("1h", "2h", NOW)).toEqual({ start: NOW - 3 * 3_600_000, end: NOW - 2 * 3_600_000 });
    expect(toolWindow(undefined, undefined, NOW, "24h")).toEqual({ start: NOW - DAY, end: NOW });
    expect(toolInstant("30m", "time_start", NOW)).toBe(NOW - 1_800_000);
    expect(toolInstant("2026-06-15T11:00:00Z", "time_end", NOW)).toBe(Date.parse("2026-06-15T11:00:00Z"));
    expect(toolInstant("now", "time_end", NOW)).toBe(NOW);
    expect(() => toolInstant("yesterday", "time_end", NOW)).toThrow("or now");
  });

  it("explains unusable values", () => {
    expect(() => toolWindow("soon", undefined, NOW)).toThrow(
      "`time_start` must be an RFC 3339 (ISO 8601) timestamp or a relative duration such as 30m, 1h, 24h, 7d",
    );
    expect(() => toolWindow("0h", undefined, NOW)).toThrow("positive duration");
    expect(() => toolWindow("2026-06-15T11:00:00Z", "2026-06-15T10:00:00Z", NOW)).toThrow("`time_end` must be after `time_start`");
  });
});
