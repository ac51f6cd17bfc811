/** Override resolution, over every combination of levels present: the most specific present level wins whole. */
import { describe, expect, it } from "vitest";
import { type RuleDefaults, effectiveSetting, violates } from "../../src/alerts/effective-setting.ts";
import type { Override } from "../../src/vocabulary/alert-records.ts";

const rule: RuleDefaults = { id: 7, default_operator: ">", default_threshold: 100, default_severity: "warning", default_enabled: true };
const where = { connectionId: 1, clusterId: 10, groupId: 20 };
const LEVELS = ["server_database", "server", "cluster", "group"] as const;

function override(level: (typeof LEVELS)[number], enabled: boolean): Override {
  const base = { rule_id: 7, operator: "<" as const, severity: "critical" as const, enabled, threshold: LEVELS.indexOf(level) + 1 };
  switch (level) {
    case "server_database":
      return { ...base, scope: "server", scope_id: 1, database_name: "app" };
    case "server":
      return { ...base, scope: "server", scope_id: 1, database_name: "" };
    case "cluster":
      return { ...base, scope: "cluster", scope_id: 10, database_name: "" };
    case "group":
      return { ...base, scope: "group", scope_id: 20, database_name: "" };
  }
}

describe("effectiveSetting", () => {
  for (let mask = 0; mask < 16; mask++) {
    for (const enabled of [true, false]) {
      const present = LEVELS.filter((_, i) => mask & (1 << i));
      it(`levels {${present.join(", ") || "none"}}, winner enabled=${enabled}`, () => {
        const overrides = present.map((l, i) => override(l, i === 0 ? enabled : !enabled));
        // Noise that must never apply: other rules, other servers, clusters, groups and databases.
        const noise: Override[] = [
          { ...override("server", true), rule_id: 8 },
          { ...override("server", true), scope_id: 2 },
          { ...override("cluster", true), scope_id: 11 },
          { ...override("group", true), scope_id: 21 },
          { ...override("server_database", true), database_name: "other" },
        ].map((o) => ({ ...o, threshold: 999 }));
        const forApp = effectiveSetting(rule, [...noise, ...overrides], where, "app");
        if (present.length === 0)
          expect(forApp).toEqual({
            operator: ">",
            threshold: 100,
            severity: "warning",
            enabled: true,
            for_minutes: 0,
            clear_delay_minutes: 0,
            source: "default",
          });
        else
          expect(forApp).toEqual({
            operator: "<",
            threshold: LEVELS.indexOf(present[0]) + 1,
            severity: "critical",
            enabled,
            for_minutes: 0,
            clear_delay_minutes: 0,
            source: present[0],
          });
        // A database-specific override applies to its database only.
        const forServer = effectiveSetting(rule, [...noise, ...overrides], where, "");
        const serverWide = present.filter((l) => l !== "server_database");
        expect(forServer.source).toBe(serverWide[0] ?? "default");
      });
    }
  }

  it("ignores cluster and group levels for a connection outside any cluster", () => {
    const all = LEVELS.map((l) => override(l, true)).filter((o) => o.scope !== "server");
    expect(effectiveSetting(rule, all, { connectionId: 1, clusterId: null, groupId: null }, "app").source).toBe("default");
  });
});

describe("violates", () => {
  it.each([
    [">", 5, 4, true],
    [">", 4, 4, false],
    [">=", 4, 4, true],
    [">=", 3, 4, false],
    ["<", 3, 4, true],
    ["<", 4, 4, false],
    ["<=", 4, 4, true],
    ["<=", 5, 4, false],
    ["==", 1, 1, true],
    ["==", 0, 1, false],
    ["!=", 0, 1, true],
    ["!=", 1, 1, false],
  ] as const)("%s: %d against %d -> %s", (op, value, threshold, expected) => {
    expect(violates(value, op, threshold)).toBe(expected);
  });
});
