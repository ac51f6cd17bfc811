/**
 * What the alerter loads from the datastore (loadReadings): the columns, rows and samples the metrics read, found
 * by SQL (AlertMetric.columns, rows, latestOnly). Each metric that narrows what it loads must read the same from
 * the datastore as its measure gives on every row of the latest two samples, or a rule would silently never fire.
 * Random samples in a real datastore, many seeds, each metric alone and all of them at once (the filters combine).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Driver } from "../../drivers/types.ts";
import { loadReadings } from "../../src/alerts/load-readings.ts";
import { type Row, type Sample, groupSamples } from "../../src/metrics/samples.ts";
import { findProbe } from "../../src/probes/index.ts";
import type { ProbeColumn, ProbeDefinition } from "../../src/probes/types.ts";
import { CHUNK_MS, rawTable } from "../../src/probes/history-ddl.ts";
import { compressChunk } from "../../src/samples/compress-history.ts";
import { ensurePartitions, weekOf } from "../../src/samples/partitions.ts";
import { rawTableName } from "../../src/probes/ddl.ts";
import { ALERT_METRICS, type AlertMetric, type Reading } from "../../src/vocabulary/alert-metrics.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { seededRandom } from "../support/seeded-random.ts";

const measured = ALERT_METRICS.filter((m) => m.probes.length && !m.unavailable);
const narrowing = measured.filter((m) => m.columns || m.rows || m.latestOnly);
const probes = [...new Set(measured.flatMap((m) => m.probes))].map((p) => findProbe(p)!);
/** Half the timestamps are this one, so that reset markers often match between samples and changes are read. */
const MARKER_AGE = 48 * 3_600_000;
const DATABASES = ["db1", "db2", "db3"];
const WORDS = ["client backend", "autovacuum worker", "active", "idle", "idle in transaction", "Lock", "IO"];

/** A value for a column of a row, near the thresholds the metrics compare with (slow statements, table sizes, dead rows). */
function value(column: ProbeColumn, next: () => number, now: number): unknown {
  if (next() < 0.05) return null;
  if (column.type.startsWith("timestamp")) return new Date(now - (next() < 0.5 ? MARKER_AGE : Math.floor(next() * MARKER_AGE))).toISOString();
  if (column.type === "boolean") return next() < 0.5;
  if (column.type === "text") return next() < 0.8 ? WORDS[Math.floor(next() * WORDS.length)] : String(Math.floor(next() * 500));
  if (column.type === "double precision") return next() * 1500;
  return Math.floor(next() * (next() < 0.5 ? 100 : 3000));
}

/** Rows of one sample (one without keys), entity keys unique: a few databases (each once where they are the key), every other key numbered; pg_settings may name max_connections. */
function rows(probe: ProbeDefinition, next: () => number, now: number): Row[] {
  const byDatabase = probe.keys.length === 1 && probe.keys[0] === "database_name";
  const count = !probe.keys.length ? 1 : byDatabase ? DATABASES.length : 1 + Math.floor(next() * 25);
  return Array.from({ length: count }, (_, i) => {
    const row = Object.fromEntries(probe.columns.map((c) => [c.name, value(c, next, now)])) as Row;
    for (const key of probe.keys) {
      const column = probe.columns.find((c) => c.name === key)!;
      if (key === "database_name") row[key] = byDatabase ? DATABASES[i] : DATABASES[Math.floor(next() * DATABASES.length)];
      else if (key === "name") row[key] = i === 0 && next() < 0.8 ? "max_connections" : `setting_${i}`;
      else if (column.type === "boolean") row[key] = false;
      else row[key] = column.type === "text" ? `${key}_${i}` : i + 1;
    }
    return row;
  });
}

async function insertSample(db: Driver, probe: ProbeDefinition, connectionId: number, at: number, sample: Row[]) {
  await db.query(`INSERT INTO ${rawTable(probe.name)} SELECT * FROM json_populate_recordset(NULL::${rawTable(probe.name)}, $1::json)`, [
    JSON.stringify(sample.map((r) => ({ connection_id: connectionId, collected_at: new Date(at).toISOString(), ...r }))),
  ]);
}

