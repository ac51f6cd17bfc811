import { counter, dim, gauge } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

/** Loopback interfaces carry no traffic worth watching; every query leaves them out. */
export const LOOPBACK_INTERFACES: readonly string[] = ["lo", "lo0"];

export const pgSysNetworkInfo: ProbeDefinition = {
  name: "pg_sys_network_info",
  description: "Traffic and errors of each network interface, loopback excluded from queries (system_stats extension)",
  scope: "system",
  defaultIntervalSeconds: 600,
  defaultRetentionDays: 7,
  keys: ["interface_name"],
  columns: [
    dim("interface_name", "Network interface"),
    dim("ip_address", "Address of the interface"),
    counter("tx_bytes", "Bytes sent"),
    counter("tx_packets", "Packets sent"),
    counter("tx_errors", "Send errors"),
    counter("tx_dropped", "Outgoing packets dropped"),
    counter("rx_bytes", "Bytes received"),
    counter("rx_packets", "Packets received"),
    counter("rx_errors", "Receive errors"),
    counter("rx_dropped", "Incoming packets dropped"),
    gauge("link_speed_mbps", "Link speed (Mbit/s)"),
  ],
  collect: {
    runs: "server",
    extension: "system_stats",
    sql: () => [
      `SELECT interface_name, ip_address, tx_bytes, tx_packets, tx_errors, tx_dropped, rx_bytes, rx_packets, rx_errors, rx_dropped, link_speed_mbps
         FROM pg_sys_network_info()`,
    ],
  },
};
