/**
 * Probe configuration: one global row per probe, optional overrides scoped to a server (connection), a
 * cluster or a cluster group. The effective setting for a connection resolves server, then cluster, then
 * group, then global: one function (effectiveProbeConfigs) used by the metrics engine and the collector.
 */
import type { Queryable } from "../../drivers/types.ts";
import { NotFoundError } from "../errors.ts";
import { groupBy } from "../group-by.ts";
import { PROBES } from "../probes/index.ts";

export const FALLBACK_INTERVAL_SECONDS = 300;
export const OVERRIDE_SCOPES = ["server", "cluster", "group"] as const;
export type OverrideScope = (typeof OVERRIDE_SCOPES)[number];
export type ConfigScope = "global" | OverrideScope;

export interface ProbeConfigRow {
  id: number;
  probe_name: string;
  scope: ConfigScope;
  scope_id: number | null;
  is_enabled: boolean;
  collection_interval_seconds: number;
  retention_days: number;
  updated_at: Date;
}

export interface ProbeSettings {
  is_enabled?: boolean;
  collection_interval_seconds?: number;
  retention_days?: number;
}

export const probeConfigJson = (r: ProbeConfigRow) => ({ ...r, updated_at: r.updated_at.toISOString() });

export const listGlobalConfigs = (db: Queryable) => db.query<ProbeConfigRow>("SELECT * FROM probe_configs WHERE scope = 'global' ORDER BY probe_name");

export async function getProbeConfig(db: Queryable, id: number): Promise<ProbeConfigRow> {
  const [row] = await db.query<ProbeConfigRow>("SELECT * FROM probe_configs WHERE id = $1", [id]);
  if (!row) throw new NotFoundError(`probe config ${id} not found`);
  return row;
}

export async function updateProbeConfig(db: Queryable, id: number, s: ProbeSettings): Promise<ProbeConfigRow> {
  const [row] = await db.query<ProbeConfigRow>(
    `UPDATE probe_configs SET is_enabled = coalesce($2, is_enabled), collection_interval_seconds = coalesce($3, collection_interval_seconds),
            retention_days = coalesce($4, retention_days), updated_at = now() WHERE id = $1 RETURNING *`,
    [id, s.is_enabled ?? null, s.collection_interval_seconds ?? null, s.retention_days ?? null],
  );
  if (!row) throw new NotFoundError(`probe config ${id} not found`);
  return row;
}

export const overridesFor = (db: Queryable, scope: OverrideScope, scopeId: number) =>
  db.query<ProbeConfigRow>("SELECT * FROM probe_configs WHERE scope = $1 AND scope_id = $2 ORDER BY probe_name", [scope, scopeId]);

/** Creates or changes an override; settings it does not give are copied from the global row. */
export async function upsertOverride(db: Queryable, scope: OverrideScope, scopeId: number, probe: string, s: ProbeSettings): Promise<ProbeConfigRow> {
  const [row] = await db.query<ProbeConfigRow>(
    `INSERT INTO probe_configs (probe_name, scope, scope_id, is_enabled, collection_interval_seconds, retention_days)
     SELECT $1, $2, $3, coalesce($4, g.is_enabled), coalesce($5, g.collection_interval_seconds), coalesce($6, g.retention_days)
       FROM probe_configs g WHERE g.probe_name = $1 AND g.scope = 'global'
     ON CONFLICT (probe_name, scope, coalesce(scope_id, 0)) DO UPDATE SET
       is_enabled = coalesce($4, probe_configs.is_enabled),
       collection_interval_seconds = coalesce($5, probe_configs.collection_interval_seconds),
       retention_days = coalesce($6, probe_configs.retention_days),
       updated_at = now()
     RETURNING *`,
    [probe, scope, scopeId, s.is_enabled ?? null, s.collection_interval_seconds ?? null, s.retention_days ?? null],
  );
  if (!row) throw new NotFoundError(`probe \`${probe}\` has no configuration`);
  return row;
}

export async function deleteOverride(db: Queryable, scope: OverrideScope, scopeId: number, probe: string): Promise<void> {
  const rows = await db.query("DELETE FROM probe_configs WHERE scope = $1 AND scope_id = $2 AND probe_name = $3 RETURNING id", [scope, scopeId, probe]);
  if (rows.length === 0) throw new NotFoundError(`no ${scope} override of \`${probe}\` for ${scope} ${scopeId}`);
}

export interface EffectiveConfig {
  probe_name: string;
  is_enabled: boolean;
  collection_interval_seconds: number;
  retention_days: number;
  /** Where the setting comes from. */
  source: ConfigScope | "default";
  config_id: number | null;
}

const RANK: Record<ConfigScope, number> = { server: 1, cluster: 2, group: 3, global: 4 };

const effectiveOf = (probe_name: string, best: ProbeConfigRow): EffectiveConfig => ({
  probe_name,
  is_enabled: best.is_enabled,
  collection_interval_seconds: best.collection_interval_seconds,
  retention_days: best.retention_days,
  source: best.scope,
  config_id: best.id,
});

/**
 * Effective settings of every probe for each connection: server > cluster > group > global > built-in default.
 * The global rows are read once and their settings shared by every connection without an override: read per
 * connection, they were a row per connection and probe (62,000 at 1,000 servers) for what is mostly one table.
 */
export async function effectiveProbeConfigs(db: Queryable, connectionIds: readonly number[]): Promise<Map<number, Map<string, EffectiveConfig>>> {
  const rows = await db.query<ProbeConfigRow & { connection_id: number | null }>(
    `SELECT NULL::int AS connection_id, pc.* FROM probe_configs pc WHERE pc.scope = 'global'
     UNION ALL
     SELECT c.id, pc.*
       FROM connections c
       LEFT JOIN clusters cl ON cl.id = c.cluster_id
       JOIN probe_configs pc ON (pc.scope = 'server' AND pc.scope_id = c.id)
                             OR (pc.scope = 'cluster' AND pc.scope_id = c.cluster_id)
                             OR (pc.scope = 'group' AND pc.scope_id = cl.group_id)
      WHERE c.id = ANY($1::int[])`,
    [connectionIds],
  );
  const global = new Map(rows.filter((r) => r.connection_id === null).map((r) => [r.probe_name, r]));
  const defaults = new Map<string, EffectiveConfig>(
    PROBES.map((probe) => {
      const row = global.get(probe.name);
      return [
        probe.name,
        row
          ? effectiveOf(probe.name, row)
          : {
              probe_name: probe.name,
              is_enabled: true,
              collection_interval_seconds: FALLBACK_INTERVAL_SECONDS,
              retention_days: probe.defaultRetentionDays,
              source: "default",
              config_id: null,
            },
      ];
    }),
  );
  const overrides = groupBy(
    rows.filter((r) => r.connection_id !== null),
    (r) => r.connection_id!,
  );
  const result = new Map<number, Map<string, EffectiveConfig>>();
  for (const id of connectionIds) {
    const mine = overrides.get(id);
    if (!mine) {
      result.set(id, new Map(defaults));
      continue;
    }
    const configs = new Map(defaults);
    for (const [probe, candidates] of groupBy(mine, (r) => r.probe_name)) {
      if (defaults.has(probe)) configs.set(probe, effectiveOf(probe, candidates.sort((a, b) => RANK[a.scope] - RANK[b.scope])[0]));
    }
    result.set(id, configs);
  }
  return result;
}
