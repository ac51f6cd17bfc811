/**
 * Which probes a migration acts on. Migrations that change every probe's tables run over the catalogue as it is
 * when they run, so a probe that joins the catalogue later is left out of the migrations before it and gets
 * their per-probe statements replayed by its own migration (`forProbes`), leaving it exactly as a probe that
 * was there from the start.
 */
import { PROBES } from "../../probes/index.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import type { Migration } from "./types.ts";

/** Probes that joined after the per-probe migrations, and the migration that created their tables. */
const JOINED_IN: Record<string, number> = { pg_table_bloat: 43, pg_sys_cpu_usage_info: 43 };

/** The probes whose tables exist when migration `version` runs (its own new probes excluded). */
export const probesAt = (version: number): readonly ProbeDefinition[] => PROBES.filter((p) => (JOINED_IN[p.name] ?? 0) < version);

/** What `earlier` migrations did to each probe's tables, done now for `probes`, in order. */
export const replayFor = (earlier: readonly Migration[], probes: readonly ProbeDefinition[]): string[] =>
  [...earlier].sort((a, b) => a.version - b.version).flatMap((m) => m.forProbes?.(probes) ?? []);
