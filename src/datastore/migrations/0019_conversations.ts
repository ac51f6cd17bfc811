import type { Migration } from "./types.ts";

/** Chat conversations, each owned by one user (API tokens reach their owner's). */
export const migration: Migration = {
  version: 19,
  name: "conversations",
  statements: [
    `CREATE TABLE conversations (
       id text PRIMARY KEY,
       user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
       title text NOT NULL,
       provider text,
       model text,
       connection text,
       messages jsonb NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now(),
       updated_at timestamptz NOT NULL DEFAULT now()
     )`,
    "CREATE INDEX conversations_by_user ON conversations (user_id, updated_at DESC)",
  ],
};
