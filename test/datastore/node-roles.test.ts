/**
 * What replication clusters are detected from: each connection's latest pg_node_role and pg_subscription_upstream
 * sample of the last day, raw or in a compressed hour; older ones and earlier samples left out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { latestNodeRoles, latestSubscriptions } from "../../src/datastore/node-roles.ts";
import { findProbe } from "../../src/probes/index.ts";
import { compressChunk } from "../../src/samples/compress-history.ts";
import { type SampleRow, writeSamples } from "../../src/samples/sample-writer.ts";
import { addConnection, DATASTORE_KINDS, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

const HOUR = 3_600_000;
const MINUTE = 60_000;

describe.each(DATASTORE_KINDS)("the latest node roles and subscriptions (%s)", (kind) => {
  let store: TestDatastore;
  const ids: Record<string, number> = {};
  const iso = (t: number) => new Date(t).toISOString();
  const role = (t: number, sender: string | null) => ({
    collected_at: iso(t),
    is_in_recovery: sender !== null,
    system_identifier: "7001",
    sender_host: sender,
    sender_port: sender ? 5432 : null,
  });
  const subscription = (t: number, subname: string, publisher: string) => ({ collected_at: iso(t), subname, publisher_host: publisher, publisher_port: 5433 });

  beforeAll(async () => {
    store = await migratedDatastore(kind);
    // An hour that closed three hours ago, compressed as a running pglens keeps it.
    const hour = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
    for (const name of ["compressed", "raw", "stale", "none"]) ids[name] = await addConnection(store.db, `roles-${name}`);
    const write = (name: string, probe: string, rows: SampleRow[]) => writeSamples(store.db, { connectionId: ids[name], probe, rows });
    await write("compressed", "pg_node_role", [role(hour, "old-primary"), role(hour + 5 * MINUTE, "primary-a")]);
    await write("compressed", "pg_subscription_upstream", [
      subscription(hour, "s0", "gone"),
      subscription(hour + 5 * MINUTE, "s1", "pub-1"),
      subscription(hour + 5 * MINUTE, "s2", "pub-2"),
    ]);
    for (const probe of ["pg_node_role", "pg_subscription_upstream"]) await compressChunk(store.db, findProbe(probe)!, ids.compressed, hour);
    await write("raw", "pg_node_role", [role(Date.now() - 20 * MINUTE, "primary-b"), role(Date.now() - 10 * MINUTE, null)]);
    await write("raw", "pg_subscription_upstream", [subscription(Date.now() - 10 * MINUTE, "s3", "pub-3")]);
    await write("stale", "pg_node_role", [role(Date.now() - 2 * 24 * HOUR, "primary-c")]);
    await write("stale", "pg_subscription_upstream", [subscription(Date.now() - 2 * 24 * HOUR, "s4", "pub-4")]);
  }, 60_000);
  afterAll(() => store.close());

  it("gives each connection's latest node role of the last day, from a compressed hour or raw rows", async () => {
    const roles = await latestNodeRoles(store.db);
    expect(roles.map(({ connection_id, is_in_recovery, sender_host, sender_port }) => ({ connection_id, is_in_recovery, sender_host, sender_port }))).toEqual([
      { connection_id: ids.compressed, is_in_recovery: true, sender_host: "primary-a", sender_port: 5432 },
      { connection_id: ids.raw, is_in_recovery: false, sender_host: null, sender_port: null },
    ]);
    expect(roles[0]).toMatchObject({ host: "localhost", system_identifier: "7001" });
  });

  it("gives the subscriptions of each connection's latest sample of the last day", async () => {
    const subscriptions = await latestSubscriptions(store.db);
    expect(subscriptions.sort((a, b) => `${a.publisher_host}`.localeCompare(`${b.publisher_host}`))).toEqual([
      { connection_id: ids.compressed, publisher_host: "pub-1", publisher_port: 5433 },
      { connection_id: ids.compressed, publisher_host: "pub-2", publisher_port: 5433 },
      { connection_id: ids.raw, publisher_host: "pub-3", publisher_port: 5433 },
    ]);
  });
});
