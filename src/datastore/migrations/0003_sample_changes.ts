import { createChangesTable } from "../../probes/ddl.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/** Ingest-time derivation: per-sample changes of every probe with cumulative columns (see probes/ddl.ts). */
export const migration: Migration = {
  version: 3,
  name: "sample_changes",
  statements: probesAt(3).flatMap(createChangesTable),
  forProbes: (probes) => probes.flatMap(createChangesTable),
};