/** The metric measured on every row of the connection's latest two samples of each probe it reads. */
async function measuredOnAll(db: Driver, metric: AlertMetric, connectionId: number, now: number): Promise<Reading[]> {
  const samples = new Map<string, Sample[]>();
  for (const name of metric.probes) {
    const all = await db.query(`SELECT * FROM ${rawTable(name)} WHERE connection_id = $1 ORDER BY collected_at`, [connectionId]);
    samples.set(name, groupSamples(findProbe(name)!, all));
  }
  return metric.measure({ now, latest: (p) => samples.get(p)?.at(-1), previous: (p) => samples.get(p)?.at(-2), schedule: [] });
}

const sorted = (readings: readonly Reading[]) =>
  [...readings].sort((a, b) => `${a.database_name}/${a.object_name}`.localeCompare(`${b.database_name}/${b.object_name}`));

describe("what the alerter loads from the datastore", () => {
  let store: TestDatastore;
  const seeds = Array.from({ length: 12 }, (_, i) => i + 1);
  const connections = new Map<number, number>();
  /** Per seed, every metric loaded at once (as the alerter loads them). */
  const together = new Map<number, Map<string, Reading[]>>();
  let now = 0;

  beforeAll(async () => {
    store = await migratedDatastore("pg");
    now = Date.now();
    await store.db.transaction(async (tx) => {
      for (const probe of probes)
        await ensurePartitions(tx, rawTableName(probe.name), [weekOf(probe.name, new Date(now)), weekOf(probe.name, new Date(now - 600_000))]);
    });
    for (const seed of seeds) {
      const next = seededRandom(seed);
      const id = await addConnection(store.db, `seed-${seed}`);
      connections.set(seed, id);
      // Three samples, the latest two within every probe's current window (its interval is at least 60 s).
      for (const probe of probes) for (const age of [170_000, 100_000, 30_000]) await insertSample(store.db, probe, id, now - age, rows(probe, next, now));
      together.set(seed, (await loadReadings(store.db, [id], ALERT_METRICS, new Date(now))).get(id)!);
    }
  }, 120_000);

  afterAll(async () => {
    await store?.close();
  });

  let changesRead = 0;
  for (const metric of measured) {
    it(`${metric.name}: the same readings as on all rows`, async () => {
      let readings = 0;
      for (const seed of seeds) {
        const id = connections.get(seed)!;
        const expected = sorted(await measuredOnAll(store.db, metric, id, now));
        const alone = await loadReadings(store.db, [id], [metric], new Date(now));
        expect(sorted(alone.get(id)!.get(metric.name)!), `seed ${seed}`).toEqual(expected);
        expect(sorted(together.get(seed)!.get(metric.name)!), `seed ${seed}, with every metric`).toEqual(expected);
        readings += expected.length;
      }
      // Every metric that narrows what it loads is compared on readings; of the others, those on changes are (below).
      if (narrowing.includes(metric)) expect(readings).toBeGreaterThan(0);
      if (!metric.latestOnly) changesRead += readings;
    });
  }

  it("compares metrics that read the sample before the latest on readings too", () => {
    expect(changesRead).toBeGreaterThan(0);
  });

  it("reads the same when the samples' hours are compressed, the latest's or only the earlier ones'", async () => {
    // Samples either side of an hour that has ended, read as of a minute after it.
    const hour = Math.floor(now / CHUNK_MS) * CHUNK_MS - CHUNK_MS;
    const at = hour + 60_000;
    await store.db.transaction((tx) =>
      Promise.all(probes.map((probe) => ensurePartitions(tx, rawTableName(probe.name), [weekOf(probe.name, new Date(hour - CHUNK_MS))]))),
    );
    let compared = 0;
    let zeros = 0;
    for (const seed of [101, 102, 103, 104, 105, 106]) {
      const next = seededRandom(seed);
      const id = await addConnection(store.db, `compressed-${seed}`);
      for (const probe of probes)
        for (const time of [hour - 170_000, hour - 100_000, hour + 30_000]) {
          const sample = rows(probe, next, at);
          // One database without slow statements: its count of 0 comes only from the one-row-per-database read.
          if (probe.name === "pg_stat_statements") for (const r of sample) if (r.database_name === "db3") r.mean_exec_time = 5;
          await insertSample(store.db, probe, id, time, sample);
        }
      const expected = new Map<string, Reading[]>();
      for (const metric of measured) expected.set(metric.name, sorted(await measuredOnAll(store.db, metric, id, at)));
      const chunks = seed % 2 ? [hour - CHUNK_MS] : [hour - CHUNK_MS, hour];
      for (const probe of probes) for (const chunk of chunks) expect(await compressChunk(store.db, probe, id, chunk)).toBeGreaterThan(0);
      const loaded = (await loadReadings(store.db, [id], ALERT_METRICS, new Date(at))).get(id)!;
      for (const metric of measured) {
        expect(sorted(loaded.get(metric.name)!), `seed ${seed}, ${metric.name}`).toEqual(expected.get(metric.name));
        compared += expected.get(metric.name)!.length;
      }
      zeros += expected.get("pg_stat_statements.slow_query_count")!.filter((r) => r.value === 0).length;
    }
    expect(compared).toBeGreaterThan(0);
    expect(zeros).toBeGreaterThan(0);
  });

  it("reads the slow statements of a sample through their partial index, not every statement", async () => {
    const metric = ALERT_METRICS.find((m) => m.name === "pg_stat_statements.slow_query_count")!;
    const id = connections.get(seeds[0])!;
    const statements: Array<{ sql: string; params?: readonly unknown[] }> = [];
    const recording = {
      ...store.db,
      query: (sql: string, params?: readonly unknown[]) => (statements.push({ sql, params }), store.db.query(sql, params as never)),
    };
    await loadReadings(recording as Driver, [id], [metric], new Date(now));
    const read = statements.find((s) => s.sql.includes(rawTable("pg_stat_statements")) && s.sql.includes("mean_exec_time >"))!;
    const partitions = (
      await store.db.query<{ name: string }>(
        "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'metrics.pg_stat_statements_slow'::regclass",
      )
    ).map((r) => r.name);
    expect(partitions.length).toBeGreaterThan(0);
    // With scans of whole tables or bitmaps ruled out, the planner picks among indexes: it must be able to use this one.
    const plan = await store.db.transaction(async (tx) => {
      await tx.query("SET LOCAL enable_seqscan = off");
      await tx.query("SET LOCAL enable_bitmapscan = off");
      return (await tx.query<{ "QUERY PLAN": string }>(`EXPLAIN ${read.sql}`, read.params as never)).map((r) => r["QUERY PLAN"]).join("\n");
    });
    expect(
      partitions.some((name) => plan.includes(name)),
      plan,
    ).toBe(true);
  });

  it("counts slow statements per database, zero included, from the statements' rows", async () => {
    const metric = ALERT_METRICS.find((m) => m.name === "pg_stat_statements.slow_query_count")!;
    const values: number[] = [];
    for (const seed of seeds) {
      const id = connections.get(seed)!;
      const [latest] = await store.db.query<{ at: Date }>(`SELECT max(collected_at) AS at FROM ${rawTable("pg_stat_statements")} WHERE connection_id = $1`, [
        id,
      ]);
      const statements = await store.db.query<{ database_name: string; mean_exec_time: number | null }>(
        `SELECT database_name, mean_exec_time FROM ${rawTable("pg_stat_statements")} WHERE connection_id = $1 AND collected_at = $2`,
        [id, latest.at],
      );
      const loaded = (await loadReadings(store.db, [id], [metric], new Date(now))).get(id)!.get(metric.name)!;
      for (const database of new Set(statements.map((s) => s.database_name))) {
        const slow = statements.filter((s) => s.database_name === database && (s.mean_exec_time ?? 0) > 1000).length;
        expect(loaded.find((r) => r.database_name === database)?.value, `seed ${seed}, ${database}`).toBe(slow);
        values.push(slow);
      }
    }
    expect(values).toContain(0);
    expect(values.some((v) => v > 1)).toBe(true);
  });
});
