import { createRoute, z } from "@hono/zod-openapi";
import {
  CHANNEL_TYPES,
  deleteChannelOverride,
  getChannel,
  listChannelOverrides,
  listChannels,
  setChannelOverride,
} from "../datastore/notification-channels.ts";
import { OVERRIDE_SCOPES } from "../datastore/probe-configs.ts";
import { admin, guarded } from "../http/access.ts";
import { assertScopeVisible, assertScopeWholeReadable } from "../http/estate-view.ts";
import { PathId, json, jsonBody, noContent } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";

const tags = ["Notification channels"];
const ScopeParams = z.object({ scope: z.enum(OVERRIDE_SCOPES), scopeId: PathId });
const ChannelParams = ScopeParams.extend({ channelId: PathId });

const Entry = z
  .object({
    channel_id: z.number().int(),
    channel_name: z.string(),
    channel_type: z.enum(CHANNEL_TYPES),
    description: z.string(),
    is_estate_default: z.boolean(),
    has_override: z.boolean(),
    override_enabled: z.boolean().nullable(),
  })
  .openapi("ChannelOverrideEntry");

const r = {
  list: guarded(
    admin("manage_notification_channels"),
    createRoute({
      method: "get",
      path: "/api/v1/channel-overrides/{scope}/{scopeId}",
      tags,
      summary: "Every enabled channel with this server's, cluster's or group's override (channel names are for channel managers only)",
      request: { params: ScopeParams },
      responses: { 200: json(z.array(Entry), "Channels"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  put: guarded(
    admin("manage_notification_channels"),
    createRoute({
      method: "put",
      path: "/api/v1/channel-overrides/{scope}/{scopeId}/{channelId}",
      tags,
      summary: "Turn a channel on or off for a server, cluster or group",
      request: { params: ChannelParams, body: jsonBody(z.object({ enabled: z.boolean() }).strict()) },
      responses: { 200: json(z.object({ status: z.literal("ok") }), "Saved"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  remove: guarded(
    admin("manage_notification_channels"),
    createRoute({
      method: "delete",
      path: "/api/v1/channel-overrides/{scope}/{scopeId}/{channelId}",
      tags,
      summary: "Remove an override (idempotent)",
      request: { params: ChannelParams },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404) },
    }),
  ),
};

export const channelOverrideRoutes = newRouter()
  .openapi(r.list, async (c) => {
    const { scope, scopeId } = c.req.valid("param");
    await assertScopeVisible(c, scope, scopeId);
    const overrides = (await listChannelOverrides(c.get("db"))).filter((o) => o.scope === scope && o.scope_id === scopeId);
    return c.json(
      (await listChannels(c.get("db")))
        .filter((ch) => ch.enabled)
        .map((ch) => {
          const own = overrides.find((o) => o.channel_id === ch.id);
          return {
            channel_id: ch.id,
            channel_name: ch.name,
            channel_type: ch.channel_type,
            description: ch.description,
            is_estate_default: ch.is_estate_default,
            has_override: own !== undefined,
            override_enabled: own?.enabled ?? null,
          };
        }),
      200,
    );
  })
  .openapi(r.put, async (c) => {
    const { scope, scopeId, channelId } = c.req.valid("param");
    await assertScopeWholeReadable(c, scope, scopeId, "a channel override");
    await getChannel(c.get("db"), channelId);
    await setChannelOverride(c.get("db"), { channel_id: channelId, scope, scope_id: scopeId, enabled: c.req.valid("json").enabled });
    return c.json({ status: "ok" as const }, 200);
  })
  .openapi(r.remove, async (c) => {
    const { scope, scopeId, channelId } = c.req.valid("param");
    await assertScopeWholeReadable(c, scope, scopeId, "a channel override");
    await getChannel(c.get("db"), channelId);
    await deleteChannelOverride(c.get("db"), channelId, scope, scopeId);
    return c.body(null, 204);
  });
