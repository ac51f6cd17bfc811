/** Number presentation shared by the summary endpoints. */

/** Rounds half away from zero to `decimals` places. */
export function round(x: number, decimals: number): number {
  const f = 10 ** decimals;
  return (Math.sign(x) * Math.round(Math.abs(x) * f)) / f;
}

/** 100 * part / whole rounded to 2 places, or null when the whole is zero (nothing happened). */
export function percent(part: number, whole: number): number | null {
  return whole > 0 ? round((100 * part) / whole, 2) : null;
}

const UNITS = ["KB", "MB", "GB", "TB", "PB"];

/** 1024-based size text: `512 B`, `1.5 MB`. */
export function prettySize(bytes: number): string {
  if (Math.abs(bytes) < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** The series' values by name for one connection: `of("blks_hit_delta")[k]` is point k's value. */
export function seriesValues(
  series: ReadonlyArray<{ name: string; connection_id: number; data: ReadonlyArray<{ value: number | null }> }>,
  connectionId: number,
) {
  return (name: string): Array<number | null> => series.find((s) => s.name === name && s.connection_id === connectionId)!.data.map((p) => p.value);
}
