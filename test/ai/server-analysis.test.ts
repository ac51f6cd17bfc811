/**
 * GET /api/v1/server-info/{id}/ai-analysis: the LLM sees the server's collected facts and active alerts;
 * the analysis is written again only after a restart or a configuration change, or on refresh; callers
 * who cannot read the server get a 404 and cause no LLM call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitAnalysis } from "../../src/ai/server-analysis.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { KEYS, type WireServer, llmSection, startWireServer } from "../support/llm-wire.ts";

let wire: WireServer;
let store: TestDatastore;
let api: ReturnType<typeof client>;
let root: string;
let viewer: string;
let conn: number;
let quiet: number;

const calls = () => wire.requests.filter((r) => r.path.endsWith("/messages")).length;
const write = (probe: string, rows: Array<Record<string, unknown>>) => writeSamples(store.db, { connectionId: conn, probe, rows: rows as never });

async function sampleAt(at: string, sharedBuffers: string, started: string) {
  await write("pg_settings", [
    { collected_at: at, name: "server_version", setting: "17.10" },
    { collected_at: at, name: "shared_buffers", setting: sharedBuffers, unit: "8kB" },
  ]);
  await write("pg_stat_activity", [{ collected_at: at, pid: 10, backend_type: "checkpointer", backend_start: started }]);
  await write("pg_database", [{ collected_at: at, datname: "billing", database_size_bytes: 5e9, age_datfrozenxid: 1000, datistemplate: false }]);
}

beforeAll(async () => {
  wire = await startWireServer();
  store = await migratedDatastore("pglite");
  api = client(testApp(store.db, { config: { llm: llmSection(wire, { anthropic: KEYS.anthropic }) } }).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  viewer = (await userWithToken(store.db, "viewer")).token;
  conn = await addConnection(store.db, "billing-primary");
  quiet = await addConnection(store.db, "never-sampled");
  await sampleAt("2026-03-01T10:00:00Z", "16384", "2026-03-01T08:00:00Z");
  await store.db.query(
    "INSERT INTO alerts (alert_type, connection_id, severity, title, status, metric_name) VALUES ('threshold', $1, 'warning', 'cache hit ratio below 90%', 'active', 'x')",
    [conn],
  );
});
afterAll(async () => {
  await wire.close();
  await store.close();
});

describe("server AI analysis", () => {
  it("sends the server's facts and alerts, and answers from the shared cache until a restart or a settings change", async () => {
    const before = calls();
    const first = await api("GET", `/api/v1/server-info/${conn}/ai-analysis`, { token: root });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ connection_id: conn, status: "ready", llm: "configured", analysis: expect.stringMatching(/^echo: Server facts/) });
    const prompt = JSON.stringify(wire.requests.at(-1)!.body);
    for (const fact of ["billing-primary", "billing", "shared_buffers", "16384", "cache hit ratio below 90%"]) expect(prompt).toContain(fact);
    expect(calls() - before).toBe(1);

    expect((await api("GET", `/api/v1/server-info/${conn}/ai-analysis`, { token: root })).body.generated_at).toBe(first.body.generated_at);
    await sampleAt("2026-03-01T10:05:00Z", "16384", "2026-03-01T08:00:00Z"); // nothing changed
    await api("GET", `/api/v1/server-info/${conn}/ai-analysis`, { token: root });
    expect(calls() - before).toBe(1);

    await sampleAt("2026-03-01T10:10:00Z", "65536", "2026-03-01T08:00:00Z"); // configuration change
    expect((await api("GET", `/api/v1/server-info/${conn}/ai-analysis`, { token: root })).body.analysis).toContain("65536");
    expect(calls() - before).toBe(2);
    await sampleAt("2026-03-01T10:15:00Z", "65536", "2026-03-01T10:12:00Z"); // restart
    await api("GET", `/api/v1/server-info/${conn}/ai-analysis`, { token: root });
    expect(calls() - before).toBe(3);
    expect((await api("GET", `/api/v1/server-info/${conn}/ai-analysis?refresh=true`, { token: root })).status).toBe(429); // written just now
    await store.db.query("UPDATE overview_summaries SET generated_at = generated_at - interval '61 seconds'");
    expect((await api("GET", `/api/v1/server-info/${conn}/ai-analysis?refresh=true`, { token: root })).status).toBe(200);
    expect(calls() - before).toBe(4);
  });

  it("says no_data before the collector has sampled the server, unconfigured without an LLM, disabled when switched off", async () => {
    const before = calls();
    expect((await api("GET", `/api/v1/server-info/${quiet}/ai-analysis`, { token: root })).body).toEqual({
      connection_id: quiet,
      status: "no_data",
      analysis: null,
      databases: {},
      generated_at: null,
      llm: "configured",
    });
    const plain = client(testApp(store.db).app);
    expect((await plain("GET", `/api/v1/server-info/${conn}/ai-analysis`, { token: root })).body).toMatchObject({ analysis: null, llm: "unconfigured" });
    const off = client(testApp(store.db, { config: { llm: llmSection(wire, { anthropic: KEYS.anthropic }, { server_analysis: false }) } }).app);
    expect((await off("GET", `/api/v1/server-info/${conn}/ai-analysis?refresh=true`, { token: root })).body).toMatchObject({ analysis: null, llm: "disabled" });
    expect(calls()).toBe(before);
  });

  it("answers each database's likely purpose beside the prose, keeping only databases the server has", async () => {
    const analyst = client(testApp(store.db, { config: { llm: llmSection(wire, { anthropic: KEYS.anthropic }, { model: "analyst" }) } }).app);
    const ledger = await addConnection(store.db, "ledger");
    const at = "2026-03-01T10:00:00Z";
    for (const [probe, rows] of [
      ["pg_settings", [{ collected_at: at, name: "server_version", setting: "17.10" }]],
      ["pg_database", [{ collected_at: at, datname: "billing", database_size_bytes: 5e9, age_datfrozenxid: 1000, datistemplate: false }]],
    ] as const)
      await writeSamples(store.db, { connectionId: ledger, probe, rows: rows as never });
    const res = await analyst("GET", `/api/v1/server-info/${ledger}/ai-analysis`, { token: root });
    expect(res.status, res.text).toBe(200);
    expect(res.body.analysis).toBe("- shared_buffers is small for 8 GB: raise it to 2GB.");
    expect(res.body.databases).toEqual({ billing: "invoices and payments" });
    // Cached with the analysis: read again without a call.
    const before = calls();
    expect((await analyst("GET", `/api/v1/server-info/${ledger}/ai-analysis`, { token: root })).body.databases).toEqual({ billing: "invoices and payments" });
    expect(calls()).toBe(before);
    // A model that leaves out the section gives its whole answer as prose and no purposes.
    expect(splitAnalysis("just prose\nbilling: payments", ["billing"])).toEqual({ analysis: "just prose\nbilling: payments", databases: {} });
    expect(splitAnalysis("x\nDATABASES:\n* billing : a\nbilling: b", ["billing"]).databases).toEqual({ billing: "a" });
  });

  it("is a 404 for a server the caller cannot read, with no LLM call", async () => {
    const before = calls();
    expect((await api("GET", `/api/v1/server-info/${conn}/ai-analysis?refresh=true`, { token: viewer })).status).toBe(404);
    expect((await api("GET", `/api/v1/server-info/${conn}/ai-analysis`)).status).toBe(401);
    expect(calls()).toBe(before);
  });
});
