/**
 * evenChanges: whether a connection's recorded changes in a range are evenly spaced, told from their count and
 * longest interval (the hourly change cells for whole hours) and the first and last change, against spacings that
 * look even by one of those facts alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSamples } from "../../src/collector/sample-writer.ts";
import { evenChanges } from "../../src/datastore/changes-repository.ts";
import { findProbe } from "../../src/probes/index.ts";
import { addConnection, DATASTORE_KINDS, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

const probe = findProbe("pg_stat_database")!;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.parse("2026-06-01T00:30:00Z");
const END = T0 + 200 * MINUTE; // 03:50: whole hours 01:00-03:00 in between
const NO_CELLS = Number.POSITIVE_INFINITY;

/** Sample times every minute from T0 to END, then `edit` applied (at minute offsets). */
const minutes = (edit: (ts: number[]) => number[] = (ts) => ts) => edit(Array.from({ length: 201 }, (_, i) => T0 + i * MINUTE));

describe.each(DATASTORE_KINDS)("evenChanges on %s", (kind) => {
  let store: TestDatastore;
  beforeAll(async () => {
    store = await migratedDatastore(kind);
  });
  afterAll(() => store.close());

  async function connectionWith(name: string, times: number[]) {
    const id = await addConnection(store.db, name);
    const rows = times.flatMap((t, i) => ["a", "b"].map((d) => ({ collected_at: new Date(t).toISOString(), database_name: d, xact_commit: i })));
    await writeSamples(store.db, { connectionId: id, probe: probe.name, rows });
    return Object.assign((from: number, to: number, cellsFrom: number) => evenChanges(store.db, probe, id, from, to, cellsFrom), { id });
  }

  it("gives the first change, the spacing and the count of evenly spaced changes, with the cells read or not", async () => {
    const even = await connectionWith("even", minutes());
    for (const cellsFrom of [Number.NEGATIVE_INFINITY, T0 + 2 * HOUR, NO_CELLS]) {
      expect(await even(T0, END, cellsFrom), `cells from ${cellsFrom}`).toEqual({ first: T0 + MINUTE, spacing: MINUTE, count: 200 });
      expect(await even(T0 + 10.5 * MINUTE, T0 + 150 * MINUTE, cellsFrom)).toEqual({ first: T0 + 11 * MINUTE, spacing: MINUTE, count: 140 });
    }
    expect(await even(END + MINUTE, END + HOUR, Number.NEGATIVE_INFINITY)).toBeUndefined(); // no change in range
  });

  it.each([
    ["a longer interval made up by a shorter one, inside a whole hour", (ts: number[]) => ts.map((t, i) => (i === 60 ? t + 30_000 : t))],
    ["a longer interval made up by a shorter one, in a raw edge", (ts: number[]) => ts.map((t, i) => (i === 10 ? t + 30_000 : t))],
    ["an extra sample between two", (ts: number[]) => [...ts, T0 + 100.5 * MINUTE].sort((x, y) => x - y)],
    ["a missing sample", (ts: number[]) => ts.filter((_, i) => i !== 120)],
  ])("is undefined for %s", async (what, edit) => {
    const uneven = await connectionWith(what, minutes(edit));
    for (const cellsFrom of [Number.NEGATIVE_INFINITY, NO_CELLS]) expect(await uneven(T0, END, cellsFrom), `cells from ${cellsFrom}`).toBeUndefined();
  });

  it("is undefined where the first change is shorter than the rest", async () => {
    const shortFirst = await connectionWith("short first", minutes((ts) => ts.map((t, i) => (i === 1 ? t + 30_000 : t))));
    expect(await shortFirst(T0 + 1.7 * MINUTE, END, Number.NEGATIVE_INFINITY)).toBeUndefined(); // 30 s, then 60 s apart
    expect(await shortFirst(T0 + 2.2 * MINUTE, END, Number.NEGATIVE_INFINITY)).toEqual({ first: T0 + 3 * MINUTE, spacing: MINUTE, count: 198 });
  });

  it("is undefined where a sample in range was written before irregular intervals were recorded", async () => {
    const even = await connectionWith("unchecked", minutes());
    await store.db.query(`UPDATE metrics."pg_stat_database__changes" SET entities_checked = NULL WHERE connection_id = $1 AND collected_at = $2`, [even.id, new Date(T0 + 100 * MINUTE).toISOString()]);
    expect(await even(T0, END, Number.NEGATIVE_INFINITY)).toBeUndefined();
    expect(await even(T0 + 101 * MINUTE, END, Number.NEGATIVE_INFINITY)).toBeDefined();
  });
});
