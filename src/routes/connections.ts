import { createRoute, z } from "@hono/zod-openapi";
import { actsAsSuperuser, connectionAccess, hasAdminPermission, mayUseTool } from "../auth/rbac.ts";
import { seal } from "../auth/secret-box.ts";
import type { Authority } from "../auth/rbac.ts";
import {
  type ConnectionFields,
  type ConnectionRow,
  connectionJson,
  createConnection,
  deleteConnection,
  listConnections,
  updateConnection,
  liveLogin,
} from "../datastore/connections.ts";
import { clearCurrentConnection, currentConnection, selectCurrentConnection } from "../datastore/current-connections.ts";
import { readableConnection } from "../auth/connection-access.ts";
import { USER, admin, authority, guarded } from "../http/access.ts";
import { ApiError } from "../http/errors.ts";
import { isValidHost } from "../http/host.ts";
import { Id, IdParam, json, jsonBody, noContent } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";
import { withMonitoredClient } from "../monitored/client.ts";
import { rolePowers } from "../monitored/read-only.ts";
import type { Config } from "../config.ts";
import { liveLimits, withLiveSlot } from "../monitored/live-slots.ts";
import type { Context } from "hono";
import type { AppEnv } from "../http/context.ts";
import { monitoredDatabases } from "../monitored/databases.ts";

const tags = ["Connections"];
const base = "/api/v1/connections";
export const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] as const;

