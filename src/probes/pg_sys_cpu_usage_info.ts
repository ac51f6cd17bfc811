import { ratio } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

const percent = (name: string, description: string) => ratio(name, `${description} (percent)`, "real");

export const pgSysCpuUsageInfo: ProbeDefinition = {
  name: "pg_sys_cpu_usage_info",
  description: "Host CPU usage by mode, as percentages (system_stats extension); the *_time_percent columns are Windows-only",
  scope: "system",
  defaultIntervalSeconds: 600,
  defaultRetentionDays: 7,
  keys: [],
  columns: [
    percent("usermode_normal_process_percent", "Time in user mode, normal processes"),
    percent("usermode_niced_process_percent", "Time in user mode, niced processes"),
    percent("kernelmode_process_percent", "Time in kernel mode"),
    percent("idle_mode_percent", "Time idle"),
    percent("io_completion_percent", "Time waiting for I/O"),
    percent("servicing_irq_percent", "Time servicing interrupts"),
    percent("servicing_softirq_percent", "Time servicing soft interrupts"),
    percent("user_time_percent", "Time in user mode; Windows"),
    percent("processor_time_percent", "Time busy; Windows"),
    percent("privileged_time_percent", "Time in privileged mode; Windows"),
    percent("interrupt_time_percent", "Time servicing interrupts; Windows"),
  ],
  collect: {
    runs: "server",
    extension: "system_stats",
    sql: () => [
      `SELECT usermode_normal_process_percent, usermode_niced_process_percent, kernelmode_process_percent, idle_mode_percent, io_completion_percent,
              servicing_irq_percent, servicing_softirq_percent, user_time_percent, processor_time_percent, privileged_time_percent, interrupt_time_percent
         FROM pg_sys_cpu_usage_info()`,
    ],
  },
};
