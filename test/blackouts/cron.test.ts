/** Schedule timing: 5-field cron in a timezone, across DST changes, and catching up on a missed start. */
import { describe, expect, it } from "vitest";
import { nextStarts, openWindowStart, parseSchedule } from "../../src/blackouts/cron.ts";

const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

describe("parseSchedule", () => {
  it.each([
    ["0 2 * * *", "Mars/Olympus", /timezone: "Mars\/Olympus" is not an IANA timezone/],
    ["61 * * * *", "UTC", /cron_expression "61 \* \* \* \*": Invalid value for minute: 61/],
    ["* * * *", "UTC", /exactly five/],
    ["0 0 * * * *", "UTC", /requires exactly 5 parts/],
    ["@daily", "UTC", /give 5 fields .* not a shorthand like @daily/],
    ["0 2 * * MON-", "UTC", /cron_expression/],
  ])("refuses %j in %s", (expression, timezone, message) => {
    expect(() => parseSchedule(expression, timezone)).toThrow(message);
  });

  it("reads ranges, lists and steps", () => {
    const from = new Date("2026-11-23T00:00:00Z"); // a Monday
    expect(iso(nextStarts(parseSchedule("*/20 9-10 * * 1-5", "UTC"), 7, from))).toEqual([
      "2026-11-23T09:00:00.000Z",
      "2026-11-23T09:20:00.000Z",
      "2026-11-23T09:40:00.000Z",
      "2026-11-23T10:00:00.000Z",
      "2026-11-23T10:20:00.000Z",
      "2026-11-23T10:40:00.000Z",
      "2026-11-24T09:00:00.000Z",
    ]);
    expect(iso(nextStarts(parseSchedule("15 3 1,15 * *", "UTC"), 3, from))).toEqual([
      "2026-12-01T03:15:00.000Z",
      "2026-12-15T03:15:00.000Z",
      "2027-01-01T03:15:00.000Z",
    ]);
    expect(iso(nextStarts(parseSchedule("0 4 * * 0", "UTC"), 2, from))).toEqual(["2026-11-29T04:00:00.000Z", "2026-12-06T04:00:00.000Z"]);
  });
});

describe("DST", () => {
  it("Europe/Berlin: 02:30 local exists once on the autumn night and is skipped ahead in spring", () => {
    const daily = parseSchedule("30 2 * * *", "Europe/Berlin");
    // 25 Oct 2026: 02:30 happens twice (CEST, then CET); the window opens once, at the first.
    expect(iso(nextStarts(daily, 3, new Date("2026-10-24T12:00:00Z")))).toEqual([
      "2026-10-25T00:30:00.000Z",
      "2026-10-26T01:30:00.000Z",
      "2026-10-27T01:30:00.000Z",
    ]);
    // 28 Mar 2027: 02:00-03:00 does not exist; the window opens when the clock jumps, 03:00 CEST.
    expect(iso(nextStarts(daily, 3, new Date("2027-03-26T12:00:00Z")))).toEqual([
      "2027-03-27T01:30:00.000Z",
      "2027-03-28T01:00:00.000Z",
      "2027-03-29T00:30:00.000Z",
    ]);
  });

  it("America/New_York: a 01:30 window keeps its local time across the November change", () => {
    expect(iso(nextStarts(parseSchedule("30 1 * * *", "America/New_York"), 3, new Date("2026-10-31T12:00:00Z")))).toEqual([
      "2026-11-01T05:30:00.000Z", // 01:30 EDT, the first of the two 01:30s
      "2026-11-02T06:30:00.000Z", // 01:30 EST
      "2026-11-03T06:30:00.000Z",
    ]);
  });
});

describe("openWindowStart", () => {
  const nightly = parseSchedule("0 2 * * *", "UTC");
  it("opens at the start minute, catches up later within the duration, and not after it", () => {
    expect(openWindowStart(nightly, 60, new Date("2026-11-23T02:00:00Z"))?.toISOString()).toBe("2026-11-23T02:00:00.000Z");
    expect(openWindowStart(nightly, 60, new Date("2026-11-23T02:59:00Z"))?.toISOString()).toBe("2026-11-23T02:00:00.000Z");
    expect(openWindowStart(nightly, 60, new Date("2026-11-23T03:00:00Z"))).toBeNull();
    expect(openWindowStart(nightly, 60, new Date("2026-11-23T01:59:00Z"))).toBeNull();
  });

  it("keeps the open window in the last second before the next start", () => {
    const everyMinute = parseSchedule("* * * * *", "UTC");
    expect(openWindowStart(everyMinute, 5, new Date("2026-11-23T02:04:59.500Z"))?.toISOString()).toBe("2026-11-23T02:04:00.000Z");
    expect(openWindowStart(nightly, 60, new Date("2026-11-23T01:59:59.500Z"))).toBeNull();
  });
});
