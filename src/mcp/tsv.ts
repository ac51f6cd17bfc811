/**
 * Tool output format: a TSV table. A header line, one line per row, NULL as an empty cell; backslash, tab,
 * newline and carriage return inside values are escaped as `\\`, `\t`, `\n`, `\r` so every row stays one line.
 */
export type Cell = string | number | boolean | Date | null | undefined | object;

function cell(value: Cell): string {
  if (value === null || value === undefined) return "";
  const text = value instanceof Date ? value.toISOString() : typeof value === "object" ? JSON.stringify(value) : String(value);
  return text.replace(/[\\\t\n\r]/g, (ch) => ({ "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" })[ch]!);
}

export function toTsv(header: readonly string[], rows: ReadonlyArray<readonly Cell[]>): string {
  return [header, ...rows].map((r) => r.map(cell).join("\t")).join("\n");
}
