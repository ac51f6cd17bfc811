/**
 * Anomaly tiers 2-3 on a real datastore (PGlite, with pgvector) and local wire-format LLM servers: a day of
 * steady commits, then a burst the tier-1 z-score flags. The LLM's classification decides; a suppressed
 * anomaly's like is suppressed again by similarity without asking; a failing LLM alerts; a false-positive
 * mark silences the key; a review is reused instead of asking every round. LLM calls are counted.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { alerterOnce, evaluateAndApply } from "../../src/alerts/alerter.ts";
import { anomalyReviewer } from "../../src/alerts/anomaly-reviewer.ts";
import { refreshBaselines } from "../../src/alerts/baseline-store.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { resolveConfig } from "../../src/config.ts";
import { acknowledgeAlert } from "../../src/datastore/alerts.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { type TestDatastore, addConnection, migratedDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { KEYS, type WireServer, llmSection, startWireServer } from "../support/llm-wire.ts";
import { TEST_SECRET, quietLog } from "../support/monitored.ts";

const STEP = 300_000;
const METRIC = "pg_stat_database.xact_commit_per_sec";
let wire: WireServer;
let store: TestDatastore;
let conn: number;
let commits = 1_000_000;
let lastT = 0;

async function write(t: number, added: number) {
  commits += added;
  lastT = t;
  await writeSamples(store.db, {
    connectionId: conn,
    probe: "pg_stat_database",
    rows: [{ collected_at: new Date(t), database_name: "app", datname: "app", numbackends: 5, xact_commit: commits, stats_reset: "2026-01-01T00:00:00Z" }],
  });
}

/** OpenAI for chat (the given model) and embeddings, pointed at the wire server. */
const llm = (model: string, key = KEYS.openai, extra: Record<string, unknown> = {}) =>
  llmSection(wire, { openai: key }, { model, embedding: { model: "text-embedding-3-small" }, ...extra });
const round = (model: string, key?: string) => evaluateAndApply(store.db, new Date(), anomalyReviewer(store.db, llm(model, key), quietLog));
const chatCalls = () => wire.requests.filter((r) => r.path.endsWith("/chat/completions"));
const embedCalls = () => wire.requests.filter((r) => r.path.endsWith("/embeddings"));
const reviews = () =>
  store.db.query<{ decision: string; decided_by: string; tier2_score: number | null; tier3_result: any; has_vector: boolean }>(
    "SELECT decision, decided_by, tier2_score, tier3_result, embedding IS NOT NULL AS has_vector FROM anomaly_reviews ORDER BY id",
  );
const openAnomalies = () =>
  store.db.query<{ id: number; status: string; anomaly_details: any }>(
    "SELECT id::int, status, anomaly_details FROM alerts WHERE alert_type = 'anomaly' AND cleared_at IS NULL",
  );

beforeAll(async () => {
  wire = await startWireServer();
  store = await migratedDatastore("pglite");
  conn = await addConnection(store.db, "busy");
  await store.db.query("UPDATE connections SET is_monitored = true WHERE id = $1", [conn]);
  // A day of 5-minute samples ending three steps ago; each test adds one burst sample a step later.
  const end = Date.now() - 3 * STEP;
  const steps = 288;
  for (let i = 0; i <= steps; i++) await write(end - (steps - i) * STEP, i === 0 ? 0 : 300 + ((i * 37) % 121) - 60);
  expect(await refreshBaselines(store.db)).toBeGreaterThan(0);
  await write(lastT + STEP, 30_000); // 100 commits a second instead of about 1
}, 120_000);
afterAll(async () => {
  await wire.close();
  await store.close();
});
beforeEach(async () => {
  await store.db.query("DELETE FROM anomaly_reviews");
  await store.db.query("DELETE FROM alerts");
  wire.requests.length = 0;
});

