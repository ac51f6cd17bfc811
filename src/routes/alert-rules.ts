import { createRoute, z } from "@hono/zod-openapi";
import { OPERATORS, SEVERITIES } from "../vocabulary/builtin-rules.ts";
import { effectiveSetting } from "../alerts/effective-setting.ts";
import { clusterPlace } from "../datastore/clusters.ts";
import {
  type AlertRuleRow,
  type Availability,
  deleteAlertOverride,
  getAlertRule,
  listAlertRules,
  listOverrides,
  overridesOfScope,
  ruleAvailability,
  updateAlertRule,
  upsertAlertOverride,
} from "../datastore/alert-rules.ts";
import { readableConnection } from "../auth/connection-access.ts";
import { OVERRIDE_SCOPES } from "../datastore/probe-configs.ts";
import { InputError } from "../errors.ts";
import { USER, admin, authority, guarded } from "../http/access.ts";
import { assertScopeVisible, assertScopeWholeReadable } from "../http/estate-view.ts";
import { IdParam, PathId, json, jsonBody, noContent } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";

const tags = ["Alert rules"];
const MANAGE = admin("manage_alert_rules");

const Rule = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    category: z.string(),
    metric_name: z.string(),
    metric_unit: z.string().nullable(),
    default_operator: z.enum(OPERATORS),
    default_threshold: z.number(),
    default_severity: z.enum(SEVERITIES),
    default_enabled: z.boolean(),
    default_for_minutes: z
      .number()
      .int()
      .openapi({ description: "The condition must hold this many minutes before the alert fires (pending until then, not notified); 0: at once" }),
    default_clear_delay_minutes: z
      .number()
      .int()
      .openapi({ description: "The alert clears only after the condition has been false this many minutes; 0: at once" }),
    required_extension: z.string().nullable(),
    is_built_in: z.boolean(),
    created_at: z.string(),
    available: z
      .boolean()
      .openapi({ description: "False when pglens cannot evaluate the rule (data it does not collect, or an extension no monitored server has)" }),
    unavailable_reason: z.string().nullable(),
  })
  .openapi("AlertRule");

const MINUTES = z.number().int().min(0).max(1440);
const RuleChanges = z
  .object({
    default_operator: z.enum(OPERATORS),
    default_threshold: z.number(),
    default_severity: z.enum(SEVERITIES),
    default_enabled: z.boolean(),
    default_for_minutes: MINUTES,
    default_clear_delay_minutes: MINUTES,
  })
  .partial()
  .strict()
  .refine(
    (v) => Object.keys(v).length > 0,
    "give at least one of default_operator, default_threshold, default_severity, default_enabled, default_for_minutes, default_clear_delay_minutes",
  )
  .openapi("AlertRuleChanges");

const Setting = z.object({
  operator: z.enum(OPERATORS),
  threshold: z.number(),
  severity: z.enum(SEVERITIES),
  enabled: z.boolean(),
  for_minutes: MINUTES.nullable().optional().openapi({ description: "Overrides the rule's default_for_minutes here; null or absent: the rule's" }),
  clear_delay_minutes: MINUTES.nullable()
    .optional()
    .openapi({ description: "Overrides the rule's default_clear_delay_minutes here; null or absent: the rule's" }),
});
const OverrideBody = Setting.extend({
  database_name: z.string().min(1).max(63).optional().openapi({ description: "Server scope only: the override applies to this database" }),
})
  .strict()
  .openapi("AlertOverrideSettings");

const ScopeEntry = Rule.pick({
  name: true,
  description: true,
  category: true,
  metric_name: true,
  metric_unit: true,
  default_operator: true,
  default_threshold: true,
  default_severity: true,
  default_enabled: true,
  default_for_minutes: true,
  default_clear_delay_minutes: true,
})
  .extend({
    override_for_minutes: z.number().int().nullable(),
    override_clear_delay_minutes: z.number().int().nullable(),
    rule_id: z.number().int(),
    has_override: z.boolean(),
    override_operator: z.enum(OPERATORS).nullable(),
    override_threshold: z.number().nullable(),
    override_severity: z.enum(SEVERITIES).nullable(),
    override_enabled: z.boolean().nullable(),
    database_overrides: z.array(Setting.extend({ database_name: z.string() })).openapi({ description: "Server scope: overrides for single databases" }),
  })
  .openapi("AlertOverrideEntry");

