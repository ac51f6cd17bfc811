import type { Migration } from "./types.ts";

/** Tokens each user spent through the LLM proxy per UTC day, for `llm.daily_token_limit`. */
export const migration: Migration = {
  version: 18,
  name: "llm_token_usage",
  statements: [
    `CREATE TABLE llm_token_usage (
       user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
       day date NOT NULL,
       tokens bigint NOT NULL DEFAULT 0 CHECK (tokens >= 0),
       PRIMARY KEY (user_id, day)
     )`,
  ],
};
