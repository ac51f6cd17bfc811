/** Applies pending migrations in order, then refreshes built-in rows; safe when several instances start at once. */
import type { Driver } from "../../drivers/types.ts";
import { seedBuiltInRules } from "../vocabulary/builtin-rules.ts";
import { MIGRATIONS } from "./migrations/index.ts";
import type { Migration } from "./migrations/types.ts";

// An arbitrary constant that names "pglens schema migration" among advisory locks.
const MIGRATION_LOCK_KEY = 7_302_914_461;

export interface MigrationResult {
  applied: Array<{ version: number; name: string }>;
  version: number;
}

export async function migrate(db: Driver, migrations: readonly Migration[] = MIGRATIONS, onPending?: (count: number) => void): Promise<MigrationResult> {
  return db.transaction(async (tx) => {
    // The lock lasts until commit, so a second instance waits and then finds everything applied.
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_version (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const rows = await tx.query<{ version: number }>("SELECT version FROM schema_version");
    const done = new Set(rows.map((r) => r.version));
    const applied: MigrationResult["applied"] = [];
    const pending = [...migrations].sort((a, b) => a.version - b.version).filter((m) => !done.has(m.version));
    if (pending.length) onPending?.(pending.length);
    for (const m of pending) {
      for (const statement of m.statements) await tx.query(statement);
      await tx.query("INSERT INTO schema_version (version, name) VALUES ($1, $2)", [m.version, m.name]);
      applied.push({ version: m.version, name: m.name });
    }
    const version = Math.max(0, ...done, ...applied.map((a) => a.version));
    // Built-in rules added by a new release appear at its first start; existing ones keep the user's edits.
    if (version >= 8) await seedBuiltInRules(tx);
    return { applied, version };
  });
}
