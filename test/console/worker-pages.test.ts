/**
 * The console's pages render on Workers (workerd via Miniflare) from the same code as on Node: sign in, open
 * alerts, the estate and a server page, the chart library and page scripts from the bundle, a chart's API request.
 */
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { createDemoConnection } from "../../src/cli/demo.ts";
import { readConsoleAssets } from "../../src/console/assets-node.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { addConnection } from "../support/datastore.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { startWorker, type TestWorker } from "../support/worker.ts";

const PASSWORD = "workers admin passphrase";
let database: { url: string; drop(): Promise<void> };
let db: Driver;
let worker: TestWorker;
let demoId: number;

beforeAll(async () => {
  database = await createTestDatabase(inject("pg17Url"));
  db = openPg(database.url);
  await migrate(db);
  const conn = await addConnection(db, "edge-db");
  await db.query(
    "INSERT INTO alerts (alert_type, connection_id, severity, title, status, metric_name) VALUES ('threshold', $1, 'warning', 'replication lag on edge-db', 'active', 'm')",
    [conn],
  );
  ({ id: demoId } = await createDemoConnection(db));
  worker = await startWorker({ PGLENS_DATASTORE_URL: database.url, PGLENS_ADMIN_USERNAME: "admin", PGLENS_ADMIN_PASSWORD: PASSWORD });
});
afterAll(async () => {
  await worker.dispose();
  await db.close();
  await database.drop();
});

async function signIn(): Promise<string> {
  const signedIn = await worker.fetch("/sign-in", {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
    body: new URLSearchParams({ username: "admin", password: PASSWORD, next: "/" }).toString(),
  });
  return signedIn.headers.get("set-cookie")!.split(";")[0];
}

it("shows the estate and a server page, and serves the charts' files and data", async () => {
  const cookie = await signIn();
  const estate = await worker.fetch("/", { headers: { cookie } });
  expect(estate.headers.get("content-security-policy")).toContain("script-src 'self'");
  expect(await estate.text()).toMatch(new RegExp(`<tr data-server="${demoId}">.*status-demo.*data-points="4\\d"`, "s"));
  const server = await (await worker.fetch(`/servers/${demoId}?range=7d`, { headers: { cookie } })).text();
  expect(server).toContain('data-window="time_range=7d"');
  expect(server).toContain("Dead rows on shop public.cart_items");
  const assets = readConsoleAssets();
  for (const name of ["uplot.js", "charts.js"] as const) {
    const file = await worker.fetch(`/console/assets/${name}`);
    expect(file.headers.get("content-type")).toContain("javascript");
    expect(await file.text()).toBe(assets[name]);
  }
  const chart = await worker.fetch(`/api/v1/metrics/query?connection_id=${demoId}&time_range=24h&probe_name=pg_stat_wal&metrics=wal_bytes_per_sec`, {
    headers: { cookie },
  });
  const [series] = (await chart.json()) as Array<{ data: Array<{ value: number | null }> }>;
  expect(series.data.filter((p) => p.value !== null).length).toBeGreaterThan(100);
});

it("signs in with a form and shows the open alerts, under the same CSP", async () => {
  const page = await worker.fetch("/alerts", { redirect: "manual" });
  expect(page.status).toBe(303);
  expect(page.headers.get("location")).toBe("/sign-in?next=%2Falerts");
  const form = await worker.fetch("/sign-in?next=%2Falerts");
  expect(form.headers.get("content-security-policy")).toContain("default-src 'none'");
  expect(await form.text()).toMatch(/^<!DOCTYPE html><html lang="en">.*<form class="sign-in" method="post" action="\/sign-in">/s);
  const signedIn = await worker.fetch("/sign-in", {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
    body: new URLSearchParams({ username: "admin", password: PASSWORD, next: "/alerts" }).toString(),
  });
  expect(signedIn.status).toBe(303);
  const cookie = signedIn.headers.get("set-cookie")!.split(";")[0];
  const alerts = await worker.fetch("/alerts", { headers: { cookie } });
  expect(alerts.status).toBe(200);
  expect(await alerts.text()).toContain("replication lag on edge-db");
  const forged = await worker.fetch("/sign-in", {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "cross-site" },
    body: new URLSearchParams({ username: "admin", password: PASSWORD }).toString(),
  });
  expect(forged.status).toBe(403);
  const nul = await worker.fetch("/sign-in", {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
    body: new URLSearchParams({ username: "admin\u0000", password: PASSWORD }).toString(),
  });
  expect(nul.status).toBe(400);
  expect(await nul.text()).toContain("cannot store (NUL)");
});
