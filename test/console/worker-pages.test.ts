/** The console's pages render on Workers (workerd via Miniflare) from the same code as on Node: sign in, open alerts. */
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { addConnection } from "../support/datastore.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { startWorker, type TestWorker } from "../support/worker.ts";

const PASSWORD = "workers admin passphrase";
let database: { url: string; drop(): Promise<void> };
let db: Driver;
let worker: TestWorker;

beforeAll(async () => {
  database = await createTestDatabase(inject("pg17Url"));
  db = openPg(database.url);
  await migrate(db);
  const conn = await addConnection(db, "edge-db");
  await db.query("INSERT INTO alerts (alert_type, connection_id, severity, title, status, metric_name) VALUES ('threshold', $1, 'warning', 'replication lag on edge-db', 'active', 'm')", [conn]);
  worker = await startWorker({ PGLENS_DATASTORE_URL: database.url, PGLENS_ADMIN_USERNAME: "admin", PGLENS_ADMIN_PASSWORD: PASSWORD });
});
afterAll(async () => {
  await worker.dispose();
  await db.close();
  await database.drop();
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