const ScopeParams = z.object({ scope: z.enum(OVERRIDE_SCOPES), scopeId: PathId });
const RuleParams = ScopeParams.extend({ ruleId: PathId });

const r = {
  list: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/alert-rules",
      tags,
      summary: "Alert rules, by category and name",
      responses: { 200: json(z.array(Rule), "Rules"), ...errorResponses(401) },
    }),
  ),
  get: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/alert-rules/{id}",
      tags,
      summary: "One alert rule",
      request: { params: IdParam },
      responses: { 200: json(Rule, "Rule"), ...errorResponses(400, 401, 404) },
    }),
  ),
  update: guarded(
    MANAGE,
    createRoute({
      method: "put",
      path: "/api/v1/alert-rules/{id}",
      tags,
      summary: "Change a rule's defaults",
      request: { params: IdParam, body: jsonBody(RuleChanges) },
      responses: { 200: json(Rule, "Updated"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  context: guarded(
    MANAGE,
    createRoute({
      method: "get",
      path: "/api/v1/alert-overrides/context/{connectionId}/{ruleId}",
      tags,
      summary: "Where a connection sits (cluster, group), the rule, its override at each level and the setting in effect",
      request: { params: z.object({ connectionId: PathId, ruleId: PathId }) },
      responses: {
        200: json(
          z.object({
            hierarchy: z.object({
              connection_id: z.number().int(),
              server_name: z.string(),
              cluster_id: z.number().int().nullable(),
              cluster_name: z.string().nullable(),
              group_id: z.number().int().nullable(),
              group_name: z.string().nullable(),
            }),
            rule: Rule,
            overrides: z.object({ server: Setting.nullable(), cluster: Setting.nullable(), group: Setting.nullable() }),
            effective: Setting.extend({ source: z.string() }),
          }),
          "Context",
        ),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
  ),
  scope: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/alert-overrides/{scope}/{scopeId}",
      tags,
      summary: "Every rule with its defaults and this server's, cluster's or group's override",
      request: { params: ScopeParams },
      responses: { 200: json(z.array(ScopeEntry), "Rules and overrides"), ...errorResponses(400, 401, 404) },
    }),
  ),
  put: guarded(
    MANAGE,
    createRoute({
      method: "put",
      path: "/api/v1/alert-overrides/{scope}/{scopeId}/{ruleId}",
      tags,
      summary: "Create or replace an override",
      request: { params: RuleParams, body: jsonBody(OverrideBody) },
      responses: { 200: json(z.object({ status: z.literal("ok") }), "Saved"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  remove: guarded(
    MANAGE,
    createRoute({
      method: "delete",
      path: "/api/v1/alert-overrides/{scope}/{scopeId}/{ruleId}",
      tags,
      summary: "Remove an override (idempotent)",
      request: { params: RuleParams, query: z.object({ database_name: z.string().min(1).max(63).optional() }) },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404) },
    }),
  ),
};

const ruleJson = (rule: AlertRuleRow, a: Availability) => ({ ...rule, created_at: rule.created_at.toISOString(), ...a });
const setting = (
  o: { operator: string; threshold: number; severity: string; enabled: boolean; for_minutes?: number | null; clear_delay_minutes?: number | null } | undefined,
) =>
  o
    ? {
        operator: o.operator as (typeof OPERATORS)[number],
        threshold: o.threshold,
        severity: o.severity as (typeof SEVERITIES)[number],
        enabled: o.enabled,
        for_minutes: o.for_minutes ?? null,
        clear_delay_minutes: o.clear_delay_minutes ?? null,
      }
    : null;

export const alertRuleRoutes = newRouter()
  .openapi(r.list, async (c) => {
    const rules = await listAlertRules(c.get("db"));
    const availability = await ruleAvailability(c.get("db"), rules);
    return c.json(
      rules.map((rule) => ruleJson(rule, availability.get(rule.id)!)),
      200,
    );
  })
  .openapi(r.get, async (c) => {
    const rule = await getAlertRule(c.get("db"), c.req.valid("param").id);
    return c.json(ruleJson(rule, (await ruleAvailability(c.get("db"), [rule])).get(rule.id)!), 200);
  })
  .openapi(r.update, async (c) => {
    const rule = await updateAlertRule(c.get("db"), c.req.valid("param").id, c.req.valid("json"));
    return c.json(ruleJson(rule, (await ruleAvailability(c.get("db"), [rule])).get(rule.id)!), 200);
  })
  .openapi(r.context, async (c) => {
    const { connectionId, ruleId } = c.req.valid("param");
    const db = c.get("db");
    const conn = await readableConnection(db, connectionId, await authority(c));
    const rule = await getAlertRule(db, ruleId);
    const place = await clusterPlace(db, conn.cluster_id);
    const overrides = (await listOverrides(db)).filter((o) => o.rule_id === ruleId);
    const at = (scope: string, id: number | null | undefined) =>
      setting(overrides.find((o) => o.scope === scope && o.scope_id === id && o.database_name === ""));
    const placement = { connectionId, clusterId: conn.cluster_id, groupId: place?.group_id ?? null };
    return c.json(
      {
        hierarchy: {
          connection_id: connectionId,
          server_name: conn.name,
          cluster_id: conn.cluster_id,
          cluster_name: place?.cluster_name ?? null,
          group_id: placement.groupId,
          group_name: place?.group_name ?? null,
        },
        rule: ruleJson(rule, (await ruleAvailability(db, [rule])).get(rule.id)!),
        overrides: { server: at("server", connectionId), cluster: at("cluster", conn.cluster_id), group: at("group", placement.groupId) },
        effective: effectiveSetting(rule, overrides, placement, ""),
      },
      200,
    );
  })
  .openapi(r.scope, async (c) => {
    const { scope, scopeId } = c.req.valid("param");
    await assertScopeVisible(c, scope, scopeId);
    const db = c.get("db");
    const overrides = await overridesOfScope(db, scope, scopeId);
    return c.json(
      (await listAlertRules(db)).map((rule) => {
        const own = overrides.find((o) => o.rule_id === rule.id && o.database_name === "");
        return {
          rule_id: rule.id,
          name: rule.name,
          description: rule.description,
          category: rule.category,
          metric_name: rule.metric_name,
          metric_unit: rule.metric_unit,
          default_operator: rule.default_operator,
          default_threshold: rule.default_threshold,
          default_severity: rule.default_severity,
          default_enabled: rule.default_enabled,
          has_override: own !== undefined,
          override_operator: own?.operator ?? null,
          override_threshold: own?.threshold ?? null,
          override_severity: own?.severity ?? null,
          override_enabled: own?.enabled ?? null,
          default_for_minutes: rule.default_for_minutes,
          default_clear_delay_minutes: rule.default_clear_delay_minutes,
          override_for_minutes: own?.for_minutes ?? null,
          override_clear_delay_minutes: own?.clear_delay_minutes ?? null,
          database_overrides: overrides
            .filter((o) => o.rule_id === rule.id && o.database_name !== "")
            .map((o) => ({ database_name: o.database_name, ...setting(o)! })),
        };
      }),
      200,
    );
  })
  .openapi(r.put, async (c) => {
    const { scope, scopeId, ruleId } = c.req.valid("param");
    const body = c.req.valid("json");
    if (body.database_name !== undefined && scope !== "server") throw new InputError("database_name: only a server override can name a database");
    await assertScopeWholeReadable(c, scope, scopeId, "an alert override");
    await getAlertRule(c.get("db"), ruleId);
    await upsertAlertOverride(c.get("db"), { rule_id: ruleId, scope, scope_id: scopeId, ...body });
    return c.json({ status: "ok" as const }, 200);
  })
  .openapi(r.remove, async (c) => {
    const { scope, scopeId, ruleId } = c.req.valid("param");
    const { database_name } = c.req.valid("query");
    if (database_name !== undefined && scope !== "server") throw new InputError("database_name: only a server override can name a database");
    await assertScopeWholeReadable(c, scope, scopeId, "an alert override");
    await getAlertRule(c.get("db"), ruleId);
    await deleteAlertOverride(c.get("db"), ruleId, scope, scopeId, database_name);
    return c.body(null, 204);
  });
