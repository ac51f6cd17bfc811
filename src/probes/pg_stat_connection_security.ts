import { dim, gauge } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatConnectionSecurity: ProbeDefinition = {
  name: "pg_stat_connection_security",
  description: "SSL and GSSAPI state of each connection (pg_stat_ssl with pg_stat_gssapi)",
  scope: "server",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: ["pid"],
  columns: [
    dim("pid", "Process id of the backend", "integer"),
    dim("ssl", "Whether SSL is used", "boolean"),
    dim("ssl_version", "SSL version"),
    dim("cipher", "SSL cipher"),
    gauge("bits", "Encryption key bits", "integer"),
    dim("client_dn", "Client certificate distinguished name"),
    dim("client_serial", "Client certificate serial number"),
    dim("issuer_dn", "Client certificate issuer"),
    dim("gss_authenticated", "Whether GSSAPI authentication was used", "boolean"),
    dim("principal", "GSSAPI principal"),
    dim("gss_encrypted", "Whether GSSAPI encryption is used", "boolean"),
    dim("credentials_delegated", "Whether GSSAPI credentials were delegated (PostgreSQL 16+)", "boolean"),
  ],
  collect: {
    runs: "server",
    sql: (major) => [
      `SELECT s.pid, s.ssl, s.version AS ssl_version, s.cipher, s.bits, s.client_dn, s.client_serial::text AS client_serial, s.issuer_dn,
              g.gss_authenticated, g.principal, g.encrypted AS gss_encrypted, ${major >= 16 ? "g.credentials_delegated" : "NULL::boolean AS credentials_delegated"}
         FROM pg_stat_ssl s LEFT JOIN pg_stat_gssapi g USING (pid)`,
    ],
  },
};
