import { createProbeTable, seedGlobalConfig } from "../../probes/ddl.ts";
import { pgExtension } from "../../probes/pg_extension.ts";
import type { Migration } from "./types.ts";

/** Clusters and cluster groups, replication relationships, the current connection per credential. */
export const migration: Migration = {
  version: 5,
  name: "estate",
  statements: [
    `CREATE TABLE cluster_groups (
      id serial PRIMARY KEY,
      name text NOT NULL UNIQUE,
      description text NOT NULL DEFAULT '',
      owner_user_id integer REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE clusters (
      id serial PRIMARY KEY,
      group_id integer REFERENCES cluster_groups (id) ON DELETE SET NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      replication_type text NOT NULL DEFAULT 'other',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE UNIQUE INDEX clusters_name_key ON clusters (coalesce(group_id, 0), lower(name))`,
    `ALTER TABLE connections
       ADD COLUMN cluster_id integer REFERENCES clusters (id) ON DELETE SET NULL,
       ADD COLUMN role text,
       ADD COLUMN hidden_from_topology boolean NOT NULL DEFAULT false`,
    `CREATE UNIQUE INDEX connections_name_key ON connections (lower(name))`,
    `CREATE TABLE cluster_relationships (
      id serial PRIMARY KEY,
      cluster_id integer NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
      source_connection_id integer NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
      target_connection_id integer NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
      relationship_type text NOT NULL CHECK (relationship_type IN ('streams_from', 'subscribes_to', 'replicates_with')),
      is_auto_detected boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (source_connection_id <> target_connection_id),
      UNIQUE (cluster_id, source_connection_id, target_connection_id, relationship_type)
    )`,
    `CREATE TABLE current_connections (
      token_hash text PRIMARY KEY,
      connection_id integer NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
      database_name text,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    ...createProbeTable(pgExtension),
    seedGlobalConfig(pgExtension),
  ],
};
