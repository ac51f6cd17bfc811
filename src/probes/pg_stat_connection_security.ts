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
};
