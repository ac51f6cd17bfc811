import { probeTable, quoteIdent, quoteLiteral, rawTableName } from "../../probes/ddl.ts";
import { createCompressedTable, createSamplesView } from "../../probes/history-ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Compressed history (probes/history-ddl.ts): each probe's table becomes `<probe>__raw` (its weekly partitions
 * renamed to match, `<probe>__raw_<YYYYMMDD>`, so the writer finds them), beside it `<probe>__compressed`, and
 * under the old name a view over both. A probe added after this migration creates this layout in its own.
 */
function splitProbe(probe: ProbeDefinition): string[] {
  const raw = rawTableName(probe.name);
  return [
    `ALTER TABLE ${probeTable(probe.name)} RENAME TO ${quoteIdent(raw)}`,
    `DO $$
     DECLARE p record;
     BEGIN
       FOR p IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                 WHERE i.inhparent = to_regclass(${quoteLiteral(`metrics.${quoteIdent(raw)}`)})
       LOOP
         EXECUTE format('ALTER TABLE metrics.%I RENAME TO %I', p.relname, ${quoteLiteral(raw)} || substr(p.relname, ${probe.name.length + 1}));
       END LOOP;
     END $$`,
    ...createCompressedTable(probe),
    ...createSamplesView(probe),
  ];
}

export const migration: Migration = {
  version: 40,
  name: "compressed_history",
  statements: probesAt(40).flatMap(splitProbe),
  forProbes: (probes) => probes.flatMap(splitProbe),
};
