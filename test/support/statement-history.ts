/**
 * Random pg_stat_statements histories for property tests: statements of two databases and two users that
 * appear and vanish, grow, drop without a marker, reset together with a marker, and sometimes lack a value,
 * sampled at irregular spacings with gaps. Seeded, so a failure replays from its seed.
 */
import type { Row } from "../../src/metrics/samples.ts";
import { seededRandom } from "./seeded-random.ts";

export interface HistoryShape {
  start: number;
  /** Fewest and most samples. */
  samples: [number, number];
  /** Seconds to the next sample, picked at random (repeat a value to weight it). */
  spacings: readonly number[];
  /** Chances per sample (reset) or per statement and sample. */
  churn: number;
  reset: number;
  drop: number;
  missing: number;
}

export function statementHistory(seed: number, shape: HistoryShape): Row[] {
  const rng = seededRandom(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
  const entities = ["app", "shop"].flatMap((db) => ["11", "-9000000000000000001", "42"].flatMap((q) => [10, 20].map((user) => ({ db, q, user }))));
  const state = new Map<string, { calls: number; time: number; reset: string | null }>();
  const rows: Row[] = [];
  let t = shape.start;
  for (let s = 0; s < int(...shape.samples); s++) {
    const globalReset = rng() < shape.reset ? new Date(t - 1000).toISOString() : null;
    for (const e of entities) {
      const key = `${e.db}/${e.q}/${e.user}`;
      if (rng() < shape.churn) {
        state.delete(key);
        continue;
      }
      const cur = state.get(key) ?? { calls: int(0, 500), time: int(0, 5000), reset: null };
      if (globalReset) Object.assign(cur, { calls: int(0, 5), time: int(0, 10), reset: globalReset });
      else if (rng() < shape.drop)
        Object.assign(cur, { calls: int(0, 3), time: int(0, 5) }); // unmarked drop
      else Object.assign(cur, { calls: cur.calls + int(0, 200), time: cur.time + int(0, 4000) / 4 });
      state.set(key, cur);
      rows.push({
        collected_at: new Date(t).toISOString(),
        database_name: e.db,
        queryid: e.q,
        userid: e.user,
        dbid: 1,
        toplevel: true,
        query: "q",
        calls: rng() < shape.missing ? null : cur.calls,
        total_exec_time: cur.time,
        stats_reset: cur.reset,
      });
    }
    t += shape.spacings[Math.floor(rng() * shape.spacings.length)] * 1000;
  }
  return rows;
}
