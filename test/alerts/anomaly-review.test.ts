/** Tiers 2-3 of anomaly detection, pure: the description, the similarity verdict, reading the LLM's answer. */
import { describe, expect, it } from "vitest";
import { type ReviewCandidate, classificationDecision, describeCandidate, parseClassification, similarityVerdict } from "../../src/alerts/anomaly-review.ts";
import { anomalyReviewer } from "../../src/alerts/anomaly-reviewer.ts";
import { resolveConfig } from "../../src/config.ts";
import { quietLog } from "../support/monitored.ts";
import type { Driver } from "../../drivers/types.ts";

const baseline = { period_type: "hourly" as const, period_value: 3, mean: 1, stddev: 0.1, min: 0.8, max: 1.2, p50: 1, p95: 1.15, p99: 1.2, sample_count: 12 };
const candidate = (value: number, z: number): ReviewCandidate => ({
  connection_id: 1,
  database_name: "app",
  metric_name: "pg_stat_database.xact_commit_per_sec",
  value,
  anomaly: { z, severity: "critical", baseline },
  server_name: "busy",
});

describe("describeCandidate", () => {
  it("names the key, direction, size and period, and reads the same for the same kind of anomaly on another value", () => {
    expect(describeCandidate(candidate(100, 14.2))).toBe(
      'Anomaly on server "busy", database "app": pg_stat_database.xact_commit_per_sec far above its hourly baseline (14 standard deviations, critical)',
    );
    expect(describeCandidate(candidate(100.4, 13.9))).toBe(describeCandidate(candidate(100, 14.2)));
    expect(describeCandidate({ ...candidate(0, -12), database_name: "" })).toContain('server "busy": pg_stat_database.xact_commit_per_sec far below');
  });
});

describe("similarityVerdict", () => {
  const past = (similarity: number, decision: "alert" | "suppress", false_positive = false) => ({ description: "d", decision, similarity, false_positive });
  it("suppresses only when the most similar review is close enough and was suppressed or marked a false positive", () => {
    expect(similarityVerdict([])).toEqual({ suppress: false, score: null });
    expect(similarityVerdict([past(0.9, "suppress")])).toEqual({ suppress: true, score: 0.9 });
    expect(similarityVerdict([past(0.84, "suppress")])).toEqual({ suppress: false, score: 0.84 });
    expect(similarityVerdict([past(0.95, "alert"), past(0.9, "suppress")])).toEqual({ suppress: false, score: 0.95 });
    expect(similarityVerdict([past(0.95, "alert", true)])).toEqual({ suppress: true, score: 0.95 });
  });
});

describe("parseClassification and classificationDecision", () => {
  it("reads the JSON asked for, also inside prose, clamping the confidence", () => {
    expect(parseClassification('{"decision":"suppress","confidence":0.9,"reasoning":"batch"}')).toEqual({
      decision: "suppress",
      confidence: 0.9,
      reasoning: "batch",
      read_as: "json",
    });
    expect(parseClassification('Sure: {"decision": "ALERT", "confidence": 7} done')).toEqual({
      decision: "alert",
      confidence: 1,
      reasoning: "",
      read_as: "json",
    });
  });

  it("falls back to keywords, and to an alert when the answer says neither", () => {
    expect(parseClassification("I would suppress this one.")).toMatchObject({ decision: "suppress", confidence: null, read_as: "keywords" });
    expect(parseClassification("Suppressing would hide it; alert the DBA.")).toMatchObject({ decision: "alert", read_as: "keywords" });
    expect(parseClassification('{"decision":"maybe"} hmm')).toMatchObject({ decision: "alert", read_as: "unreadable" });
    expect(parseClassification("")).toMatchObject({ decision: "alert", read_as: "unreadable" });
  });

  it("does not trust a suppress stated with low confidence", () => {
    expect(classificationDecision({ decision: "suppress", confidence: 0.49, reasoning: "", read_as: "json" })).toBe("alert");
    expect(classificationDecision({ decision: "suppress", confidence: 0.5, reasoning: "", read_as: "json" })).toBe("suppress");
    expect(classificationDecision({ decision: "suppress", confidence: null, reasoning: "", read_as: "keywords" })).toBe("suppress");
    expect(classificationDecision({ decision: "alert", confidence: 1, reasoning: "", read_as: "json" })).toBe("alert");
  });
});

describe("anomalyReviewer", () => {
  const db = {} as Driver;
  const llm = (section: Record<string, unknown>) => resolveConfig({ llm: section }, {}).llm;
  it("is absent without a chat or embedding provider, or when llm.anomaly_review is false", () => {
    expect(anomalyReviewer(db, llm({}), quietLog)).toBeUndefined();
    expect(anomalyReviewer(db, llm({ providers: { anthropic: { api_key: "k" } }, anomaly_review: false }), quietLog)).toBeUndefined();
    expect(anomalyReviewer(db, llm({ providers: { anthropic: { api_key: "k" } } }), quietLog)).toBeTypeOf("function");
    expect(resolveConfig({}, { PGLENS_LLM_ANOMALY_REVIEW: "false" }).llm.anomaly_review).toBe(false);
  });
});
