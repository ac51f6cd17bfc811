import type { Migration } from "./types.ts";

/** What cleared an alert (the reason and the value it had then), so a clear notice can say so. */
export const migration: Migration = {
  version: 37,
  name: "clear_reasons",
  statements: ["ALTER TABLE alerts ADD COLUMN clear_reason text", "ALTER TABLE alerts ADD COLUMN clear_value double precision"],
};
