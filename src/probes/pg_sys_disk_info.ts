import { dim, gauge } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgSysDiskInfo: ProbeDefinition = {
  name: "pg_sys_disk_info",
  description: "Space and inodes of each mounted file system (system_stats extension)",
  scope: "system",
  defaultIntervalSeconds: 600,
  defaultRetentionDays: 7,
  keys: ["mount_point"],
  columns: [
    dim("mount_point", "Mount point"),
    dim("file_system", "Device"),
    dim("drive_letter", "Drive letter (Windows)"),
    dim("drive_type", "Drive type"),
    dim("file_system_type", "File system type"),
    gauge("total_space", "Total space (bytes)"),
    gauge("used_space", "Used space (bytes)"),
    gauge("free_space", "Free space (bytes)"),
    gauge("total_inodes", "Total inodes"),
    gauge("used_inodes", "Used inodes"),
    gauge("free_inodes", "Free inodes"),
  ],
  collect: {
    runs: "server",
    extension: "system_stats",
    sql: () => [
      `SELECT coalesce(mount_point, drive_letter, file_system) AS mount_point, file_system, drive_letter, drive_type, file_system_type,
              total_space, used_space, free_space, total_inodes, used_inodes, free_inodes FROM pg_sys_disk_info()`,
    ],
  },
};
