import { gauge } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgSysMemoryInfo: ProbeDefinition = {
  name: "pg_sys_memory_info",
  description: "Host memory and swap usage in bytes (system_stats extension)",
  scope: "system",
  defaultIntervalSeconds: 600,
  defaultRetentionDays: 7,
  keys: [],
  columns: [
    gauge("total_memory", "Total memory (bytes)"),
    gauge("used_memory", "Used memory (bytes)"),
    gauge("free_memory", "Free memory (bytes)"),
    gauge("swap_total", "Total swap (bytes)"),
    gauge("swap_used", "Used swap (bytes)"),
    gauge("swap_free", "Free swap (bytes)"),
    gauge("cache_total", "Page cache (bytes)"),
    gauge("kernel_total", "Kernel memory (bytes; Windows)"),
    gauge("kernel_paged", "Paged kernel memory (bytes; Windows)"),
    gauge("kernel_non_paged", "Non-paged kernel memory (bytes; Windows)"),
    gauge("total_page_file", "Page file size (bytes; Windows)"),
    gauge("avail_page_file", "Available page file (bytes; Windows)"),
  ],
  collect: {
    runs: "server",
    extension: "system_stats",
    sql: () => [
      `SELECT total_memory, used_memory, free_memory, swap_total, swap_used, swap_free, cache_total, kernel_total, kernel_paged,
              kernel_non_paged, total_page_file, avail_page_file FROM pg_sys_memory_info()`,
    ],
  },
};
