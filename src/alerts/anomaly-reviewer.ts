/**
 * The I/O shell of anomaly tiers 2-3: for each tier-1 candidate, reuse a recent review of its key, else
 * suppress it when its key was lately marked a false positive, else compare it with similar past reviews
 * (embedding + pgvector), else ask the default chat model. A failing LLM means an alert. Each new review is
 * stored, so the next similar candidate can be compared with it.
 */
import type { Queryable } from "../../drivers/types.ts";
import { askForText } from "../ai/shared-summary.ts";
import {
  type NewReview,
  type ReviewRow,
  type SimilarReview,
  hasReviewEmbeddings,
  reviewState,
  saveReview,
  similarReviews,
} from "../datastore/anomaly-reviews.ts";
import { embedTexts } from "../llm/embed.ts";
import type { LlmConfig } from "../llm-config.ts";
import { choose, defaultProvider } from "../llm/providers.ts";
import type { Logger } from "../log.ts";
import {
  type AnomalyReview,
  CLASSIFY_PROMPT,
  CONSIDER_SIMILARITY,
  REVIEW_REUSE_MINUTES,
  type ReviewCandidate,
  SIMILAR_LIMIT,
  classificationDecision,
  classificationRequest,
  describeCandidate,
  parseClassification,
  similarityVerdict,
} from "./anomaly-review.ts";

export type AnomalyReviewer = (candidate: ReviewCandidate) => Promise<AnomalyReview>;

const outcome = (r: Pick<NewReview, "decision" | "decided_by" | "tier2_score" | "tier3_result">, reused = false): AnomalyReview => ({
  decision: r.decision,
  details: { decided_by: r.decided_by, tier2_score: r.tier2_score, tier3_result: r.tier3_result, ...(reused ? { reused_review: true } : {}) },
});

/** The reviewer, or undefined when llm.anomaly_review is off or no chat or embedding provider is configured. */
export function anomalyReviewer(db: Queryable, llm: LlmConfig, log: Logger): AnomalyReviewer | undefined {
  const canChat = defaultProvider(llm, "chat") !== undefined;
  const canEmbed = defaultProvider(llm, "embed") !== undefined;
  if (!llm.anomaly_review || (!canChat && !canEmbed)) return undefined;

  // Asked once per reviewer (one alerter round), not once per candidate.
  let vectors: Promise<boolean> | undefined;
  async function similarTo(description: string): Promise<{ embedding?: number[]; similar: SimilarReview[] }> {
    if (!canEmbed || !(await (vectors ??= hasReviewEmbeddings(db)))) return { similar: [] };
    try {
      const [embedding] = (await embedTexts(llm, choose(llm, "embed"), [description])).embeddings;
      return { embedding, similar: await similarReviews(db, embedding, CONSIDER_SIMILARITY, SIMILAR_LIMIT) };
    } catch (err) {
      log.warn("anomaly review: no embedding, so no comparison with past anomalies", { error: (err as Error).message });
      return { similar: [] };
    }
  }

  async function classify(c: ReviewCandidate, similar: SimilarReview[]): Promise<Pick<NewReview, "decision" | "decided_by" | "tier3_result">> {
    try {
      const classification = parseClassification(await askForText(llm, log, "anomaly-review", CLASSIFY_PROMPT, classificationRequest(c, similar)));
      return { decision: classificationDecision(classification), decided_by: "llm", tier3_result: { ...classification } };
    } catch (err) {
      log.warn("anomaly review: the LLM failed, so the anomaly is alerted", { error: (err as Error).message });
      return { decision: "alert", decided_by: "fail_safe", tier3_result: { error: (err as Error).message } };
    }
  }

  return async (c) => {
    const { latest, falsePositive } = await reviewState(db, c, REVIEW_REUSE_MINUTES);
    // A false-positive mark made after the last review overrules it.
    if (latest && !(falsePositive && latest.decision === "alert")) return outcome(latest as ReviewRow, true);
    const description = describeCandidate(c);
    const base = {
      connection_id: c.connection_id,
      database_name: c.database_name,
      metric_name: c.metric_name,
      metric_value: c.value,
      z_score: c.anomaly.z,
      description,
    };
    let review: NewReview;
    if (falsePositive) {
      review = { ...base, decision: "suppress", decided_by: "false_positive", tier2_score: null, tier3_result: null };
    } else {
      const { embedding, similar } = await similarTo(description);
      const verdict = similarityVerdict(similar);
      const tier2 = { ...base, tier2_score: verdict.score, embedding };
      if (verdict.suppress) review = { ...tier2, decision: "suppress", decided_by: "similarity", tier3_result: null };
      else if (!canChat) review = { ...tier2, decision: "alert", decided_by: "similarity", tier3_result: null };
      else review = { ...tier2, ...(await classify(c, similar)) };
    }
    await saveReview(db, review, review.embedding !== undefined);
    return outcome(review);
  };
}
