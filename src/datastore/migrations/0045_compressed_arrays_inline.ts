import { compressedTableName, quoteIdent } from "../../probes/ddl.ts";
import { COMPRESSED_TOAST_TARGET, arrayColumns, compressedArraysInline, compressedTable } from "../../probes/history-ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Compressed rows as probes/history-ddl.ts now makes them: an hour without values of a column stores NULL, not an
 * array of nulls, and every array is compressed in the row. Rows compressed before stay as they are (both read the
 * same); the week partitions made from now on get the TOAST target when created (samples/partitions.ts).
 */
function arraysInline(probe: ProbeDefinition): string[] {
  const nullable = arrayColumns(probe).map((c) => `ALTER COLUMN ${quoteIdent(c.name)} DROP NOT NULL`);
  return [...(nullable.length ? [`ALTER TABLE ${compressedTable(probe.name)} ${nullable.join(", ")}`] : []), ...compressedArraysInline(probe)];
}

const existingPartitions = (probes: readonly ProbeDefinition[]) => `DO $$
  DECLARE p record;
  BEGIN
    FOR p IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class t ON t.oid = i.inhparent
              WHERE t.relnamespace = 'metrics'::regnamespace AND t.relname = ANY (ARRAY[${probes.map((p) => `'${compressedTableName(p.name)}'`).join(", ")}])
    LOOP
      EXECUTE format('ALTER TABLE metrics.%I SET (toast_tuple_target = ${COMPRESSED_TOAST_TARGET})', p.relname);
    END LOOP;
  END $$`;

export const migration: Migration = {
  version: 45,
  name: "compressed_arrays_inline",
  statements: [...probesAt(45).flatMap(arraysInline), existingPartitions(probesAt(45))],
};
