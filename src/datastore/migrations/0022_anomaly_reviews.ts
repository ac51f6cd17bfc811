import type { Migration } from "./types.ts";

/**
 * Reviews of anomaly candidates by the alerter's later tiers: what was decided (alert or suppress), by what
 * (similar past reviews, an LLM's classification) and when. A review is reused for its key for a while, so a
 * lasting anomaly is not sent to the LLM every round. With pgvector, an `embedding` column holds the
 * candidate's description as a vector, for finding similar past anomalies.
 */
export const migration: Migration = {
  version: 22,
  name: "anomaly_reviews",
  statements: [
    `CREATE TABLE anomaly_reviews (
       id serial PRIMARY KEY,
       connection_id integer NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
       database_name text NOT NULL,
       metric_name text NOT NULL,
       metric_value double precision NOT NULL,
       z_score double precision NOT NULL,
       description text NOT NULL,
       decision text NOT NULL CHECK (decision IN ('alert', 'suppress')),
       decided_by text NOT NULL CHECK (decided_by IN ('false_positive', 'similarity', 'llm', 'fail_safe')),
       tier2_score double precision,
       tier3_result jsonb,
       reviewed_at timestamptz NOT NULL DEFAULT now()
     )`,
    "CREATE INDEX anomaly_reviews_by_key ON anomaly_reviews (connection_id, metric_name, database_name, reviewed_at DESC)",
    "CREATE INDEX anomaly_reviews_by_time ON anomaly_reviews (reviewed_at)",
    // pgvector, where migration 20 found it, gives the reviews a vector column too.
    `DO $$
     BEGIN
       IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
         ALTER TABLE anomaly_reviews ADD COLUMN embedding vector;
       END IF;
     END $$`,
  ],
};
