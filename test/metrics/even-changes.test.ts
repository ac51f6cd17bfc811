/**
 * The spacing facts (readSpaced's changes, spacedFrom): whether a connection's recorded changes in a range are evenly spaced, told from their count and
 * longest interval (the hourly change cells for whole hours) and the first and last change, against spacings that
 * look even by one of those facts alone; and where a few are not one interval long, the sequence from them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { MAX_IRREGULAR_CHANGES, type SpacedSequence, sequenceBetween } from "../../src/samples/read-changes.ts";
import { readSpaced } from "../../src/samples/read-spaced-changes.ts";
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

/** Segments of changes (or anything else) as each change's times, to compare with sequenceOf. */
function expanded(found: unknown) {
  if (!found || typeof found !== "object" || !("segments" in found)) return found;
  const changes = (found as SpacedSequence).segments.flatMap((g) =>
    Array.from({ length: g.count }, (_, i) => [g.from + i * g.spacing, g.from + (i + 1) * g.spacing]),
  );
  return { to: changes.map(([, to]) => to), from: changes.map(([from]) => from) };
}

/** The changes of samples at `times` that end in [from, to], as read one by one. */
function sequenceOf(times: number[], from: number, to: number) {
  const ends = times.map((t, i) => [t, times[i - 1]]).filter(([t], i) => i > 0 && t >= from && t <= to);
  return { to: ends.map(([t]) => t), from: ends.map(([, f]) => f) };
}

describe("sequenceBetween", () => {
  const second = 1000;
  it("chains the irregular changes with evenly spaced ones, and refuses what does not chain into the count", () => {
    const irregular = [{ from: 5 * second, to: 7 * second }];
    expect(sequenceBetween({ from: 0, to: second }, 9 * second, 8, second, irregular)).toEqual({
      segments: [
        { from: 0, count: 5, spacing: second },
        { from: 5 * second, count: 1, spacing: 2 * second },
        { from: 7 * second, count: 2, spacing: second },
      ],
    });
    expect(sequenceBetween({ from: 0, to: second }, 9 * second, 9, second, irregular)).toBeUndefined(); // a change not accounted for
    expect(sequenceBetween({ from: 0, to: second }, 9.5 * second, 8, second, irregular)).toBeUndefined(); // off the spacing at the end
    expect(sequenceBetween({ from: 0, to: second }, 9 * second, 8, second, [{ from: 5.5 * second, to: 7 * second }])).toBeUndefined(); // off the spacing before it
    expect(sequenceBetween({ from: 0, to: 2 * second }, 9 * second, 8, second, irregular)).toBeUndefined(); // the first change is irregular but not listed
  });
});

describe.each(DATASTORE_KINDS)("the spacing facts on %s", (kind) => {
  let store: TestDatastore;
  beforeAll(async () => {
    store = await migratedDatastore(kind);
  });
  afterAll(() => store.close());

  async function connectionWith(name: string, times: number[]) {
    const id = await addConnection(store.db, name);
    const rows = times.flatMap((t, i) => ["a", "b"].map((d) => ({ collected_at: new Date(t).toISOString(), database_name: d, xact_commit: i })));
    await writeSamples(store.db, { connectionId: id, probe: probe.name, rows });
    const changes = async (from: number, to: number, cellsFrom: number) =>
      expanded((await readSpaced(store.db, { probe, connectionId: id, columns: [], filters: [] }, { from, to, cellsFrom }, MINUTE, [])).changes);
    return Object.assign(changes, { id });
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
    ["two missing samples and a late one", (ts: number[]) => ts.filter((_, i) => i !== 3 && i !== 150).map((t, i) => (i === 90 ? t + 700 : t))],
  ])("is the sequence, as read one by one, for %s", async (what, edit) => {
    const times = minutes(edit);
    const uneven = await connectionWith(what, times);
    for (const cellsFrom of [Number.NEGATIVE_INFINITY, NO_CELLS]) {
      expect(await uneven(T0, END, cellsFrom), `cells from ${cellsFrom}`).toEqual(sequenceOf(times, T0, END));
      expect(await uneven(T0 + 2.5 * MINUTE, T0 + 170 * MINUTE, cellsFrom)).toEqual(sequenceOf(times, T0 + 2.5 * MINUTE, T0 + 170 * MINUTE));
    }
  });

  it("is the sequence where the first change is shorter than the rest, and even after it", async () => {
    const times = minutes((ts) => ts.map((t, i) => (i === 1 ? t + 30_000 : t)));
    const shortFirst = await connectionWith("short first", times);
    expect(await shortFirst(T0 + 1.7 * MINUTE, END, Number.NEGATIVE_INFINITY)).toEqual(sequenceOf(times, T0 + 1.7 * MINUTE, END)); // 30 s, then 60 s apart
    expect(await shortFirst(T0 + 2.2 * MINUTE, END, Number.NEGATIVE_INFINITY)).toEqual({ first: T0 + 3 * MINUTE, spacing: MINUTE, count: 198 });
  });

  it("is undefined where more than MAX_IRREGULAR_CHANGES changes are not one interval long", async () => {
    // k samples late by 0.5 s, each between two on time: 2k changes not a minute long.
    const late = (k: number) => minutes((ts) => ts.map((t, i) => (i % 2 === 0 && i > 0 && i <= 2 * k ? t + 500 : t)));
    const few = late(MAX_IRREGULAR_CHANGES / 2);
    expect(await (await connectionWith("few late", few))(T0, END, Number.NEGATIVE_INFINITY)).toEqual(sequenceOf(few, T0, END));
    expect(await (await connectionWith("many late", late(MAX_IRREGULAR_CHANGES / 2 + 1)))(T0, END, Number.NEGATIVE_INFINITY)).toBeUndefined();
  });

  it("is undefined where a sample in range was written before irregular intervals were recorded", async () => {
    const even = await connectionWith("unchecked", minutes());
    await store.db.query(`UPDATE metrics."pg_stat_database__changes" SET entities_checked = NULL WHERE connection_id = $1 AND collected_at = $2`, [
      even.id,
      new Date(T0 + 100 * MINUTE).toISOString(),
    ]);
    expect(await even(T0, END, Number.NEGATIVE_INFINITY)).toBeUndefined();
    expect(await even(T0 + 101 * MINUTE, END, Number.NEGATIVE_INFINITY)).toBeDefined();
  });
});
