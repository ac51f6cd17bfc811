/** Reviews of anomaly candidates (tiers 2-3 of anomaly detection), and what they are compared with. */
import type { Queryable } from "../../drivers/types.ts";
import { hasVectorColumn, vectorLiteral } from "./vectors.ts";

export type ReviewDecision = "alert" | "suppress";
export type DecidedBy = "false_positive" | "similarity" | "llm" | "fail_safe";

export interface CandidateKey {
  connection_id: number;
  database_name: string;
  metric_name: string;
}

export interface NewReview extends CandidateKey {
  metric_value: number;
  z_score: number;
  description: string;
  decision: ReviewDecision;
  decided_by: DecidedBy;
  tier2_score: number | null;
  tier3_result: Record<string, unknown> | null;
  embedding?: number[];
}

export interface ReviewRow extends Omit<NewReview, "embedding"> {
  id: number;
  /** As JSON gives it (ISO text). */
  reviewed_at: string;
}

/** A past review close in meaning to a new candidate. */
export interface SimilarReview {
  description: string;
  decision: ReviewDecision;
  similarity: number;
  /** A user marked an anomaly alert of that review's key a false positive within the last day. */
  false_positive: boolean;
}

const COLUMNS =
  "id, connection_id, database_name, metric_name, metric_value, z_score, description, decision, decided_by, tier2_score, tier3_result, reviewed_at";

/** Whether an anomaly alert of the key in `r` was marked a false positive within the last 24 hours. */
const FALSE_POSITIVE = (r: string) => `EXISTS (
  SELECT 1 FROM alerts fa JOIN alert_acknowledgments fk ON fk.alert_id = fa.id
   WHERE fa.alert_type = 'anomaly' AND fa.connection_id = ${r}.connection_id AND fa.metric_name = ${r}.metric_name
     AND fa.database_name = ${r}.database_name AND fk.false_positive AND fk.acknowledged_at > now() - interval '24 hours')`;

export const hasReviewEmbeddings = (db: Queryable) => hasVectorColumn(db, "anomaly_reviews");

/** The key's newest review within the last `minutes`, and whether the key was marked a false positive lately. */
export async function reviewState(db: Queryable, key: CandidateKey, minutes: number): Promise<{ latest?: ReviewRow; falsePositive: boolean }> {
  const [row] = await db.query<{ latest: ReviewRow | null; false_positive: boolean }>(
    `SELECT (SELECT row_to_json(r) FROM (
              SELECT ${COLUMNS} FROM anomaly_reviews
               WHERE connection_id = $1 AND metric_name = $2 AND database_name = $3 AND reviewed_at > now() - make_interval(mins => $4)
               ORDER BY reviewed_at DESC, id DESC LIMIT 1) r) AS latest,
            ${FALSE_POSITIVE("k")} AS false_positive
       FROM (SELECT $1::int AS connection_id, $2::text AS metric_name, $3::text AS database_name) k`,
    [key.connection_id, key.metric_name, key.database_name, minutes],
  );
  return { latest: row.latest ?? undefined, falsePositive: row.false_positive };
}

/** Past reviews at least `minimum` similar (cosine) to the vector, most similar first. */
export async function similarReviews(db: Queryable, embedding: readonly number[], minimum: number, limit: number): Promise<SimilarReview[]> {
  const rows = await db.query<SimilarReview>(
    `SELECT r.description, r.decision, 1 - (r.embedding <=> $1::vector) AS similarity, ${FALSE_POSITIVE("r")} AS false_positive
       FROM anomaly_reviews r
      WHERE r.embedding IS NOT NULL AND vector_dims(r.embedding) = $2 AND 1 - (r.embedding <=> $1::vector) >= $3
      ORDER BY r.embedding <=> $1::vector, r.reviewed_at DESC LIMIT $4`,
    [vectorLiteral(embedding), embedding.length, minimum, limit],
  );
  return rows.map((r) => ({ ...r, similarity: Number(r.similarity) }));
}

export async function saveReview(db: Queryable, r: NewReview, withEmbedding: boolean): Promise<void> {
  const params: unknown[] = [
    r.connection_id,
    r.database_name,
    r.metric_name,
    r.metric_value,
    r.z_score,
    r.description,
    r.decision,
    r.decided_by,
    r.tier2_score,
    r.tier3_result === null ? null : JSON.stringify(r.tier3_result),
  ];
  const vector = withEmbedding && r.embedding ? vectorLiteral(r.embedding) : undefined;
  await db.query(
    `INSERT INTO anomaly_reviews (connection_id, database_name, metric_name, metric_value, z_score, description, decision, decided_by, tier2_score, tier3_result${vector ? ", embedding" : ""})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb${vector ? ", $11::vector" : ""})`,
    vector ? [...params, vector] : params,
  );
}

/** Forgets reviews older than the alert retention (they are compared with new candidates until then). */
export async function deleteOldReviews(db: Queryable, days: number): Promise<number> {
  return (await db.query("DELETE FROM anomaly_reviews WHERE reviewed_at < now() - make_interval(days => $1) RETURNING id", [days])).length;
}
