/**
 * One word for how a server stands, as the estate page shows it. A demo server (generated history, never
 * contacted) says so instead of looking online; then what a DBA must act on comes first.
 */
export type ServerStatus = "demo" | "unreachable" | "in a blackout" | "alerting" | "ok";

export function serverStatus(s: { demo: boolean; connectionError: string | null; inBlackout: boolean; openAlerts: number }): ServerStatus {
  if (s.demo) return "demo";
  if (s.connectionError) return "unreachable";
  if (s.inBlackout) return "in a blackout";
  return s.openAlerts > 0 ? "alerting" : "ok";
}
