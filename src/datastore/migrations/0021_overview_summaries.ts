import { registerTools } from "./tool-privileges.ts";
import type { Migration } from "./types.ts";

/**
 * The overview's LLM summaries, one per set of visible connections, shared by every pglens instance: the
 * instance that claims a scope writes its summary, the others wait for it rather than ask the LLM again.
 * The get_overview tool joins the privilege registry.
 */
export const migration: Migration = {
  version: 21,
  name: "overview_summaries",
  statements: [
    `CREATE TABLE overview_summaries (
       scope_key text PRIMARY KEY,
       fingerprint text,
       summary text,
       generated_at timestamptz,
       claimed_until timestamptz
     )`,
    ...registerTools(["get_overview"]),
  ],
};
