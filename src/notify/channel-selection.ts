/**
 * Which channels hear about a connection's alerts: the enabled channels whose setting for it is on, where
 * the setting is the server's override, else its cluster's, else its cluster group's, else the channel's
 * `is_estate_default`.
 */
import type { Placement } from "../blackouts/scope.ts";
import type { ChannelOverride } from "../datastore/notification-channels.ts";

export function channelsFor(
  channels: ReadonlyArray<{ id: number; enabled: boolean; is_estate_default: boolean }>,
  overrides: readonly ChannelOverride[],
  p: Placement,
): number[] {
  const find = (channelId: number, scope: ChannelOverride["scope"], id: number | null) =>
    id === null ? undefined : overrides.find((o) => o.channel_id === channelId && o.scope === scope && o.scope_id === id)?.enabled;
  return channels
    .filter(
      (c) => c.enabled && (find(c.id, "server", p.connectionId) ?? find(c.id, "cluster", p.clusterId) ?? find(c.id, "group", p.groupId) ?? c.is_estate_default),
    )
    .map((c) => c.id);
}
