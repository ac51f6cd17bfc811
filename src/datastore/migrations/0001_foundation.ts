import type { Migration } from "./types.ts";

/** The metrics schema, monitored connections and probe configuration. */
export const migration: Migration = {
  version: 1,
  name: "foundation",
  statements: [
    `CREATE SCHEMA IF NOT EXISTS metrics`,
    `CREATE TABLE connections (
      id              serial PRIMARY KEY,
      name            text NOT NULL,
      host            text NOT NULL,
      port            integer NOT NULL DEFAULT 5432 CHECK (port BETWEEN 1 AND 65535),
      database_name   text NOT NULL DEFAULT 'postgres',
      username        text NOT NULL,
      password_secret text,
      sslmode         text NOT NULL DEFAULT 'prefer',
      is_monitored    boolean NOT NULL DEFAULT true,
      is_shared       boolean NOT NULL DEFAULT false,
      description     text NOT NULL DEFAULT '',
      connection_error text,
      created_at      timestamptz NOT NULL DEFAULT now(),
      updated_at      timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE probe_configs (
      id                          serial PRIMARY KEY,
      probe_name                  text NOT NULL,
      scope                       text NOT NULL CHECK (scope IN ('global', 'server', 'cluster', 'group')),
      scope_id                    integer,
      is_enabled                  boolean NOT NULL DEFAULT true,
      collection_interval_seconds integer NOT NULL CHECK (collection_interval_seconds > 0),
      retention_days              integer NOT NULL CHECK (retention_days > 0),
      updated_at                  timestamptz NOT NULL DEFAULT now(),
      CHECK ((scope = 'global') = (scope_id IS NULL))
    )`,
    `CREATE UNIQUE INDEX probe_configs_scope_key ON probe_configs (probe_name, scope, coalesce(scope_id, 0))`,
  ],
};
