/**
 * The latest sample of a probe on one connection, one row per entity, filtered, ordered and limited. Values
 * are typed by the catalogue: numbers as numbers, timestamps as RFC 3339, bigint identifiers as exact text.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { assertConnectionsPermitted } from "../auth/connection-access.ts";
import { exactAsText, excludedRowsSql } from "../samples/read-raw-rows.ts";
import { InputError } from "../errors.ts";
import { quoteIdent } from "../probes/ddl.ts";
import { latestSampleAtSql, samplesSql } from "../probes/history-ddl.ts";
import { findColumn } from "../probes/index.ts";
import type { ProbeColumn, ProbeDefinition } from "../probes/types.ts";
import { requireProbe, resolveFilters } from "../metrics/metrics-plan.ts";

export const LATEST_DEFAULT_LIMIT = 20;
export const LATEST_MAX_LIMIT = 100;

export interface LatestSnapshotRequest {
  access: Authority;
  connectionId: number;
  probeName: string;
  databaseName?: string;
  /** Schemas to leave out (probes with a schemaname column; ignored by the others). */
  excludeSchemas?: readonly string[];
  orderBy?: string;
  order: "asc" | "desc";
  limit: number;
}

export type SnapshotRow = Record<string, string | number | boolean | null>;

const NUMERIC_TYPES = /^(smallint|integer|bigint|oid|real|double precision|numeric)/;

function typed(probe: ProbeDefinition, column: ProbeColumn, value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (NUMERIC_TYPES.test(column.type) && !exactAsText(probe, column.name)) return Number(value);
  return value as string | number | boolean;
}

function orderColumn(probe: ProbeDefinition, orderBy: string | undefined): string {
  if (orderBy === undefined || orderBy === "") return probe.keys[0] ?? "collected_at";
  if (orderBy === "collected_at" || findColumn(probe, orderBy)) return orderBy;
  throw new InputError(`\`order_by\`: probe \`${probe.name}\` has no column ${JSON.stringify(orderBy)}; describe_probe lists its columns`);
}

export async function latestSnapshot(
  db: Queryable,
  q: LatestSnapshotRequest,
): Promise<{ collected_at: string | null; rows: SnapshotRow[]; total_count: number }> {
  const probe = requireProbe(q.probeName);
  const order = orderColumn(probe, q.orderBy);
  const filters = resolveFilters(probe, { database_name: q.databaseName });
  await assertConnectionsPermitted(db, [q.connectionId], q.access);

  const params: unknown[] = [q.connectionId];
  const where = ["connection_id = $1", ...excludedRowsSql(probe)];
  for (const [column, value] of Object.entries(filters)) {
    params.push(value);
    where.push(`${quoteIdent(column)} = $${params.length}`);
  }
  const sampleWhere = [...where];
  if (q.excludeSchemas?.length && findColumn(probe, "schemaname")) {
    params.push(q.excludeSchemas);
    where.push(`schemaname <> ALL($${params.length}::text[])`);
  }
  params.push(q.limit);
  const columns = probe.columns.map((c) => (exactAsText(probe, c.name) ? `${quoteIdent(c.name)}::text AS ${quoteIdent(c.name)}` : quoteIdent(c.name)));
  const rows = await db.query<Record<string, unknown> & { total_count: number }>(
    `SELECT collected_at, ${columns.join(", ")}, count(*) OVER () AS total_count
       FROM ${latestSampleAtSql(probe, "$1", sampleWhere.slice(1).join(" AND ") || "TRUE", Object.keys(filters))} l
       CROSS JOIN LATERAL ${samplesSql(probe, "l.at", "l.at")} s
      WHERE ${where.join(" AND ")} AND collected_at = l.at
      ORDER BY ${quoteIdent(order)} ${q.order === "asc" ? "ASC" : "DESC"} NULLS LAST${probe.keys.map((k) => `, ${quoteIdent(k)}`).join("")}
      LIMIT $${params.length}`,
    params,
  );
  return {
    collected_at: rows[0] ? (rows[0].collected_at as Date).toISOString() : null,
    total_count: rows[0] ? Number(rows[0].total_count) : 0,
    rows: rows.map((r) => Object.fromEntries(probe.columns.map((c) => [c.name, typed(probe, c, r[c.name])]))),
  };
}
