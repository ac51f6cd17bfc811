/** How the console writes times and numbers: UTC instants, ages a person reads at a glance, short numbers. */
export const utc = (d: Date | string | null) => (d ? `${new Date(d).toISOString().replace("T", " ").slice(0, 19)} UTC` : "");

export function age(iso: string | null, now = Date.now()): string {
  if (!iso) return "never";
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}

export function short(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  const abs = Math.abs(v);
  if (abs >= 1e9) return `${(v / 1e9).toFixed(1)} G`;
  if (abs >= 1e6) return `${(v / 1e6).toFixed(1)} M`;
  if (abs >= 1e4) return `${(v / 1e3).toFixed(1)} k`;
  return abs >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(abs >= 1 ? 1 : 2);
}
