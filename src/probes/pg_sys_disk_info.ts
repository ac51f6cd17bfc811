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
};
