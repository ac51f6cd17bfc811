/**
 * A probe runs once per slot of its interval (collector/schedule-store.ts): the rule on explicit times, and the
 * claim around it, where a claim that lapsed without a finished run is taken again within its slot.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimDue, recordOutcomes, slotDoneSql } from "../../src/collector/schedule-store.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

describe("probe slots", () => {
  let store: TestDatastore;
  let connectionId: number;

  beforeAll(async () => {
    store = await migratedDatastore("pg");
    connectionId = await addConnection(store.db, "slotted");
  });
  afterAll(() => store.close());

  const done = async (last: string | null, now: string, seconds: number) => {
    const [row] = await store.db.query<{ done: boolean | null }>(`SELECT ${slotDoneSql("$1::timestamptz", "$2::timestamptz", "$3::int")} AS done`, [
      last,
      now,
      seconds,
    ]);
    return row.done === true;
  };

  it.each([
    ["never run", null, "2026-11-24T12:00:00.000Z", 60, false],
    ["same minute", "2026-11-24T12:00:00.300Z", "2026-11-24T12:00:59.900Z", 60, true],
    // A minute's Cron Trigger firing 0.2 s earlier in its minute than the last: 59.8 s since the last run.
    ["next minute, a little under a minute later", "2026-11-24T12:00:00.300Z", "2026-11-24T12:01:00.100Z", 60, false],
    ["next minute, just after a run at the end of the last", "2026-11-24T12:00:59.900Z", "2026-11-24T12:01:00.100Z", 60, true],
    ["five-minute slot, four minutes in", "2026-11-24T12:00:00.000Z", "2026-11-24T12:04:59.000Z", 300, true],
    ["five-minute slot, the next", "2026-11-24T12:00:00.400Z", "2026-11-24T12:05:00.200Z", 300, false],
    // A run off the grid (the first, say) is followed half an interval later, then the runs keep to the slots.
    ["five-minute slot, the next, under half an interval on", "2026-11-24T12:04:01.000Z", "2026-11-24T12:05:00.200Z", 300, true],
    ["five-minute slot, the next, half an interval on", "2026-11-24T12:04:01.000Z", "2026-11-24T12:06:31.000Z", 300, false],
    ["an hour late", "2026-11-24T11:00:00.000Z", "2026-11-24T12:00:30.000Z", 60, false],
  ])("%s", async (_name, last, now, seconds, expected) => {
    expect(await done(last, now, seconds)).toBe(expected);
  });

  it("claims a probe in a new slot half an interval after its last run, before a whole interval has passed", async () => {
    const id = await addConnection(store.db, "next slot");
    const candidate = { connectionId: id, probe: "pg_stat_database", intervalSeconds: 3600 };
    // The last run in the hour before this one, between 30 and 60 minutes before the claim (which comes a moment
    // later: still more than half an hour, and an hour boundary passed meanwhile only makes it due too).
    await store.db.query(
      `INSERT INTO probe_schedule (connection_id, probe_name, last_slot_at)
       VALUES ($1, $2, least(now() - interval '1800.5 seconds', to_timestamp(floor(date_part('epoch', now()) / 3600) * 3600) - interval '1 millisecond'))`,
      [id, candidate.probe],
    );
    expect(await claimDue(store.db, [candidate])).toEqual([candidate]);
  });

  it("claims a probe once per slot, and again where a claim lapsed without a finished run", async () => {
    const candidate = { connectionId, probe: "pg_stat_database", intervalSeconds: 3600 };
    // Last finished two hours ago: due.
    await store.db.query("INSERT INTO probe_schedule (connection_id, probe_name, last_slot_at) VALUES ($1, $2, now() - interval '2 hours')", [
      connectionId,
      candidate.probe,
    ]);
    expect(await claimDue(store.db, [candidate])).toEqual([candidate]);
    // Claimed and not finished: another instance leaves it alone until the lease lapses, then takes it over.
    expect(await claimDue(store.db, [candidate])).toEqual([]);
    await store.db.query("UPDATE probe_schedule SET claimed_until = now() - interval '1 second' WHERE connection_id = $1", [connectionId]);
    expect(await claimDue(store.db, [candidate])).toEqual([candidate]);
    const [{ claimed_at }] = await store.db.query<{ claimed_at: Date }>("SELECT claimed_at FROM probe_schedule WHERE connection_id = $1", [connectionId]);
    // The run finishes: its slot is done, as of the datastore's time of its claim, not the collector's clock.
    await recordOutcomes(store.db, [{ ...candidate, status: "ok", collectedAt: new Date(Date.now() + 3_600_000), rows: 1 }]);
    const [row] = await store.db.query<{ last_slot_at: Date }>("SELECT last_slot_at FROM probe_schedule WHERE connection_id = $1", [connectionId]);
    expect(row.last_slot_at.getTime()).toBe(claimed_at.getTime());
    expect(await claimDue(store.db, [candidate])).toEqual([]);
  });
});
