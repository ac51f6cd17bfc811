/**
 * The lookups the later migrations added indexes for can be planned on those indexes: the statements a metrics
 * request sends are explained with sequential scans priced out (the test's few days would otherwise be scanned
 * whole), and the plan searches a partition of the index by the column or expression the index adds (not only by
 * the connection it starts with). Each index pairs with an expression or a condition spelled in the reading code;
 * this fails when the two drift apart and the index silently stops being used.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Driver } from "../../drivers/types.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { runMetricsQuery } from "../../src/queries/query.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.parse("2026-06-01T00:00:00Z");
const SAMPLES = 3 * 24 * 60; // three days a minute apart

describe("the indexes of migrations 27, 28 and 30", () => {
  let store: TestDatastore;
  let connectionId: number;
  beforeAll(async () => {
    store = await migratedDatastore("pg");
    await store.db.query("UPDATE probe_configs SET collection_interval_seconds = 60");
    connectionId = await addConnection(store.db, "indexed");
    // Two databases every minute, but for a missed round, a late one and a stop of 20 minutes.
    const times = Array.from({ length: SAMPLES }, (_, j) => T0 + j * MINUTE + (j === 1500 ? 5_000 : 0)).filter((_, j) => j !== 700 && !(j > 3000 && j < 3020));
    for (let i = 0; i < times.length; i += 500) {
      const rows = times.slice(i, i + 500).flatMap((t, j) =>
        ["a", "b"].map((d) => ({
          collected_at: new Date(t).toISOString(),
          database_name: d,
          numbackends: (i + j) % 7,
          xact_commit: (i + j) * 10,
          stats_reset: null,
        })),
      );
      await writeSamples(store.db, { connectionId, probe: "pg_stat_database", rows });
    }
    await store.db.query("ANALYZE");
  });
  afterAll(() => store.close());

  /** The partitions' names of a partitioned index (as plans name them). */
  async function partitionsOf(index: string): Promise<string[]> {
    const rows = await store.db.query<{ name: string }>(
      "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass($1)",
      [index],
    );
    expect(rows.length, `${index} has partitions`).toBeGreaterThan(0);
    return rows.map((r) => r.name);
  }

  /** The index scans in the plans of a request's statements, with sequential scans priced out: each index's name and its search condition. */
  async function indexScans(request: {
    metrics: string;
    filters?: { database_name: string };
    from: number;
    to: number;
    buckets?: number;
  }): Promise<Array<{ index: string; condition: string }>> {
    const sent: Array<{ sql: string; params?: readonly unknown[] }> = [];
    const recording: Driver = { ...store.db, query: (sql, params) => (sent.push({ sql, params }), store.db.query(sql, params)) };
    await runMetricsQuery(recording, {
      probeName: "pg_stat_database",
      connectionIds: [connectionId],
      window: { start: request.from, end: request.to },
      metrics: request.metrics,
      filters: request.filters,
      buckets: request.buckets,
    });
    const scans: Array<{ index: string; condition: string }> = [];
    for (const { sql, params } of sent) {
      const plan = await store.db.transaction(async (tx) => {
        await tx.query("SET LOCAL enable_seqscan = off");
        return tx.query<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
      });
      JSON.stringify(plan[0]["QUERY PLAN"], (_key, node) => {
        if (node && typeof node === "object" && "Index Name" in node) scans.push({ index: node["Index Name"], condition: node["Index Cond"] ?? "" });
        return node;
      });
    }
    return scans;
  }

  /** Whether a scan searches a partition of `index` by a condition that names `by`. */
  async function searched(scans: Array<{ index: string; condition: string }>, index: string, by: string): Promise<boolean> {
    const partitions = await partitionsOf(index);
    return scans.some((s) => partitions.includes(s.index) && s.condition.includes(by));
  }
  const listed = (scans: Array<{ index: string; condition: string }>) => scans.map((s) => `${s.index} (${s.condition})`).join(", ");

  it("finds any change written before irregular intervals were recorded by index (27)", async () => {
    // A filtered counter over a day in wide buckets is read by difference, in one statement with that lookup.
    const scans = await indexScans({ metrics: "xact_commit_per_sec", filters: { database_name: "a" }, from: T0 + HOUR, to: T0 + 25 * HOUR, buckets: 10 });
    // A partial index: usable only where the statement's condition implies the index's.
    expect(await searched(scans, "metrics.pg_stat_database__changes_unchecked", "connection_id"), listed(scans)).toBe(true);
  });

  it("reads one database's hourly cells by index (28)", async () => {
    const scans = await indexScans({ metrics: "numbackends", filters: { database_name: "a" }, from: T0 + HOUR, to: T0 + 49 * HOUR, buckets: 12 });
    expect(await searched(scans, "metrics.pg_stat_database__entity_cells_by_entity", "entity"), listed(scans)).toBe(true);
  });

  it("finds the hourly cells holding a long interval by index (30)", async () => {
    // The summed counter over whole-hour buckets reads the cells, and those holding the stop raw.
    const scans = await indexScans({ metrics: "xact_commit_per_sec", from: T0 + HOUR, to: T0 + 61 * HOUR, buckets: 10 });
    expect(await searched(scans, "metrics.pg_stat_database__change_cells_by_longest", "max_span_ms"), listed(scans)).toBe(true);
  });
});