const Connection = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    host: z.string(),
    port: z.number().int(),
    database_name: z.string(),
    username: z.string(),
    sslmode: z.string(),
    ssl_root_cert: z
      .string()
      .nullable()
      .openapi({ description: "PEM CA bundle that verify-ca/verify-full check the server's certificate against (default: the system's CAs)" }),
    allow_cleartext_password: z
      .boolean()
      .openapi({ description: "Whether the password may be sent in clear text to a server that asks for it over a link without TLS" }),
    password_set: z.boolean().openapi({ description: "Whether a password is stored; it is never returned" }),
    live_username: z
      .string()
      .nullable()
      .openapi({ description: "The live tools' own login on this server (a pg_monitor role), when set; else they use `username`" }),
    live_password_set: z.boolean().openapi({ description: "Whether a password is stored for live_username; it is never returned" }),
    is_monitored: z.boolean(),
    is_shared: z.boolean(),
    owner_username: z.string().nullable(),
    cluster_id: z.number().int().nullable(),
    role: z.string().nullable(),
    connection_error: z.string().nullable().openapi({ description: "The collector's last error reaching the server; null when healthy" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Connection");

const fields = {
  name: z.string().trim().min(1).max(200),
  host: z.string().trim().refine(isValidHost, "must be a host name or an IP address"),
  port: z.number().int().min(1).max(65535),
  database_name: z.string().min(1).max(63).openapi({ description: "Maintenance database pglens connects to" }),
  username: z.string().min(1).max(63),
  password: z.string().max(1000).openapi({ description: "Stored encrypted (AES-256-GCM); never returned" }),
  sslmode: z.enum(SSL_MODES).openapi({
    description:
      "disable/allow/prefer: no TLS; require: TLS without certificate checks (unless ssl_root_cert is set, as libpq); verify-ca: the certificate must chain to ssl_root_cert or the system CAs; verify-full: and name the host",
  }),
  ssl_root_cert: z
    .string()
    .max(200_000)
    .refine((pem) => pem.includes("-----BEGIN CERTIFICATE-----"), "must be PEM text with at least one -----BEGIN CERTIFICATE----- block")
    .nullable(),
  allow_cleartext_password: z.boolean(),
  live_username: z.string().min(1).max(63).nullable().openapi({
    description:
      "A login for the live tools (query_database, execute_explain, get_schema_info) on the same server, e.g. a pg_monitor role; recommended when `username` is a superuser or similarly powerful",
  }),
  live_password: z.string().max(1000).openapi({ description: "Password of live_username; stored encrypted, never returned" }),
  is_monitored: z.boolean(),
  is_shared: z.boolean().openapi({ description: "Readable by every user; needs manage_connections" }),
  description: z.string().max(2000),
  cluster_id: Id.nullable(),
};

const NewConnection = z
  .object({
    ...fields,
    port: fields.port.default(5432),
    database_name: fields.database_name.default("postgres"),
    password: fields.password.optional(),
    sslmode: fields.sslmode.default("prefer"),
    ssl_root_cert: fields.ssl_root_cert.default(null),
    allow_cleartext_password: fields.allow_cleartext_password.default(false),
    live_username: fields.live_username.default(null),
    live_password: fields.live_password.optional(),
    is_monitored: fields.is_monitored.default(true),
    is_shared: fields.is_shared.default(false),
    description: fields.description.default(""),
    cluster_id: fields.cluster_id.optional(),
  })
  .strict()
  .openapi("NewConnection");

const ConnectionChanges = z
  .object({
    ...fields,
    password: fields.password.nullable().openapi({ description: "A new password; null removes the stored one" }),
    live_password: fields.live_password.nullable().openapi({ description: "A new password for live_username; null removes it" }),
  })
  .partial()
  .strict()
  .openapi("ConnectionChanges");

const WithWarning = Connection.extend({
  warning: z
    .string()
    .optional()
    .openapi({ description: "Present when the live tools' login is too powerful for callers' SQL (they will refuse it, or switch to live_tools.role)" }),
}).openapi("ConnectionWithWarning");

const Database = z.object({ name: z.string(), owner: z.string(), encoding: z.string(), size_bytes: z.number().nullable() }).openapi("Database");
const Current = z
  .object({ connection_id: z.number().int(), database_name: z.string().nullable(), name: z.string(), host: z.string(), port: z.number().int() })
  .openapi("CurrentConnection");

const r = {
  list: guarded(
    USER,
    createRoute({
      method: "get",
      path: base,
      tags,
      summary: "Connections the caller may see",
      responses: { 200: json(z.array(Connection), "Connections"), ...errorResponses(401) },
    }),
  ),
  create: guarded(
    admin("manage_connections"),
    createRoute({
      method: "post",
      path: base,
      tags,
      summary: "Register a server (the caller owns it)",
      request: { body: jsonBody(NewConnection) },
      responses: { 201: json(WithWarning, "Created"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  getCurrent: guarded(
    USER,
    createRoute({
      method: "get",
      path: `${base}/current`,
      tags,
      summary: "The connection this credential selected",
      responses: { 200: json(Current, "Selected"), ...errorResponses(401, 404) },
    }),
  ),
  setCurrent: guarded(
    USER,
    createRoute({
      method: "post",
      path: `${base}/current`,
      tags,
      summary: "Select a connection (and database) for this credential",
      request: { body: jsonBody(z.object({ connection_id: Id, database_name: z.string().min(1).max(63).optional() }).strict()) },
      responses: { 200: json(Current, "Selected"), ...errorResponses(400, 401, 404) },
    }),
  ),
  clearCurrent: guarded(
    USER,
    createRoute({ method: "delete", path: `${base}/current`, tags, summary: "Clear the selection", responses: { ...noContent, ...errorResponses(401) } }),
  ),
  get: guarded(
    USER,
    createRoute({
      method: "get",
      path: `${base}/{id}`,
      tags,
      summary: "A connection",
      request: { params: IdParam },
      responses: { 200: json(Connection, "Connection"), ...errorResponses(401, 404) },
    }),
  ),
  update: guarded(
    USER,
    createRoute({
      method: "put",
      path: `${base}/{id}`,
      tags,
      summary: "Update a connection (its owner, or manage_connections)",
      request: { params: IdParam, body: jsonBody(ConnectionChanges) },
      responses: { 200: json(WithWarning, "Updated"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  remove: guarded(
    USER,
    createRoute({
      method: "delete",
      path: `${base}/{id}`,
      tags,
      summary: "Delete a connection and its samples (its owner, or manage_connections)",
      request: { params: IdParam },
      responses: { ...noContent, ...errorResponses(401, 403, 404) },
    }),
  ),
  databases: guarded(
    USER,
    createRoute({
      method: "get",
      path: `${base}/{id}/databases`,
      tags,
      summary: "Databases of the live server (asks it directly, 5 s timeout)",
      request: { params: IdParam },
      responses: {
        200: json(z.array(Database), "Databases"),
        502: json(z.object({ error: z.string() }), "The server cannot be reached"),
        ...errorResponses(401, 403, 404, 429, 503),
      },
    }),
  ),
};

/**
 * Changing a connection needs read_write on it (its owner, manage_connections or a read_write grant, within
 * the token's scope); sharing and clustering need manage_connections.
 */
async function assertMayModify(c: Context<AppEnv>, id: number, changes: { is_shared?: boolean; cluster_id?: number | null }) {
  const a = await authority(c);
  const row = await readableConnection(c.get("db"), id, a);
  if (connectionAccess(a, row) !== "read_write")
    throw new ApiError(403, "changing this connection needs read_write on it: be its owner, hold manage_connections or a read_write grant");
  if (!hasAdminPermission(a, "manage_connections") && (changes.is_shared !== undefined || changes.cluster_id !== undefined))
    throw new ApiError(403, "sharing a connection or moving it between clusters needs manage_connections");
  return row;
}

/** Fields that decide where, and how safely, the stored passwords are sent. */
const PASSWORD_ROUTE = ["host", "port", "database_name", "username", "sslmode", "ssl_root_cert", "allow_cleartext_password"] as const;
const LIVE_PASSWORD_ROUTE = [...PASSWORD_ROUTE.filter((k) => k !== "username"), "live_username"] as const;

/**
 * A stored password must not follow a connection to an endpoint its owner did not choose: whoever re-points
 * it (or weakens its TLS) re-enters the password, unless they own the connection or are a superuser. The
 * same holds for the live login's password.
 */
function assertPasswordsFollowOwner(
  a: Authority,
  row: ConnectionRow,
  changes: Record<string, unknown>,
  given: { password?: string | null; live_password?: string | null },
) {
  if (row.owner_user_id === a.principal.userId || actsAsSuperuser(a)) return;
  const checks = [
    { field: "password", stored: row.password_secret, route: PASSWORD_ROUTE },
    { field: "live_password", stored: row.live_password_secret, route: LIVE_PASSWORD_ROUTE },
  ] as const;
  for (const { field, stored, route } of checks) {
    const moved = route.filter((k) => changes[k] !== undefined && changes[k] !== row[k]);
    if (!moved.length || stored === null || given[field] !== undefined) continue;
    throw new ApiError(
      400,
      `changing ${moved.join(", ")} sends the stored ${field.replace("_", " ")} somewhere new: give \`${field}\` in the same request (only the owner or a superuser may keep the stored one)`,
    );
  }
}

/**
 * Asks the server (briefly) whether its login role is a superuser or similarly powerful, so whoever registers
 * it hears at once that the live tools will refuse it; an unreachable server gets no warning.
 */
async function liveToolsWarning(row: ConnectionRow, config: Config): Promise<string | undefined> {
  if (!row.is_monitored) return undefined;
  const live = liveLogin(row);
  const login = await withMonitoredClient(live, config.secret, rolePowers, { connectTimeoutMs: 3000, statementTimeoutMs: 3000 }).catch(() => undefined);
  if (!login?.powers.length) return undefined;
  const what = `connection ${row.id}'s live tools log in as ${login.role} (${login.powers.join(", ")})`;
  if (row.live_username) return `${what}: they will refuse it; make live_username a pg_monitor role without those powers`;
  return config.live_tools.role
    ? `${what}: they will SET ROLE ${config.live_tools.role}, which a caller's own SQL can undo; set live_username to a pg_monitor login`
    : `${what}: they will refuse it; set live_username to a pg_monitor login (or monitor with one)`;
}

const withWarning = async (row: ConnectionRow, config: Config) => {
  const warning = await liveToolsWarning(row, config);
  return { ...connectionJson(row), ...(warning ? { warning } : {}) };
};

export const connectionRoutes = newRouter()
  .openapi(r.list, async (c) => {
    const a = await authority(c);
    return c.json((await listConnections(c.get("db"))).filter((row) => connectionAccess(a, row) !== null).map(connectionJson), 200);
  })
  .openapi(r.create, async (c) => {
    const body = c.req.valid("json");
    const { password, live_password, ...rest } = body;
    const fieldsToStore: ConnectionFields = {
      ...rest,
      cluster_id: rest.cluster_id ?? null,
      password_secret: password ? await seal(password, c.get("config").secret) : null,
      live_password_secret: live_password ? await seal(live_password, c.get("config").secret) : null,
      owner_user_id: c.get("principal")!.userId,
    };
    return c.json(await withWarning(await createConnection(c.get("db"), fieldsToStore), c.get("config")), 201);
  })
  .openapi(r.getCurrent, async (c) => {
    const db = c.get("db");
    const current = await currentConnection(db, c.get("principal")!.tokenHash);
    if (!current) throw new ApiError(404, "no connection selected; POST /api/v1/connections/current selects one");
    const row = await readableConnection(db, current.connection_id, await authority(c));
    return c.json({ connection_id: row.id, database_name: current.database_name, name: row.name, host: row.host, port: row.port }, 200);
  })
  .openapi(r.setCurrent, async (c) => {
    const { connection_id, database_name } = c.req.valid("json");
    const db = c.get("db");
    const row = await readableConnection(db, connection_id, await authority(c));
    await selectCurrentConnection(db, c.get("principal")!.tokenHash, { connection_id, database_name: database_name ?? null });
    return c.json({ connection_id: row.id, database_name: database_name ?? null, name: row.name, host: row.host, port: row.port }, 200);
  })
  .openapi(r.clearCurrent, async (c) => {
    await clearCurrentConnection(c.get("db"), c.get("principal")!.tokenHash);
    return c.body(null, 204);
  })
  .openapi(r.get, async (c) => c.json(connectionJson(await readableConnection(c.get("db"), c.req.valid("param").id, await authority(c))), 200))
  .openapi(r.update, async (c) => {
    const { id } = c.req.valid("param");
    const { password, live_password, ...rest } = c.req.valid("json");
    const current = await assertMayModify(c, id, rest);
    assertPasswordsFollowOwner(await authority(c), current, rest, { password, live_password });
    // Absent leaves a stored password alone; null removes it.
    const sealOrClear = async (p: string | null | undefined) => (p === undefined ? undefined : p === null ? null : await seal(p, c.get("config").secret));
    const row = await updateConnection(c.get("db"), id, {
      ...rest,
      password_secret: await sealOrClear(password),
      live_password_secret: await sealOrClear(live_password),
    });
    const reached =
      LIVE_PASSWORD_ROUTE.some((k) => rest[k] !== undefined) ||
      rest.username !== undefined ||
      password !== undefined ||
      live_password !== undefined ||
      rest.is_monitored !== undefined;
    return c.json(reached ? await withWarning(row, c.get("config")) : connectionJson(row), 200);
  })
  .openapi(r.remove, async (c) => {
    const { id } = c.req.valid("param");
    await assertMayModify(c, id, {});
    await c.get("db").transaction((tx) => deleteConnection(tx, id));
    return c.body(null, 204);
  })
  .openapi(r.databases, async (c) => {
    const a = await authority(c);
    const row = await readableConnection(c.get("db"), c.req.valid("param").id, a);
    // A live session on the server with the stored credential is the get_schema_info tool's right, not mere read.
    if (!mayUseTool(a, "get_schema_info")) throw new ApiError(403, "listing a server's databases live needs the get_schema_info MCP privilege");
    const databases = await withLiveSlot(c.get("db"), row.id, a.principal.userId, liveLimits(c.get("config")), () =>
      withMonitoredClient(row, c.get("config").secret, monitoredDatabases),
    );
    return c.json(databases, 200);
  });
