/**
 * A caller's WHERE condition for count_rows, checked so it stays one condition of one count: no statement
 * separator, no comment (which could hide the rest of the statement), and parentheses that balance outside
 * string literals and quoted names (so it cannot close the count's own parenthesis and append a UNION).
 * Backslashes are refused: in E'' strings (or with standard_conforming_strings off) they end a literal later
 * than this scan would, which would let text the scan took for a literal run as SQL.
 */
import { InputError } from "../errors.ts";

export const MAX_WHERE_LENGTH = 4000;

export function checkWhereClause(where: string): string {
  const text = where.trim();
  if (!text) throw new InputError("`where` is empty: leave it out to count every row");
  if (text.length > MAX_WHERE_LENGTH) throw new InputError(`\`where\` is longer than ${MAX_WHERE_LENGTH} characters`);
  if (text.includes("\\")) throw new InputError("`where` may not contain a backslash; write string literals without escapes");
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'" || c === '"') {
      const close = skipQuoted(text, i, c);
      if (close < 0) throw new InputError(`\`where\` has an unterminated ${c === "'" ? "string literal" : "quoted name"}`);
      i = close;
    } else if (c === "$" && /^\$[A-Za-z_]?\w*\$/.test(text.slice(i))) {
      throw new InputError("`where` may not use dollar quoting; write the string with single quotes");
    } else if (c === ";") throw new InputError("`where` may not contain `;`: it is one condition, not a statement");
    else if ((c === "-" && text[i + 1] === "-") || (c === "/" && text[i + 1] === "*")) throw new InputError("`where` may not contain a comment");
    else if (c === "(") depth++;
    else if (c === ")" && --depth < 0) throw new InputError("`where` closes a parenthesis it did not open");
  }
  if (depth !== 0) throw new InputError("`where` leaves a parenthesis open");
  return text;
}

/** The index of the quote closing the literal opened at `start` (a doubled quote is part of it), or -1. */
function skipQuoted(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] !== quote) continue;
    if (text[i + 1] === quote) i++;
    else return i;
  }
  return -1;
}
