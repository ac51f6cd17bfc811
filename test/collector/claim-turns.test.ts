/**
 * Claims take turns: instances claiming at the same moment each take whole servers (every due probe of each),
 * never a share of one server's probes, and together take every due probe once; a claimer frozen while holding
 * the turn holds up the others a few seconds, not for good; a claim that cannot have its turn claims nothing.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { type Candidate, claimDue, takeClaimTurn } from "../../src/collector/schedule-store.ts";
import { PROBES } from "../../src/probes/index.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

const SERVERS = 100;
const PROBES_PER_SERVER = 20;
let store: TestDatastore;
let instances: Driver[];
let candidates: Candidate[];

beforeAll(async () => {
  store = await migratedDatastore("pg");
  // Each instance its own pool, as separate processes would be.
  instances = [openPg(store.url!), openPg(store.url!), openPg(store.url!)];
  const ids: number[] = [];
  for (let i = 0; i < SERVERS; i++) ids.push(await addConnection(store.db, `server-${i}`));
  const probes = PROBES.slice(0, PROBES_PER_SERVER).map((p) => p.name);
  candidates = ids.flatMap((id) => probes.map((probe) => ({ connectionId: id, probe, intervalSeconds: 3600 })));
  // Every row exists before the race, as after a first round.
  await store.db.query("INSERT INTO probe_schedule (connection_id, probe_name) SELECT * FROM unnest($1::int[], $2::text[])", [
    candidates.map((c) => c.connectionId),
    candidates.map((c) => c.probe),
  ]);
}, 60_000);

afterAll(async () => {
  for (const db of instances ?? []) await db.close();
  await store?.close();
});

/** Every instance claims until nothing is left, all at once: which instances took each server, and every claim. */
async function race(): Promise<{ owners: Map<number, Set<number>>; taken: string[] }> {
  await store.db.query("UPDATE probe_schedule SET claimed_until = NULL, claimed_at = NULL");
  const owners = new Map<number, Set<number>>();
  const taken: string[] = [];
  await Promise.all(
    instances.map(async (db, k) => {
      for (;;) {
        // Five servers' probes a claim.
        const claimed = await claimDue(db, candidates, 5 * PROBES_PER_SERVER);
        if (claimed.length === 0) return;
        for (const c of claimed) {
          owners.set(c.connectionId, (owners.get(c.connectionId) ?? new Set()).add(k));
          taken.push(`${c.connectionId}/${c.probe}`);
        }
      }
    }),
  );
  return { owners, taken };
}

it("gives instances claiming at once whole servers, each due probe to one of them", async () => {
  // Several races: two claims that overlap in time are what splits a server, and they need not overlap every time.
  for (let r = 0; r < 10; r++) {
    const { owners, taken } = await race();
    expect(taken.length).toBe(candidates.length);
    expect(new Set(taken).size).toBe(candidates.length);
    const shared = [...owners].filter(([, by]) => by.size > 1).map(([id]) => id);
    expect(shared, `race ${r + 1}`).toEqual([]);
    // And they did share the estate.
    const perInstance = instances.map((_, k) => [...owners.values()].filter((by) => by.has(k)).length);
    expect(perInstance.filter((n) => n > 0).length).toBeGreaterThan(1);
  }
}, 90_000);

it("lets the others claim a few seconds after a claimer froze holding the turn", async () => {
  await store.db.query("UPDATE probe_schedule SET claimed_until = NULL, claimed_at = NULL");
  // A claimer that took the turn as claimDue does and then stopped (its process frozen mid-transaction).
  const frozen = new pg.Client({ connectionString: store.url });
  await frozen.connect();
  frozen.on("error", () => {}); // the datastore ends its session
  await frozen.query("BEGIN");
  await takeClaimTurn({ query: async (sql, params) => (await frozen.query(sql, params as unknown[])).rows });
  const started = Date.now();
  try {
    const claimed = await claimDue(instances[0], candidates, 5 * PROBES_PER_SERVER);
    expect(claimed).toHaveLength(5 * PROBES_PER_SERVER);
    // It waited for the frozen claimer's session to end, no longer.
    expect(Date.now() - started).toBeGreaterThan(3000);
  } finally {
    await frozen.end().catch(() => {});
  }
}, 30_000);

it("claims nothing, without an error, when the turn stays taken longer than a claim waits", async () => {
  await store.db.query("UPDATE probe_schedule SET claimed_until = NULL, claimed_at = NULL");
  // Held by a session the datastore does not end (not a claimer: no idle timeout of its own).
  const holder = new pg.Client({ connectionString: store.url });
  await holder.connect();
  await holder.query("BEGIN");
  await holder.query("SELECT pg_advisory_xact_lock(5118270433)");
  try {
    expect(await claimDue(instances[0], candidates, 5 * PROBES_PER_SERVER)).toEqual([]);
  } finally {
    await holder.query("ROLLBACK");
    await holder.end();
  }
  expect(await claimDue(instances[0], candidates, 5 * PROBES_PER_SERVER)).toHaveLength(5 * PROBES_PER_SERVER);
}, 60_000);
