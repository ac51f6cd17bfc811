/** Blackouts and blackout schedules in the datastore. */
import type { Queryable } from "../../drivers/types.ts";
import { openWindowStart, parseSchedule } from "../blackouts/cron.ts";
import type { ScopeTarget } from "../blackouts/scope.ts";
import { NotFoundError } from "../errors.ts";

export interface BlackoutRow extends ScopeTarget {
  id: number;
  reason: string;
  start_time: Date;
  end_time: Date;
  created_by: string;
  created_at: Date;
  schedule_id: number | null;
}

export interface ScheduleRow extends ScopeTarget {
  id: number;
  name: string;
  cron_expression: string;
  duration_minutes: number;
  timezone: string;
  reason: string;
  enabled: boolean;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/** What of the estate a caller sees: windows elsewhere are neither listed nor found. */
export interface Visible {
  connections: readonly number[];
  clusters: readonly number[];
  groups: readonly number[];
}

const VISIBLE = (first: number) =>
  `(scope = 'estate' OR (scope = 'server' AND connection_id = ANY($${first}::int[])) OR (scope = 'cluster' AND cluster_id = ANY($${first + 1}::int[]))
    OR (scope = 'group' AND group_id = ANY($${first + 2}::int[])))`;
const visibleParams = (v: Visible) => [v.connections, v.clusters, v.groups];

/** The filters blackouts and schedules share: a scope, and the group, cluster or server a window is placed on. */
export interface PlacementFilters {
  scope?: string;
  group_id?: number;
  cluster_id?: number;
  connection_id?: number;
}

/** The visible windows matching `f`, as a WHERE clause and its parameters. */
function placementWhere(f: PlacementFilters, visible: Visible) {
  const params: unknown[] = visibleParams(visible);
  const where = [VISIBLE(1)];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace("?", `$${params.length}`));
  };
  if (f.scope) add("scope = ?", f.scope);
  if (f.group_id !== undefined) add("group_id = ?", f.group_id);
  if (f.cluster_id !== undefined) add("cluster_id = ?", f.cluster_id);
  if (f.connection_id !== undefined) add("connection_id = ?", f.connection_id);
  return { params, where, add };
}

export interface BlackoutFilters extends PlacementFilters {
  active?: boolean;
  /** Only windows that have not ended: active now or still to come. */
  notEnded?: boolean;
  limit: number;
  offset: number;
}

export async function listBlackouts(db: Queryable, f: BlackoutFilters, visible: Visible): Promise<{ blackouts: BlackoutRow[]; total: number }> {
  const { params, where } = placementWhere(f, visible);
  if (f.active !== undefined) where.push(f.active ? "now() BETWEEN start_time AND end_time" : "NOT (now() BETWEEN start_time AND end_time)");
  if (f.notEnded) where.push("end_time > now()");
  const sql = where.join(" AND ");
  const [{ total }] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM blackouts WHERE ${sql}`, params);
  const blackouts = await db.query<BlackoutRow>(
    `SELECT * FROM blackouts WHERE ${sql} ORDER BY start_time DESC, id DESC LIMIT ${f.limit} OFFSET ${f.offset}`,
    params,
  );
  return { blackouts, total };
}

export async function getBlackout(db: Queryable, id: number, visible: Visible): Promise<BlackoutRow> {
  const [row] = await db.query<BlackoutRow>(`SELECT * FROM blackouts WHERE id = $4 AND ${VISIBLE(1)}`, [...visibleParams(visible), id]);
  if (!row) throw new NotFoundError(`blackout ${id} not found`);
  return row;
}

export async function createBlackout(
  db: Queryable,
  b: ScopeTarget & { reason: string; start_time: Date; end_time: Date; created_by: string },
): Promise<BlackoutRow> {
  const [row] = await db.query<BlackoutRow>(
    `INSERT INTO blackouts (scope, group_id, cluster_id, connection_id, database_name, reason, start_time, end_time, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [b.scope, b.group_id, b.cluster_id, b.connection_id, b.database_name, b.reason, b.start_time.toISOString(), b.end_time.toISOString(), b.created_by],
  );
  return row;
}

export async function updateBlackout(db: Queryable, id: number, changes: { reason?: string; end_time?: Date }): Promise<BlackoutRow> {
  const [row] = await db.query<BlackoutRow>("UPDATE blackouts SET reason = coalesce($2, reason), end_time = coalesce($3, end_time) WHERE id = $1 RETURNING *", [
    id,
    changes.reason ?? null,
    changes.end_time?.toISOString() ?? null,
  ]);
  return row;
}

export async function deleteBlackout(db: Queryable, id: number): Promise<void> {
  await db.query("DELETE FROM blackouts WHERE id = $1", [id]);
}

