/**
 * The demo's day holds every kind of thing the console shows (#48): an alert that fired and cleared, one still
 * open, a configuration change, a restart and a maintenance window; the alerter leaves that history alone (the
 * demo server is not monitored), and the overview calls the server a demo rather than online.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { estateSnapshot } from "../../src/ai/estate-snapshot.ts";
import { alerterOnce } from "../../src/alerts/alerter.ts";
import { createDemoConnection } from "../../src/cli/demo.ts";
import { listConnections } from "../../src/datastore/connections.ts";
import { EVENT_TYPES, timelineEvents } from "../../src/timeline/events.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { monitoringConfig, quietLog } from "../support/monitored.ts";

let store: TestDatastore;
let id: number;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  ({ id } = await createDemoConnection(store.db));
}, 60_000);
afterAll(() => store?.close());

const openAlerts = async () => (await store.db.query<{ title: string }>("SELECT title FROM alerts WHERE cleared_at IS NULL")).map((a) => a.title);

it("the demo's day has every kind of event on its timeline", async () => {
  const now = new Date();
  const visible = { connections: [id], clusters: [], groups: [] };
  const events = await timelineEvents(store.db, {
    connectionIds: [id],
    names: new Map([[id, "demo"]]),
    visible,
    from: new Date(now.getTime() - 86_400_000 - 60_000),
    to: now,
    types: new Set(EVENT_TYPES),
  });
  expect(new Set(events.map((e) => e.event_type))).toEqual(
    new Set(["config_change", "restart", "alert_fired", "alert_cleared", "blackout_started", "blackout_ended"]),
  );
  expect(events.find((e) => e.event_type === "config_change" && e.summary.includes("work_mem"))).toBeDefined();
});

it("an alerter round leaves the demo's open alert open: nothing judges a server pglens does not monitor", async () => {
  expect(await openAlerts()).toEqual(["Dead rows on shop public.cart_items"]);
  await alerterOnce(store.db, monitoringConfig, quietLog);
  expect(await openAlerts()).toEqual(["Dead rows on shop public.cart_items"]);
});

it("the overview's snapshot calls the demo server a demo, not online", async () => {
  const snapshot = await estateSnapshot(store.db, await listConnections(store.db), { connections: [id], clusters: [], groups: [] });
  expect(snapshot.servers).toEqual([expect.objectContaining({ id, status: "demo" })]);
  expect(snapshot.server_online).toBe(0);
});
