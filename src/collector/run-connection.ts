/**
 * One collection run on one monitored server: detect its version, run the claimed server-wide probes in the
 * maintenance database and the database-scoped ones in every connectable database, and store each probe's
 * rows as one sample (one collected_at) through the sample writer. A probe whose view or extension is
 * missing is recorded as unavailable and does not disturb the others.
 */
import type pg from "pg";
import type { Driver } from "../../drivers/types.ts";
import type { ConnectionRow } from "../datastore/connections.ts";
import { MonitoredServerError, withMonitoredClient } from "../monitored/client.ts";
import { findProbe } from "../probes/index.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import type { Candidate, ProbeOutcome } from "./schedule-store.ts";
import { type SampleRow, writeSamples } from "../samples/sample-writer.ts";
import { sampleTime } from "./sample-time.ts";
import { markCollectorSql } from "../probes/statement-mark.ts";

const UNAVAILABLE_RECHECK_MS = 3600_000;
// invalid_catalog_name (database does not exist), admin_shutdown (DROP DATABASE ... FORCE ended our session)
const VANISHED = new Set(["3D000", "57P01"]);

interface Gathered {
  rows: Record<string, unknown>[];
  unavailable?: string;
  errors: string[];
  ms: number;
}

async function installedExtension(client: pg.Client, extension: string): Promise<{ schema: string; version: string } | null> {
  const result = await client.query<{ schema: string; version: string }>(
    markCollectorSql("SELECT extnamespace::regnamespace::text AS schema, extversion AS version FROM pg_extension WHERE extname = $1"),
    [extension],
  );
  return result.rows[0] ?? null;
}

const INSUFFICIENT_PRIVILEGE = "42501";

/** Runs a probe's statements in one database, timing it into `g`. */
async function runProbe(
  client: pg.Client,
  probe: ProbeDefinition,
  major: number,
  g: Gathered,
): Promise<{ rows: Record<string, unknown>[] } | { unavailable: string }> {
  const started = performance.now();
  try {
    return await queryProbe(client, probe, major);
  } finally {
    g.ms += performance.now() - started;
  }
}

/** A probe's rows in one database, or why it is not available there. */
async function queryProbe(client: pg.Client, probe: ProbeDefinition, major: number): Promise<{ rows: Record<string, unknown>[] } | { unavailable: string }> {
  const context: { extensionSchema?: string; extensionVersion?: string } = {};
  if (probe.collect.extension) {
    const found = await installedExtension(client, probe.collect.extension);
    if (found === null) return { unavailable: `extension ${probe.collect.extension} is not installed` };
    context.extensionSchema = found.schema.replace(/^"|"$/g, "");
    context.extensionVersion = found.version;
  }
  const statements = probe.collect.sql(major, context);
  if (statements === null) return { unavailable: `not available on PostgreSQL ${major}` };
  const rows: Record<string, unknown>[] = [];
  try {
    for (const sql of statements) rows.push(...(await client.query(markCollectorSql(sql))).rows);
  } catch (err) {
    // A view the login may not read (pg_hba_file_rules on a pg_monitor role) is not collectable, not broken.
    if ((err as { code?: string }).code === INSUFFICIENT_PRIVILEGE) return { unavailable: `the monitoring login may not read it (${(err as Error).message})` };
    throw err;
  }
  return { rows };
}

function note(g: Gathered, where: string, err: unknown) {
  g.errors.push(`${where}: ${(err as Error).message}`);
}

export interface RunResult {
  reachable: boolean;
  error?: string;
  outcomes: ProbeOutcome[];
}

/** `claimedAt`: when the round claimed the work (epoch ms), by which its samples are stamped (sample-time.ts). */
export async function runConnection(
  db: Driver,
  conn: ConnectionRow,
  claimed: readonly Candidate[],
  secret: string | undefined,
  statementTimeoutMs: number,
  claimedAt = Date.now(),
): Promise<RunResult> {
  const probes = claimed.map((c) => findProbe(c.probe)!).filter(Boolean);
  const intervals = new Map(claimed.map((c) => [c.probe, c.intervalSeconds]));
  const gathered = new Map<string, Gathered>(probes.map((p) => [p.name, { rows: [], errors: [], ms: 0 }]));
  const serverProbes = probes.filter((p) => p.collect.runs === "server");
  const databaseProbes = probes.filter((p) => p.collect.runs === "each_database");
  const options = { statementTimeoutMs };

  let databases: string[] = [];
  let major = 0;
  try {
    await withMonitoredClient(
      conn,
      secret,
      async (client) => {
        major = Math.floor(
          Number((await client.query<{ v: string }>(markCollectorSql("SELECT current_setting('server_version_num') AS v"))).rows[0].v) / 10000,
        );
        databases = (
          await client.query<{ datname: string }>(
            markCollectorSql(
              "SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate AND has_database_privilege(datname, 'CONNECT') ORDER BY datname",
            ),
          )
        ).rows.map((r) => r.datname);
        for (const probe of serverProbes) {
          const g = gathered.get(probe.name)!;
          try {
            const result = await runProbe(client, probe, major, g);
            if ("unavailable" in result) g.unavailable = result.unavailable;
            else g.rows.push(...result.rows);
          } catch (err) {
            note(g, conn.database_name, err);
          }
        }
      },
      options,
    );
  } catch (err) {
    if (err instanceof MonitoredServerError) return { reachable: false, error: err.message, outcomes: [] };
    throw err;
  }

  for (const database of databaseProbes.length ? databases : []) {
    try {
      await withMonitoredClient(
        conn,
        secret,
        async (client) => {
          for (const probe of databaseProbes) {
            const g = gathered.get(probe.name)!;
            try {
              const result = await runProbe(client, probe, major, g);
              if ("rows" in result) g.rows.push(...result.rows.map((r) => ({ ...r, database_name: database })));
            } catch (err) {
              if (!VANISHED.has((err as { code?: string }).code ?? "")) note(g, database, err);
            }
          }
        },
        { ...options, database },
      );
    } catch (err) {
      // A database dropped since it was listed is simply gone, not a failure.
      if (VANISHED.has((err as MonitoredServerError).code ?? "")) continue;
      for (const probe of databaseProbes) note(gathered.get(probe.name)!, database, err);
    }
  }

  const outcomes: ProbeOutcome[] = [];
  for (const probe of probes) {
    const g = gathered.get(probe.name)!;
    const collectedAt = new Date(sampleTime(claimedAt, intervals.get(probe.name)!));
    const base = { connectionId: conn.id, probe: probe.name, collectedAt };
    if (g.unavailable || (probe.collect.runs === "each_database" && probe.collect.extension && g.rows.length === 0 && g.errors.length === 0)) {
      const reason = g.unavailable ?? `extension ${probe.collect.extension} is not installed in any database`;
      outcomes.push({ ...base, status: "unavailable", rows: 0, error: reason, notBefore: new Date(Date.now() + UNAVAILABLE_RECHECK_MS) });
      continue;
    }
    try {
      const rows: SampleRow[] = g.rows.map((r) => ({ ...r, collected_at: collectedAt }));
      const started = performance.now();
      if (rows.length) await writeSamples(db, { connectionId: conn.id, probe: probe.name, rows });
      const durationMs = g.ms + performance.now() - started;
      outcomes.push({ ...base, status: g.errors.length ? "error" : "ok", rows: rows.length, error: g.errors.join("; ") || undefined, durationMs });
    } catch (err) {
      outcomes.push({ ...base, status: "error", rows: 0, error: `storing samples: ${(err as Error).message}` });
    }
  }
  return { reachable: true, outcomes };
}