/** Ends an active blackout now; null when it is not active. */
export async function stopBlackout(db: Queryable, id: number): Promise<BlackoutRow | null> {
  const [row] = await db.query<BlackoutRow>(
    "UPDATE blackouts SET end_time = now() WHERE id = $1 AND now() BETWEEN start_time AND end_time AND start_time < now() RETURNING *",
    [id],
  );
  return row ?? null;
}

export const activeBlackouts = (db: Queryable) => db.query<BlackoutRow>("SELECT * FROM blackouts WHERE now() BETWEEN start_time AND end_time");

export async function listSchedules(
  db: Queryable,
  f: PlacementFilters & { enabled?: boolean; limit: number; offset: number },
  visible: Visible,
): Promise<{ schedules: ScheduleRow[]; total: number }> {
  const { params, where, add } = placementWhere(f, visible);
  if (f.enabled !== undefined) add("enabled = ?", f.enabled);
  const sql = where.join(" AND ");
  const [{ total }] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM blackout_schedules WHERE ${sql}`, params);
  const schedules = await db.query<ScheduleRow>(`SELECT * FROM blackout_schedules WHERE ${sql} ORDER BY name, id LIMIT ${f.limit} OFFSET ${f.offset}`, params);
  return { schedules, total };
}

export async function getSchedule(db: Queryable, id: number, visible: Visible): Promise<ScheduleRow> {
  const [row] = await db.query<ScheduleRow>(`SELECT * FROM blackout_schedules WHERE id = $4 AND ${VISIBLE(1)}`, [...visibleParams(visible), id]);
  if (!row) throw new NotFoundError(`blackout schedule ${id} not found`);
  return row;
}

export type ScheduleFields = ScopeTarget & Pick<ScheduleRow, "name" | "cron_expression" | "duration_minutes" | "timezone" | "reason" | "enabled">;

export async function createSchedule(db: Queryable, s: ScheduleFields & { created_by: string }): Promise<ScheduleRow> {
  const [row] = await db.query<ScheduleRow>(
    `INSERT INTO blackout_schedules (scope, group_id, cluster_id, connection_id, database_name, name, cron_expression, duration_minutes, timezone, reason, enabled, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
    [
      s.scope,
      s.group_id,
      s.cluster_id,
      s.connection_id,
      s.database_name,
      s.name,
      s.cron_expression,
      s.duration_minutes,
      s.timezone,
      s.reason,
      s.enabled,
      s.created_by,
    ],
  );
  return row;
}

export async function replaceSchedule(db: Queryable, id: number, s: ScheduleFields): Promise<ScheduleRow> {
  const [row] = await db.query<ScheduleRow>(
    `UPDATE blackout_schedules SET scope = $2, group_id = $3, cluster_id = $4, connection_id = $5, database_name = $6, name = $7, cron_expression = $8,
            duration_minutes = $9, timezone = $10, reason = $11, enabled = $12, updated_at = now()
      WHERE id = $1 RETURNING *`,
    [id, s.scope, s.group_id, s.cluster_id, s.connection_id, s.database_name, s.name, s.cron_expression, s.duration_minutes, s.timezone, s.reason, s.enabled],
  );
  return row;
}

export async function deleteSchedule(db: Queryable, id: number): Promise<void> {
  await db.query("DELETE FROM blackout_schedules WHERE id = $1", [id]);
}

/**
 * Opens the window of every enabled schedule whose start has come and whose duration has not passed. The
 * unique (schedule_id, start_time) index lets only one of several racing alerters insert it.
 */
export async function materialiseSchedules(db: Queryable, now = new Date()): Promise<number[]> {
  const opened: number[] = [];
  for (const s of await db.query<ScheduleRow>("SELECT * FROM blackout_schedules WHERE enabled")) {
    const start = openWindowStart(parseSchedule(s.cron_expression, s.timezone), s.duration_minutes, now);
    if (!start) continue;
    const rows = await db.query<{ id: number }>(
      `INSERT INTO blackouts (scope, group_id, cluster_id, connection_id, database_name, reason, start_time, end_time, created_by, schedule_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'scheduler', $9)
       ON CONFLICT (schedule_id, start_time) WHERE schedule_id IS NOT NULL DO NOTHING RETURNING id`,
      [
        s.scope,
        s.group_id,
        s.cluster_id,
        s.connection_id,
        s.database_name,
        `Scheduled: ${s.name}`,
        start.toISOString(),
        new Date(start.getTime() + s.duration_minutes * 60_000).toISOString(),
        s.id,
      ],
    );
    opened.push(...rows.map((r) => r.id));
  }
  return opened;
}
