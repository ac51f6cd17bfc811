import { catalogueStatements } from "../../probes/ddl.ts";
import { pgNodeRole } from "../../probes/pg_node_role.ts";
import { pgSubscriptionUpstream } from "../../probes/pg_subscription_upstream.ts";
import type { Migration } from "./types.ts";

/** Replication clusters detected from pg_node_role and pg_subscription_upstream samples; a dismissed one (by its prefix) never comes back. */
export const migration: Migration = {
  version: 15,
  name: "replication_topology",
  statements: [
    ...catalogueStatements([pgNodeRole, pgSubscriptionUpstream]),
    `CREATE TABLE dismissed_replication_clusters (
      prefix text PRIMARY KEY,
      dismissed_by integer REFERENCES users (id) ON DELETE SET NULL,
      dismissed_at timestamptz NOT NULL DEFAULT now()
    )`,
  ],
};
