import { registerTools } from "./tool-privileges.ts";
import type { Migration } from "./types.ts";

/**
 * Memories: facts a user (or, with store_system_memory, everyone) wants later chats to know. With pgvector
 * available (PGlite has it loaded), an `embedding` column holds each memory's vector for search by meaning;
 * without it, memories are found by text search. The memory tools join the privilege registry.
 */
export const migration: Migration = {
  version: 20,
  name: "memories",
  statements: [
    `CREATE TABLE memories (
       id serial PRIMARY KEY,
       scope text NOT NULL CHECK (scope IN ('user', 'system')),
       user_id integer REFERENCES users(id) ON DELETE CASCADE,
       created_by text NOT NULL,
       category text NOT NULL,
       content text NOT NULL,
       pinned boolean NOT NULL DEFAULT false,
       model_name text,
       created_at timestamptz NOT NULL DEFAULT now(),
       updated_at timestamptz NOT NULL DEFAULT now(),
       -- A user's memory belongs to (and goes with) that user; a system memory to no one.
       CHECK ((scope = 'user') = (user_id IS NOT NULL))
     )`,
    "CREATE INDEX memories_by_owner ON memories (user_id, updated_at DESC)",
    "CREATE INDEX memories_words ON memories USING gin (to_tsvector('simple', content))",
    `DO $$
     BEGIN
       IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
         BEGIN
           CREATE EXTENSION IF NOT EXISTS vector;
         EXCEPTION WHEN insufficient_privilege THEN
           RAISE NOTICE 'pgvector is installed but this role cannot create it: memories are found by text search';
         END;
       END IF;
       IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
         ALTER TABLE memories ADD COLUMN embedding vector;
       END IF;
     END $$`,
    ...registerTools(["store_memory", "recall_memories"]),
  ],
};
