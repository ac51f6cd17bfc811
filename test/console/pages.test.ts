/**
 * The console as people meet it, in a real Chromium over the real app on the demo: the estate lists the demo
 * server with its open alert; the server page draws every chart from the API with data, switches range and
 * breakdown, shows the API's message where a chart cannot be drawn, its top statements, timeline and server
 * facts; no page logs an error, every page carries the CSP and passes axe-core without serious violations.
 * The alerts page filters and tells an alert's history; the blackouts page starts and stops a window for a user
 * with manage_blackouts, and refuses others (read-only, or not allowed to read the server) even when forged.
 * First paints are printed. With PGLENS_SCREENSHOTS=<dir>, the estate and server pages are saved there.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDemoConnection } from "../../src/cli/demo.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { addMember, createGroup, setAdminGrants, setConnectionGrants } from "../../src/datastore/groups.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { launchBrowser } from "../support/browser.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { KEYS, llmSection, startWireServer } from "../support/llm-wire.ts";
import { serveOnFreePort } from "../support/node-server.ts";

const PASSWORD = "a long enough passphrase 9";
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const SHOTS = process.env.PGLENS_SCREENSHOTS;
let store: TestDatastore;
let server: Awaited<ReturnType<typeof serveOnFreePort>>;
let browser: Browser;
let demoId: number;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  await userWithToken(store.db, "dba", { password: PASSWORD });
  const viewer = await userWithToken(store.db, "viewer", { password: PASSWORD });
  ({ id: demoId } = await createDemoConnection(store.db));
  await store.db.query("UPDATE connections SET is_shared = false, owner_user_id = (SELECT id FROM users WHERE username = 'dba')");
  const readers = await createGroup(store.db, "readers", "");
  await setConnectionGrants(store.db, readers.id, [{ connection_id: demoId, access_level: "read" }]);
  await addMember(store.db, readers.id, { type: "user", id: viewer.id });
  // May manage windows, but reads no server: may not silence the demo server.
  const outsider = await userWithToken(store.db, "outsider", { password: PASSWORD });
  const planners = await createGroup(store.db, "planners", "");
  await setAdminGrants(store.db, planners.id, ["manage_blackouts"]);
  await addMember(store.db, planners.id, { type: "user", id: outsider.id });
  const dbaGroup = await createGroup(store.db, "dbas", "");
  await setAdminGrants(store.db, dbaGroup.id, ["manage_blackouts"]);
  await addMember(store.db, dbaGroup.id, { type: "user", id: (await store.db.query<{ id: number }>("SELECT id FROM users WHERE username = 'dba'"))[0].id });
  server = await serveOnFreePort(testApp(store.db).app.fetch);
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await store?.close();
});

/** A signed-in page that collects console errors, and the first paint of each page it opens. */
async function signedIn(user: string, path: string, checkSignInPage = false) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${server.url}/sign-in?next=${encodeURIComponent(path)}`);
  if (checkSignInPage) expect(await axeViolations(page)).toEqual([]);
  await page.fill("input[name=username]", user);
  await page.fill("input[name=password]", PASSWORD);
  await Promise.all([page.waitForURL(`${server.url}${path}`), page.click("button[type=submit]")]);
  return { page, errors };
}

const firstPaint = (page: Page) => page.evaluate(() => performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null);

async function axeViolations(page: Page) {
  await page.evaluate(AXE); // through the DevTools protocol: the page's CSP rightly refuses inline script
  const result = await page.evaluate(() =>
    (window as unknown as { axe: { run: () => Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe.run(),
  );
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes)`);
}

const chartStates = (page: Page) =>
  page.$$eval("figure[data-chart]", (figures) =>
    figures.map((f) => ({ chart: f.getAttribute("data-chart"), state: f.getAttribute("data-state"), points: f.getAttribute("data-points") })),
  );

