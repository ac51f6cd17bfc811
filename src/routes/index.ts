import { healthRoutes } from "./health.ts";
import { mcpToolRoutes } from "./mcp-tools.ts";
import { metricsRoutes } from "./metrics.ts";

/** Every route module of the API, mounted at the root by createApp. */
export const ROUTE_MODULES = [healthRoutes, metricsRoutes, mcpToolRoutes];