describe("anomaly review (tiers 2-3)", () => {
  it("alerts without review when no LLM is configured; alerterOnce asks the configured LLM and forgets reviews past the retention", async () => {
    expect((await evaluateAndApply(store.db)).raised).toHaveLength(1);
    await store.db.query("DELETE FROM alerts");
    const config = resolveConfig(
      { llm: { providers: { openai: { api_key: KEYS.openai, base_url: wire.baseUrl("openai") } }, model: "judge-suppress" } },
      { PGLENS_SECRET: TEST_SECRET },
    );
    // A review older than the alert retention (90 days) goes with the old alerts.
    await store.db.query(
      `INSERT INTO anomaly_reviews (connection_id, database_name, metric_name, metric_value, z_score, description, decision, decided_by, reviewed_at)
       VALUES ($1, 'app', 'old', 1, 9, 'old', 'suppress', 'llm', now() - interval '91 days')`,
      [conn],
    );
    const result = await alerterOnce(store.db, config, quietLog);
    expect(result).toMatchObject({ ran: true, raised: [] });
    expect(chatCalls()).toHaveLength(1);
    expect((await reviews()).map((r) => r.decided_by)).toEqual(["llm"]);
  });

  it("sends the candidate's facts to the LLM and follows its suppress; the review is kept with its vector and reused next round", async () => {
    expect((await round("judge-suppress")).raised).toEqual([]);
    const [call] = chatCalls();
    const prompt = JSON.stringify(call.body.messages);
    for (const fact of ["busy", "app", METRIC, '\\"z_score\\"', '\\"baseline\\"', "harmless variation"]) expect(prompt).toContain(fact);
    expect(await reviews()).toEqual([
      {
        decision: "suppress",
        decided_by: "llm",
        tier2_score: null,
        tier3_result: { decision: "suppress", confidence: 0.9, reasoning: "the nightly batch does this", read_as: "json" },
        has_vector: true,
      },
    ]);
    expect((await round("judge-alert")).raised).toEqual([]);
    expect(chatCalls()).toHaveLength(1);
    expect(await reviews()).toHaveLength(1);
  });

  it("suppresses by similarity to a suppressed past anomaly, without asking the LLM, once the old review is no longer reused", async () => {
    await round("judge-suppress");
    await store.db.query("UPDATE anomaly_reviews SET reviewed_at = now() - interval '2 hours'");
    expect((await round("judge-alert")).raised).toEqual([]);
    expect(chatCalls()).toHaveLength(1);
    expect(embedCalls()).toHaveLength(2);
    expect((await reviews())[1]).toMatchObject({ decision: "suppress", decided_by: "similarity", tier2_score: 1 });
  });

  it("alerts when the LLM says so, with the review in the alert's anomaly details, and shows similar past reviews to the LLM", async () => {
    await round("judge-suppress");
    // The past review now says alert, so similarity does not suppress; the LLM is asked and sees it.
    await store.db.query("UPDATE anomaly_reviews SET reviewed_at = now() - interval '2 hours', decision = 'alert'");
    expect((await round("judge-alert")).raised).toHaveLength(1);
    const past = JSON.parse(chatCalls()[1].body.messages.at(-1).content.split("\n")[1]).similar_past_reviews;
    expect(past).toEqual([{ description: expect.stringContaining(METRIC), decision: "alert", similarity: 1, marked_false_positive: false }]);
    const [alert] = await openAnomalies();
    expect(alert.anomaly_details).toMatchObject({
      z_score: expect.any(Number),
      decided_by: "llm",
      tier2_score: 1,
      tier3_result: { decision: "alert", read_as: "json" },
    });
    const root = (await userWithToken(store.db, "root", { superuser: true })).token;
    const listed = (await client(testApp(store.db).app)("GET", `/api/v1/alerts?alert_type=anomaly`, { token: root })).body.alerts[0];
    expect(listed.anomaly_details).toMatchObject({
      decided_by: "llm",
      tier2_score: 1,
      tier3_result: { decision: "alert", confidence: 0.8, reasoning: "nothing explains it" },
    });
  });

  it("alerts when the LLM fails (fail-safe) or suppresses with low confidence", async () => {
    expect((await round("judge-suppress", "reject-this-key")).raised).toHaveLength(1);
    expect((await reviews())[0]).toMatchObject({ decision: "alert", decided_by: "fail_safe", tier3_result: { error: expect.stringContaining("openai") } });
    expect(JSON.stringify(await reviews())).not.toContain("reject-this-key");
    await store.db.query("DELETE FROM anomaly_reviews");
    await store.db.query("DELETE FROM alerts");
    expect((await round("judge-unsure")).raised).toHaveLength(1);
    expect((await reviews())[0]).toMatchObject({ decision: "alert", decided_by: "llm", tier3_result: { decision: "suppress", confidence: 0.2 } });
  });

  it("a false-positive mark overrules the last review: the key is suppressed and its alert cleared, without asking the LLM", async () => {
    const [id] = (await round("judge-alert")).raised;
    await acknowledgeAlert(store.db, id, "ann", "the nightly batch", true);
    const next = await round("judge-alert");
    expect(next.cleared).toEqual([id]);
    expect(chatCalls()).toHaveLength(1);
    expect((await reviews()).map((r) => r.decided_by)).toEqual(["llm", "false_positive"]);
  });

  it("with llm.anomaly_review false, nothing is sent and the anomaly alerts", async () => {
    const reviewer = anomalyReviewer(store.db, llm("judge-suppress", KEYS.openai, { anomaly_review: false }), quietLog);
    expect((await evaluateAndApply(store.db, new Date(), reviewer)).raised).toHaveLength(1);
    expect(wire.requests).toEqual([]);
  });

  it("two alerters at once review each candidate once", async () => {
    await store.db.query("UPDATE maintenance_runs SET last_run_at = NULL, claimed_until = NULL");
    const config = resolveConfig(
      { llm: { providers: { openai: { api_key: KEYS.openai, base_url: wire.baseUrl("openai") } }, model: "judge-alert" } },
      { PGLENS_SECRET: TEST_SECRET },
    );
    const rounds = await Promise.all([alerterOnce(store.db, config, quietLog), alerterOnce(store.db, config, quietLog)]);
    expect(rounds.map((r) => r.ran).sort()).toEqual([false, true]);
    expect(chatCalls()).toHaveLength(1);
    expect(await reviews()).toHaveLength(1);
    expect(await openAnomalies()).toHaveLength(1);
  });
});
