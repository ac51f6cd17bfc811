import type { Migration } from "./types.ts";

/**
 * The metrics tables lose their foreign key to connections: PostgreSQL checked it once per inserted row, which
 * doubled the cost of inserting a batch's raw rows (lab, 10,000 rows of pg_stat_database: 62-77 ms without it,
 * 118-156 ms with it). The sample writer checks the connection once per batch instead, locking it as the key
 * check did (FOR KEY SHARE: a deletion waits for the batch to commit, or the batch finds no connection), and a
 * trigger deletes a deleted connection's rows from every metrics table, as ON DELETE CASCADE did. probes/ddl.ts
 * no longer declares the key, so a new datastore never has it; this drops it from one made before.
 */
export const migration: Migration = {
  version: 34,
  name: "samples_without_foreign_keys",
  statements: [
    `DO $$
     DECLARE k record;
     BEGIN
       FOR k IN SELECT c.conrelid::regclass AS tab, c.conname
                  FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
                 WHERE c.contype = 'f' AND c.confrelid = 'connections'::regclass AND n.nspname = 'metrics' AND c.conparentid = 0
       LOOP
         EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', k.tab, k.conname);
       END LOOP;
     END $$`,
    `CREATE FUNCTION metrics.forget_connection() RETURNS trigger LANGUAGE plpgsql AS $$
     DECLARE t regclass;
     BEGIN
       -- Every metrics table with a connection_id (partitions through their parent), including any created later.
       FOR t IN SELECT c.oid::regclass
                  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'connection_id' AND NOT a.attisdropped
                 WHERE n.nspname = 'metrics' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
       LOOP
         EXECUTE format('DELETE FROM %s WHERE connection_id = $1', t) USING OLD.id;
       END LOOP;
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER forget_connection_samples AFTER DELETE ON connections FOR EACH ROW EXECUTE FUNCTION metrics.forget_connection()`,
  ],
};
