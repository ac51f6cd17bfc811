/** Checks that grants and token scopes name things that exist. */
import type { Queryable } from "../../drivers/types.ts";
import { InputError } from "../errors.ts";
import { ALL } from "../vocabulary/permissions.ts";

export async function checkMcpIdentifiers(db: Queryable, identifiers: readonly string[]): Promise<void> {
  const known = new Set((await db.query<{ identifier: string }>("SELECT identifier FROM mcp_privileges")).map((r) => r.identifier));
  const unknown = identifiers.filter((i) => i !== ALL && !known.has(i));
  if (unknown.length) throw new InputError(`unknown MCP privilege ${unknown.map((u) => `\`${u}\``).join(", ")}; GET /api/v1/rbac/privileges/mcp lists them`);
}

/** Connection 0 means every connection; any other id must exist. */
export async function checkConnectionIds(db: Queryable, ids: readonly number[]): Promise<void> {
  const wanted = ids.filter((id) => id !== 0);
  const found = new Set((await db.query<{ id: number }>("SELECT id FROM connections WHERE id = ANY($1::int[])", [wanted])).map((r) => r.id));
  const missing = wanted.filter((id) => !found.has(id));
  if (missing.length) throw new InputError(`connection ${missing.join(", ")} does not exist (0 means every connection)`);
}
