import { createRoute, z } from "@hono/zod-openapi";
import { readableConnection } from "../auth/connection-access.ts";
import {
  OVERRIDE_SCOPES,
  deleteOverride,
  effectiveProbeConfigs,
  getProbeConfig,
  listGlobalConfigs,
  overridesFor,
  probeConfigJson,
  updateProbeConfig,
  upsertOverride,
} from "../datastore/probe-configs.ts";
import { NotFoundError } from "../errors.ts";
import { USER, admin, authority, guarded } from "../http/access.ts";
import { assertScopeVisible, assertScopeWholeReadable } from "../http/estate-view.ts";
import { Id, IdParam, PathId, json, jsonBody, noContent } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";
import { findProbe } from "../probes/index.ts";

const tags = ["Probe configuration"];
const MANAGE = admin("manage_probes");

const ProbeConfig = z
  .object({
    id: z.number().int(),
    probe_name: z.string(),
    scope: z.enum(["global", ...OVERRIDE_SCOPES]),
    scope_id: z.number().int().nullable(),
    is_enabled: z.boolean(),
    collection_interval_seconds: z.number().int(),
    retention_days: z.number().int(),
    updated_at: z.string(),
  })
  .openapi("ProbeConfig");
const Effective = z
  .object({
    probe_name: z.string(),
    is_enabled: z.boolean(),
    collection_interval_seconds: z.number().int(),
    retention_days: z.number().int(),
    source: z.enum(["server", "cluster", "group", "global", "default"]).openapi({ description: "Where the effective setting comes from" }),
    config_id: z.number().int().nullable(),
  })
  .openapi("EffectiveProbeConfig");
const Settings = z
  .object({ is_enabled: z.boolean(), collection_interval_seconds: Id.max(86_400), retention_days: Id.max(3650) })
  .partial()
  .strict()
  .openapi("ProbeSettings");
const ScopeParams = z.object({ scope: z.enum(OVERRIDE_SCOPES), scopeId: PathId });
const ProbeParams = ScopeParams.extend({
  probeName: z.string().refine((p) => findProbe(p) !== undefined, "unknown probe; GET /api/v1/probe-configs lists them"),
});

const r = {
  list: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/probe-configs",
      tags,
      summary: "Global probe settings, or with ?connection_id= the effective settings of one connection",
      request: { query: z.object({ connection_id: PathId.optional() }) },
      responses: { 200: json(z.union([z.array(ProbeConfig), z.array(Effective)]), "Settings"), ...errorResponses(400, 401, 404) },
    }),
  ),
  get: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/probe-configs/{id}",
      tags,
      summary: "One probe configuration row",
      request: { params: IdParam },
      responses: { 200: json(ProbeConfig, "Row"), ...errorResponses(401, 404) },
    }),
  ),
  update: guarded(
    MANAGE,
    createRoute({
      method: "put",
      path: "/api/v1/probe-configs/{id}",
      tags,
      summary: "Change a configuration row",
      request: { params: IdParam, body: jsonBody(Settings) },
      responses: { 200: json(ProbeConfig, "Updated"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  overrides: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/probe-overrides/{scope}/{scopeId}",
      tags,
      summary: "Overrides of a server, cluster or group",
      request: { params: ScopeParams },
      responses: { 200: json(z.array(ProbeConfig), "Overrides"), ...errorResponses(400, 401, 404) },
    }),
  ),
  override: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/probe-overrides/{scope}/{scopeId}/{probeName}",
      tags,
      summary: "One override",
      request: { params: ProbeParams },
      responses: { 200: json(ProbeConfig, "Override"), ...errorResponses(400, 401, 404) },
    }),
  ),
  putOverride: guarded(
    MANAGE,
    createRoute({
      method: "put",
      path: "/api/v1/probe-overrides/{scope}/{scopeId}/{probeName}",
      tags,
      summary: "Create or change an override (settings not given are copied from the global row)",
      request: { params: ProbeParams, body: jsonBody(Settings) },
      responses: { 200: json(ProbeConfig, "Override"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  deleteOverride: guarded(
    MANAGE,
    createRoute({
      method: "delete",
      path: "/api/v1/probe-overrides/{scope}/{scopeId}/{probeName}",
      tags,
      summary: "Remove an override",
      request: { params: ProbeParams },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404) },
    }),
  ),
};

export const probeConfigRoutes = newRouter()
  .openapi(r.list, async (c) => {
    const { connection_id } = c.req.valid("query");
    const db = c.get("db");
    if (connection_id === undefined) return c.json((await listGlobalConfigs(db)).map(probeConfigJson), 200);
    await readableConnection(db, connection_id, await authority(c));
    return c.json([...(await effectiveProbeConfigs(db, [connection_id])).get(connection_id)!.values()], 200);
  })
  .openapi(r.get, async (c) => {
    const row = await getProbeConfig(c.get("db"), c.req.valid("param").id);
    if (row.scope !== "global")
      await assertScopeVisible(c, row.scope, row.scope_id!).catch(() => {
        throw new NotFoundError(`probe config ${row.id} not found`);
      });
    return c.json(probeConfigJson(row), 200);
  })
  .openapi(r.update, async (c) => c.json(probeConfigJson(await updateProbeConfig(c.get("db"), c.req.valid("param").id, c.req.valid("json"))), 200))
  .openapi(r.overrides, async (c) => {
    const { scope, scopeId } = c.req.valid("param");
    await assertScopeVisible(c, scope, scopeId);
    return c.json((await overridesFor(c.get("db"), scope, scopeId)).map(probeConfigJson), 200);
  })
  .openapi(r.override, async (c) => {
    const { scope, scopeId, probeName } = c.req.valid("param");
    await assertScopeVisible(c, scope, scopeId);
    const row = (await overridesFor(c.get("db"), scope, scopeId)).find((o) => o.probe_name === probeName);
    if (!row) throw new NotFoundError(`no ${scope} override of \`${probeName}\` for ${scope} ${scopeId}`);
    return c.json(probeConfigJson(row), 200);
  })
  .openapi(r.putOverride, async (c) => {
    const { scope, scopeId, probeName } = c.req.valid("param");
    await assertScopeWholeReadable(c, scope, scopeId, "a probe override");
    return c.json(probeConfigJson(await upsertOverride(c.get("db"), scope, scopeId, probeName, c.req.valid("json"))), 200);
  })
  .openapi(r.deleteOverride, async (c) => {
    const { scope, scopeId, probeName } = c.req.valid("param");
    await assertScopeWholeReadable(c, scope, scopeId, "a probe override");
    await deleteOverride(c.get("db"), scope, scopeId, probeName);
    return c.body(null, 204);
  });
