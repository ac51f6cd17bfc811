/**
 * CPU time a PostgreSQL server started by the benchmarks has spent, read from Linux's /proc: the postmaster's own
 * and that of the backends it has reaped (a collector's sessions once it closes its pool, autovacuum workers).
 * Long-lived processes (the checkpointer, open sessions, WAL senders) count only once they exit.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Milliseconds, or undefined where /proc cannot be read (not Linux). */
export function serverCpuMs(dataDir: string): number | undefined {
  try {
    const pid = readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0].trim();
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The fields after the command name, from stat(5)'s third on: utime, stime, cutime, cstime are the 14th to 17th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0);
    return ticks * 10; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}