/** The charts once each has ended (drawn, empty or an error); polled from here, as in-page polling needs eval, which the CSP refuses. */
async function allCharts(page: Page) {
  for (let waited = 0; waited < 30_000; waited += 100) {
    const states = await chartStates(page);
    if (states.length && states.every((c) => c.state !== null)) return states;
    await page.waitForTimeout(100);
  }
  throw new Error(`charts did not finish: ${JSON.stringify(await chartStates(page))}`);
}

describe("the estate page", () => {
  it("lists the demo server as a demo with its open alert, a day of transactions and its last sample", async () => {
    const { page, errors } = await signedIn("dba", "/", true);
    const answer = await page.reload();
    expect(answer?.headers()["content-security-policy"]).toContain("script-src 'self'");
    const row = page.locator(`tr[data-server="${demoId}"]`);
    expect(await row.locator(".status").textContent()).toBe("demo");
    expect(await row.textContent()).toContain("1 warning");
    expect(Number(await row.locator("svg.sparkline").getAttribute("data-points"))).toBeGreaterThan(40);
    expect(await row.textContent()).toMatch(/\d+ (s|min) ago/);
    console.log(`estate page first paint: ${await firstPaint(page)} ms`);
    expect(await axeViolations(page)).toEqual([]);
    if (SHOTS)
      await page.screenshot({
        path: join(SHOTS, "estate.png"),
        fullPage: true,
        clip: { x: 0, y: 0, width: 1280, height: await page.evaluate(() => Math.ceil(document.querySelector("main")!.getBoundingClientRect().bottom) + 24) },
      });
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe("the estate page with an LLM configured", () => {
  it("shows the AI overview the API writes, loaded after the table", async () => {
    const wire = await startWireServer();
    const withLlm = await serveOnFreePort(testApp(store.db, { config: { llm: llmSection(wire, { anthropic: KEYS.anthropic }) } }).app.fetch);
    try {
      const page = await browser.newPage();
      await page.goto(`${withLlm.url}/sign-in?next=/`);
      await page.fill("input[name=username]", "viewer");
      await page.fill("input[name=password]", PASSWORD);
      await Promise.all([page.waitForResponse((r) => r.url().endsWith("/api/v1/overview")), page.click("button[type=submit]")]);
      for (let i = 0; i < 50 && (await page.textContent("#overview p"))?.startsWith("Asking"); i++) await page.waitForTimeout(100);
      const summary = await page.textContent("#overview p");
      expect(wire.requests.some((r) => r.path.endsWith("/messages"))).toBe(true);
      expect(summary).toContain("demo-");
      await page.close();
    } finally {
      await withLlm.close();
      await wire.close();
    }
  });
});

describe("the server page", { timeout: 90_000 }, () => {
  it("draws every chart from the API with data, one request per chart, and shows the day's events", async () => {
    const requests: string[] = [];
    const { page, errors } = await signedIn("dba", `/servers/${demoId}`);
    page.on("request", (r) => r.url().includes("/api/v1/") && requests.push(r.url()));
    await page.reload();
    const charts = await allCharts(page);
    expect(charts.map((c) => c.chart)).toEqual(["transactions", "sessions", "cache-hit", "read-time", "wal", "temp", "deadlocks"]);
    for (const c of charts) {
      expect(c.state, c.chart!).toBe("drawn");
      for (const n of c.points!.split(",")) expect(Number(n), c.chart!).toBeGreaterThan(10);
    }
    expect(requests.length).toBe(charts.length);
    expect(requests.every((u) => u.includes("/api/v1/metrics/query?") && u.includes("time_range=24h"))).toBe(true);
    const timeline = await page.$$eval("li[data-event]", (items) => items.map((i) => i.getAttribute("data-event")));
    expect(new Set(timeline)).toEqual(new Set(["config_change", "restart", "alert_fired", "alert_cleared", "blackout_started", "blackout_ended"]));
    expect(await page.textContent("main")).toContain("SELECT * FROM orders WHERE customer_id = $1");
    expect(await page.textContent("main")).toContain("Dead rows on shop public.cart_items");
    expect(await page.textContent("dl")).toContain("17.2");
    console.log(`server page first paint: ${await firstPaint(page)} ms`);
    expect(await axeViolations(page)).toEqual([]);
    if (SHOTS)
      await page.screenshot({
        path: join(SHOTS, "server.png"),
        fullPage: true,
        clip: { x: 0, y: 0, width: 1280, height: await page.evaluate(() => Math.ceil(document.getElementById("charts")!.getBoundingClientRect().bottom) + 16) },
      });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("switching the range asks the API for the new window and redraws; per database splits the series", async () => {
    const { page } = await signedIn("viewer", `/servers/${demoId}`);
    await allCharts(page);
    const [week] = await Promise.all([
      page.waitForRequest((r) => r.url().includes("time_range=7d") && r.url().includes("probe_name=pg_stat_wal")),
      page.click("a:text-is('7d')"),
    ]);
    expect(week.url()).toContain(`connection_id=${demoId}`);
    expect((await allCharts(page)).every((c) => c.state === "drawn")).toBe(true);
    await Promise.all([page.waitForRequest((r) => r.url().includes("group_by=database_name")), page.click("text=Per database")]);
    await allCharts(page);
    const legend = await page.textContent("figure[data-chart=transactions] .u-legend");
    for (const db of ["shop", "analytics", "postgres"]) expect(legend).toContain(`xact_commit_per_sec ${db}`);
    await page.close();
  });

  it("a chart the API refuses shows the API's message in its panel", async () => {
    const { page, errors } = await signedIn("viewer", `/servers/${demoId}`);
    // Ask the real API for a metric it refuses, as a chart of a server that lacks it would.
    await page.route("**/api/v1/metrics/query?*probe_name=pg_stat_wal*", (route) =>
      route.continue({ url: route.request().url().replace("wal_bytes_per_sec", "wal_buffers_full_pct") }),
    );
    await page.reload();
    await allCharts(page);
    const wal = page.locator("figure[data-chart=wal]");
    expect(await wal.getAttribute("data-state")).toBe("error");
    expect(await wal.locator(".error").textContent()).toContain("wal_buffers_full_pct");
    expect(errors.filter((e) => !e.includes("400"))).toEqual([]); // the browser reports the refused request itself
    await page.close();
  });

  it("charts replication lag only for a server with replication samples", async () => {
    const primary = await addConnection(store.db, "primary-1");
    await store.db.query("UPDATE connections SET is_shared = true WHERE id = $1", [primary]);
    const now = Date.now();
    const rows = [0, 1, 2].map((i) => ({
      collected_at: new Date(now - (3 - i) * 30_000).toISOString(),
      pid: 4242,
      role: "primary",
      application_name: "standby-1",
      replay_lag: 0.5 + i,
    }));
    await writeSamples(store.db, { connectionId: primary, probe: "pg_stat_replication", rows });
    const { page } = await signedIn("dba", `/servers/${primary}?range=1h`);
    const charts = await allCharts(page);
    expect(charts.find((c) => c.chart === "replication-lag")).toMatchObject({ state: "drawn" });
    const demo = await page.request.get(`${server.url}/servers/${demoId}`);
    expect(await demo.text()).not.toContain('data-chart="replication-lag"');
    await page.close();
  });

  it("a server the user cannot read is not found, and a custom range that does not parse says so", async () => {
    const { page } = await signedIn("viewer", `/servers/${demoId}?range=custom&from=2026-01-01T00:00&to=2025-01-01T00:00`);
    expect(await page.textContent("[role=alert]")).toContain("must be after");
    const answer = await page.goto(`${server.url}/servers/999999`);
    expect(answer?.status()).toBe(404);
    expect(await page.textContent("main")).toContain("Server 999999 was not found");
    await page.close();
  });
});

describe("the alerts page", () => {
  it("filters by status, severity and server, and tells an alert's rule and history", async () => {
    const { page, errors } = await signedIn("viewer", "/alerts");
    const titles = () => page.$$eval("tr[data-alert] a", (links) => links.map((a) => a.textContent));
    expect(await titles()).toEqual(["Dead rows on shop public.cart_items"]);
    expect(await axeViolations(page)).toEqual([]);
    await page.selectOption("select[name=status]", "all");
    await Promise.all([page.waitForURL(/status=all/), page.click("text=Filter")]);
    expect(await titles()).toEqual(["Dead rows on shop public.cart_items", "Server unreachable"]);
    await page.selectOption("select[name=severity]", "critical");
    await Promise.all([page.waitForURL(/severity=critical/), page.click("text=Filter")]);
    expect(await titles()).toEqual(["Server unreachable"]);
    await Promise.all([page.waitForURL(/\/alerts\/\d+$/), page.click("text=Server unreachable")]);
    expect(await page.textContent("main")).toContain("cleared: the server is reachable again");
    await page.goto(`${server.url}/alerts?server=${demoId}`);
    await Promise.all([page.waitForURL(/\/alerts\/\d+$/), page.click("text=Dead rows on shop public.cart_items")]);
    expect(await page.textContent("dl")).toContain("dead_tuple_ratio: A table holds a high share of dead rows");
    expect(await page.textContent("main")).toMatch(/History.*fired/s);
    expect(await axeViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe("the blackouts page", () => {
  const windows = async (page: Page) => {
    const answer = await page.request.get(`${server.url}/api/v1/blackouts?active=true`);
    return ((await answer.json()) as { blackouts: Array<{ id: number; reason: string; connection_id: number }> }).blackouts;
  };

  it("starts a window on a server and stops it early, as the API then reports", async () => {
    const { page, errors } = await signedIn("dba", "/blackouts");
    await page.selectOption("select[name=connection_id]", String(demoId));
    await page.selectOption("select[name=minutes]", "30");
    await page.fill("input[name=reason]", "VACUUM FULL on orders");
    await Promise.all([page.waitForURL(`${server.url}/blackouts`), page.click("button:text-is('Start')")]);
    const [started] = await windows(page);
    expect(started).toMatchObject({ reason: "VACUUM FULL on orders", connection_id: demoId });
    expect(await page.textContent(`tr[data-blackout="${started.id}"]`)).toContain("active");
    expect(await axeViolations(page)).toEqual([]);
    await Promise.all([page.waitForURL(`${server.url}/blackouts`), page.click(`tr[data-blackout="${started.id}"] >> text=Stop now`)]);
    expect(await windows(page)).toEqual([]);
    expect(await page.locator(`tr[data-blackout="${started.id}"]`).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows a read-only user no controls and refuses their forged posts; a planner cannot silence a server they cannot read", async () => {
    const count = async () => (await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM blackouts"))[0].n;
    const before = await count();
    const form = { connection_id: String(demoId), minutes: "60", reason: "forged" };
    const { page: viewer } = await signedIn("viewer", "/blackouts");
    expect(await viewer.locator("form.actions").count()).toBe(0);
    const forged = await viewer.request.post(`${server.url}/blackouts`, { form, headers: { "sec-fetch-site": "same-origin" }, maxRedirects: 0 });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain("needs the manage_blackouts permission");
    const { page: planner } = await signedIn("outsider", "/blackouts");
    expect(await planner.locator(`select[name=connection_id] option[value="${demoId}"]`).count()).toBe(0);
    const hidden = await planner.request.post(`${server.url}/blackouts`, { form, headers: { "sec-fetch-site": "same-origin" }, maxRedirects: 0 });
    expect(hidden.status()).toBe(404);
    expect(await hidden.text()).toContain(`connection ${demoId} not found`);
    const elsewhere = await planner.request.post(`${server.url}/blackouts`, { form, headers: { "sec-fetch-site": "cross-site" }, maxRedirects: 0 });
    expect(elsewhere.status()).toBe(403);
    expect(await count()).toBe(before);
    await viewer.close();
    await planner.close();
  });
});
