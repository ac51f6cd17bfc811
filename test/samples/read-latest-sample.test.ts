/**
 * latestSamples: each connection's latest sample, raw or in a compressed hour, with the columns a reader names
 * (every one by default), the rows of `where` alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findProbe } from "../../src/probes/index.ts";
import { compressChunk } from "../../src/samples/compress-history.ts";
import { latestSamples } from "../../src/samples/read-latest-sample.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { addConnection, DATASTORE_KINDS, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

const probe = findProbe("pg_stat_database")!;
const T0 = Date.parse("2026-05-01T00:00:00Z");
const MINUTE = 60_000;

describe.each(DATASTORE_KINDS)("the latest sample of connections (%s)", (kind) => {
  let store: TestDatastore;
  let compressed: number;
  let raw: number;
  const iso = (t: number) => new Date(t).toISOString();

  beforeAll(async () => {
    store = await migratedDatastore(kind);
    compressed = await addConnection(store.db, "latest-compressed");
    raw = await addConnection(store.db, "latest-raw");
    // An hour of two databases every minute, its last sample with db2 only; compressed for one connection.
    const rows = (minutes: number) =>
      Array.from({ length: minutes }, (_, m) =>
        (m === minutes - 1 ? [2] : [1, 2]).map((d) => ({
          collected_at: iso(T0 + m * MINUTE),
          database_name: `db${d}`,
          numbackends: m + 10 * (d - 1),
          xact_commit: 100 * m + d,
          blks_hit: 7 * m,
        })),
      ).flat();
    await writeSamples(store.db, { connectionId: compressed, probe: probe.name, rows: rows(60) });
    await compressChunk(store.db, probe, compressed, T0);
    await writeSamples(store.db, { connectionId: raw, probe: probe.name, rows: rows(30) });
  }, 60_000);
  afterAll(() => store.close());

  const read = async (where?: string, columns?: readonly string[]) =>
    Object.fromEntries(
      [...(await latestSamples<Record<string, unknown>>(store.db, probe.name, [compressed, raw], where, columns))].map(([id, sample]) => [
        id === compressed ? "compressed" : "raw",
        { at: sample.collected_at, rows: sample.rows.map(({ connection_id: _, collected_at: __, ...row }) => row) },
      ]),
    );

  it("gives the rows of each connection's latest sample with the columns named, whether it lies in a compressed hour or not", async () => {
    expect(await read(undefined, ["numbackends"])).toEqual({
      compressed: { at: iso(T0 + 59 * MINUTE), rows: [{ database_name: "db2", numbackends: 69 }] },
      raw: { at: iso(T0 + 29 * MINUTE), rows: [{ database_name: "db2", numbackends: 39 }] },
    });
    // Every column by default: the same values, and every other column beside them.
    const all = await read();
    expect(all.compressed.rows).toEqual([expect.objectContaining({ database_name: "db2", numbackends: 69, xact_commit: 5902, blks_hit: 413 })]);
    expect(Object.keys(all.compressed.rows[0]).length).toBe(probe.columns.length);
  });

  it("takes the latest sample with rows that match the condition, on columns it names", async () => {
    expect(await read("numbackends < 10", ["numbackends", "xact_commit"])).toEqual({
      compressed: { at: iso(T0 + 9 * MINUTE), rows: [{ database_name: "db1", numbackends: 9, xact_commit: 901 }] },
      raw: { at: iso(T0 + 9 * MINUTE), rows: [{ database_name: "db1", numbackends: 9, xact_commit: 901 }] },
    });
    expect(await read("TRUE", [])).toEqual({
      compressed: { at: iso(T0 + 59 * MINUTE), rows: [{ database_name: "db2" }] },
      raw: { at: iso(T0 + 29 * MINUTE), rows: [{ database_name: "db2" }] },
    });
  });
});
