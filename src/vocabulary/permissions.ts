/** Names of the admin permissions groups can hold; `*` means all of them. */
export const ADMIN_PERMISSIONS = [
  "manage_connections",
  "manage_groups",
  "manage_permissions",
  "manage_users",
  "manage_token_scopes",
  "manage_blackouts",
  "manage_probes",
  "manage_alert_rules",
  "manage_notification_channels",
  "store_system_memory",
] as const;
export type AdminPermission = (typeof ADMIN_PERMISSIONS)[number];
export const ALL = "*";

export const ACCESS_LEVELS = ["read", "read_write"] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

/** MCP items that can be granted; tools are added as they are built. */
export const MCP_PRIVILEGES: ReadonlyArray<{ identifier: string; item_type: "tool" | "resource" | "prompt"; description: string }> = [
  { identifier: "list_connections", item_type: "tool", description: "List the connections the caller may see" },
  { identifier: "list_probes", item_type: "tool", description: "List the metric probes of the datastore" },
  { identifier: "describe_probe", item_type: "tool", description: "Describe the columns of a probe" },
  { identifier: "query_metrics", item_type: "tool", description: "Query collected metrics of a connection" },
  { identifier: "query_database", item_type: "tool", description: "Run read-only SQL on a monitored database" },
  { identifier: "get_schema_info", item_type: "tool", description: "Describe the schema of a monitored database" },
  { identifier: "execute_explain", item_type: "tool", description: "EXPLAIN a statement on a monitored database" },
  { identifier: "list_alerts", item_type: "tool", description: "List alerts of the connections the caller may read" },
  { identifier: "get_alert_rules", item_type: "tool", description: "List the alert rules and their defaults" },
  { identifier: "list_blackouts", item_type: "tool", description: "List the maintenance windows the caller can see" },
  { identifier: "get_timeline", item_type: "tool", description: "What happened on the servers the caller can see" },
  { identifier: "get_performance_summary", item_type: "tool", description: "Cache hit ratio, transactions, checkpoints and xid age of connections" },
  { identifier: "get_top_queries", item_type: "tool", description: "The costliest statements of a connection, lifetime or over a window" },
  { identifier: "get_latest_snapshot", item_type: "tool", description: "The latest sample of a probe, one row per entity" },
  { identifier: "store_memory", item_type: "tool", description: "Remember a fact for later chats (yours, or everyone's with store_system_memory)" },
  { identifier: "recall_memories", item_type: "tool", description: "Find your memories and the system's by meaning or words" },
  { identifier: "get_overview", item_type: "tool", description: "The estate at a glance, with an LLM's summary" },
  { identifier: "get_metric_series", item_type: "tool", description: "Raw and derived metrics (rates, deltas, percentages) of connections over time" },
  { identifier: "get_metric_baselines", item_type: "tool", description: "What is normal for the alerter's metrics: stored baselines per hour and weekday" },
  { identifier: "count_rows", item_type: "tool", description: "Count the rows of a table on a monitored database, read-only" },
];
