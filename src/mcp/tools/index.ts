import { isToolEnabled, type Config } from "../../config.ts";
import type { ToolDefinition } from "../tool.ts";
import { describeProbe } from "./describe-probe.ts";
import { listProbes } from "./list-probes.ts";
import { queryMetrics } from "./query-metrics.ts";

/** Every tool pglens offers, in the order they are listed. */
export const TOOLS: readonly ToolDefinition[] = [listProbes, describeProbe, queryMetrics] as unknown as ToolDefinition[];

/** The tools this configuration leaves switched on. */
export function enabledTools(config: Config): ToolDefinition[] {
  return TOOLS.filter((t) => isToolEnabled(config, t.name));
}
