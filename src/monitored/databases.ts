/** A monitored server's databases, asked live: those that accept connections, with their owner, encoding and size. */
import type pg from "pg";

export interface MonitoredDatabase {
  name: string;
  owner: string;
  encoding: string;
  /** Null where the login may not connect to it (its size is not theirs to know). */
  size_bytes: number | null;
}

export async function monitoredDatabases(client: pg.ClientBase): Promise<MonitoredDatabase[]> {
  const result = await client.query<{ name: string; owner: string; encoding: string; size_bytes: string | null }>(
    `SELECT d.datname AS name, pg_get_userbyid(d.datdba) AS owner, pg_encoding_to_char(d.encoding) AS encoding,
            CASE WHEN has_database_privilege(d.datname, 'CONNECT') THEN pg_database_size(d.datname) END AS size_bytes
       FROM pg_database d WHERE d.datallowconn AND NOT d.datistemplate ORDER BY d.datname`,
  );
  return result.rows.map((d) => ({ ...d, size_bytes: d.size_bytes === null ? null : Number(d.size_bytes) }));
}
