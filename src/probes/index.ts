/** The probe catalogue: every probe pglens knows, by name. Adding a probe = adding a file and a line here. */
import { pgDatabase } from "./pg_database.ts";
import { pgExtension } from "./pg_extension.ts";
import { pgHbaFileRules } from "./pg_hba_file_rules.ts";
import { pgIdentFileMappings } from "./pg_ident_file_mappings.ts";
import { pgPostmaster } from "./pg_postmaster.ts";
import { pgReplicationSlots } from "./pg_replication_slots.ts";
import { pgSettings } from "./pg_settings.ts";
import { pgStatActivity } from "./pg_stat_activity.ts";
import { pgStatAllIndexes } from "./pg_stat_all_indexes.ts";
import { pgStatAllTables } from "./pg_stat_all_tables.ts";
import { pgStatCheckpointer } from "./pg_stat_checkpointer.ts";
import { pgStatConnectionSecurity } from "./pg_stat_connection_security.ts";
import { pgStatDatabase } from "./pg_stat_database.ts";
import { pgStatDatabaseConflicts } from "./pg_stat_database_conflicts.ts";
import { pgStatIo } from "./pg_stat_io.ts";
import { pgStatRecoveryPrefetch } from "./pg_stat_recovery_prefetch.ts";
import { pgStatReplication } from "./pg_stat_replication.ts";
import { pgStatStatements } from "./pg_stat_statements.ts";
import { pgStatSubscription } from "./pg_stat_subscription.ts";
import { pgStatUserIndexes } from "./pg_stat_user_indexes.ts";
import { pgStatUserTables } from "./pg_stat_user_tables.ts";
import { pgStatWal } from "./pg_stat_wal.ts";
import { pgSysCpuInfo } from "./pg_sys_cpu_info.ts";
import { pgNodeRole } from "./pg_node_role.ts";
import { pgSubscriptionUpstream } from "./pg_subscription_upstream.ts";
import { pgSysDiskInfo } from "./pg_sys_disk_info.ts";
import { pgSysCpuUsageInfo } from "./pg_sys_cpu_usage_info.ts";
import { pgSysLoadAvgInfo } from "./pg_sys_load_avg_info.ts";
import { pgTableBloat } from "./pg_table_bloat.ts";
import { pgSysMemoryInfo } from "./pg_sys_memory_info.ts";
import { pgSysNetworkInfo } from "./pg_sys_network_info.ts";
import type { ProbeColumn, ProbeDefinition } from "./types.ts";

export const PROBES: readonly ProbeDefinition[] = [
  pgStatActivity,
  pgStatReplication,
  pgStatWal,
  pgSettings,
  pgStatCheckpointer,
  pgStatIo,
  pgStatConnectionSecurity,
  pgStatRecoveryPrefetch,
  pgReplicationSlots,
  pgStatSubscription,
  pgDatabase,
  pgStatDatabase,
  pgStatDatabaseConflicts,
  pgStatAllTables,
  pgStatUserTables,
  pgStatAllIndexes,
  pgStatUserIndexes,
  pgStatStatements,
  pgExtension,
  pgPostmaster,
  pgNodeRole,
  pgSubscriptionUpstream,
  pgHbaFileRules,
  pgIdentFileMappings,
  pgSysCpuInfo,
  pgSysCpuUsageInfo,
  pgSysMemoryInfo,
  pgSysDiskInfo,
  pgSysNetworkInfo,
  pgSysLoadAvgInfo,
  pgTableBloat,
];

const BY_NAME = new Map(PROBES.map((p) => [p.name, p]));

export function findProbe(name: string): ProbeDefinition | undefined {
  return BY_NAME.get(name);
}

export function findColumn(probe: ProbeDefinition, name: string): ProbeColumn | undefined {
  return probe.columns.find((c) => c.name === name);
}

/** Columns a caller can ask for as raw metrics: everything that is neither an identifier nor a reset marker. */
export function metricColumns(probe: ProbeDefinition): ProbeColumn[] {
  return probe.columns.filter((c) => c.kind !== "dimension" && c.kind !== "marker");
}
