import { alertRuleRoutes } from "./alert-rules.ts";
import { alertRoutes } from "./alerts.ts";
import { authRoutes } from "./auth.ts";
import { blackoutScheduleRoutes } from "./blackout-schedules.ts";
import { blackoutRoutes } from "./blackouts.ts";
import { channelOverrideRoutes } from "./channel-overrides.ts";
import { chatCompactRoutes } from "./chat-compact.ts";
import { clusterRoutes } from "./clusters.ts";
import { docsRoutes } from "./docs.ts";
import { connectionRoutes } from "./connections.ts";
import { conversationRoutes } from "./conversations.ts";
import { healthRoutes } from "./health.ts";
import { llmRoutes } from "./llm.ts";
import { mcpRoutes } from "./mcp.ts";
import { memoryRoutes } from "./memories.ts";
import { mcpToolRoutes } from "./mcp-tools.ts";
import { metricsRoutes } from "./metrics.ts";
import { metricsPrometheusRoutes } from "./metrics-prometheus.ts";
import { metricsStatementRoutes } from "./metrics-statements.ts";
import { metricsSummaryRoutes } from "./metrics-summaries.ts";
import { notificationChannelRoutes } from "./notification-channels.ts";
import { overviewRoutes, overviewStreamRoutes } from "./overview.ts";
import { metricsBaselineRoutes } from "./metrics-baselines.ts";
import { probeConfigRoutes } from "./probe-configs.ts";
import { rbacGroupRoutes } from "./rbac-groups.ts";
import { rbacPrivilegeRoutes } from "./rbac-privileges.ts";
import { rbacTokenRoutes } from "./rbac-tokens.ts";
import { rbacUserRoutes } from "./rbac-users.ts";
import { serverAnalysisRoutes, serverInfoRoutes } from "./server-info.ts";
import { timelineRoutes } from "./timeline.ts";
import { consoleRoutes } from "../console/routes.tsx";
import { blackoutPageRoutes } from "../console/blackout-routes.tsx";

/** Every route module of the API, mounted at the root by createApp. */
export const ROUTE_MODULES = [
  healthRoutes,
  authRoutes,
  rbacUserRoutes,
  rbacGroupRoutes,
  rbacTokenRoutes,
  rbacPrivilegeRoutes,
  connectionRoutes,
  clusterRoutes,
  probeConfigRoutes,
  serverInfoRoutes,
  serverAnalysisRoutes,
  metricsRoutes,
  metricsSummaryRoutes,
  metricsStatementRoutes,
  metricsBaselineRoutes,
  metricsPrometheusRoutes,
  alertRoutes,
  alertRuleRoutes,
  blackoutRoutes,
  blackoutScheduleRoutes,
  timelineRoutes,
  notificationChannelRoutes,
  channelOverrideRoutes,
  llmRoutes,
  conversationRoutes,
  chatCompactRoutes,
  memoryRoutes,
  overviewRoutes,
  overviewStreamRoutes,
  mcpToolRoutes,
  mcpRoutes,
  docsRoutes,
  consoleRoutes,
  blackoutPageRoutes,
];
