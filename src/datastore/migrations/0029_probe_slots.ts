import type { Migration } from "./types.ts";

/**
 * Probes run once per slot of their interval (collector/schedule-store.ts): the datastore's time of each claim, and
 * of the claim whose run finished last, which says which slot is done.
 */
export const migration: Migration = {
  version: 29,
  name: "probe_slots",
  statements: ["ALTER TABLE probe_schedule ADD COLUMN claimed_at timestamptz, ADD COLUMN last_slot_at timestamptz"],
};
