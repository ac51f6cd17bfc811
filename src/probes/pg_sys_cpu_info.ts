import { dim, gauge } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgSysCpuInfo: ProbeDefinition = {
  name: "pg_sys_cpu_info",
  description: "Host CPU model, cores and caches (system_stats extension)",
  scope: "system",
  defaultIntervalSeconds: 600,
  defaultRetentionDays: 7,
  keys: [],
  columns: [
    dim("vendor", "CPU vendor"),
    dim("description", "CPU description"),
    dim("model_name", "CPU model"),
    dim("processor_type", "Processor type"),
    dim("architecture", "Architecture"),
    gauge("logical_processor", "Logical processors", "integer"),
    gauge("physical_processor", "Physical processors", "integer"),
    gauge("no_of_cores", "Cores", "integer"),
    gauge("clock_speed_hz", "Clock speed (Hz)"),
    gauge("l1dcache_size", "L1 data cache size"),
    gauge("l1icache_size", "L1 instruction cache size"),
    gauge("l2cache_size", "L2 cache size"),
    gauge("l3cache_size", "L3 cache size"),
  ],
  collect: {
    runs: "server",
    extension: "system_stats",
    sql: () => [
      `SELECT vendor, description, model_name, processor_type, architecture, logical_processor, physical_processor, no_of_cores, clock_speed_hz,
              l1dcache_size, l1icache_size, l2cache_size, l3cache_size FROM pg_sys_cpu_info()`,
    ],
  },
};
