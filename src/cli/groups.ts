/**
 * `pglens group grant NAME [--member USER]... [--mcp TOOL,...] [--connections ID[:read|read_write],...]`: the
 * command-line way to give a user (or a chat assistant's service account) rights, as an administrator on
 * the server would through /api/v1/rbac. Creates the group if needed; grants are added to what it has.
 */
import { parseArgs } from "node:util";
import { checkConnectionIds, checkMcpIdentifiers } from "../auth/grant-references.ts";
import { ACCESS_LEVELS, type AccessLevel } from "../vocabulary/permissions.ts";
import { addMember, createGroup, directGrants, listGroups, setConnectionGrants, setMcpGrants } from "../datastore/groups.ts";
import { findUserByName } from "../datastore/users.ts";
import { withDatastore } from "./common.ts";
import { UsageError } from "./usage-error.ts";
import { parserOptions, usageError } from "./options.ts";

function parseConnections(list: string[]): Array<{ connection_id: number; access_level: AccessLevel }> {
  return list
    .flatMap((v) => v.split(","))
    .filter(Boolean)
    .map((item) => {
      const [id, level = "read"] = item.split(":");
      if (!/^\d+$/.test(id) || !(ACCESS_LEVELS as readonly string[]).includes(level))
        throw usageError("group grant", `--connections: ${JSON.stringify(item)} is not ID[:read|read_write]`);
      return { connection_id: Number(id), access_level: level as AccessLevel };
    });
}

export async function groupCommand(args: string[]): Promise<number> {
  const [, ...rest] = args; // "grant", the only subcommand (checked by cli.ts)
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: parserOptions("group grant"),
  });
  const [name] = positionals;
  if (!name || positionals.length > 1) throw usageError("group grant", "give one group NAME");
  const mcp = (values.mcp ?? [])
    .flatMap((v) => v.split(","))
    .map((s) => s.trim())
    .filter(Boolean);
  const connections = parseConnections(values.connections ?? []);
  return withDatastore((db) =>
    db.transaction(async (tx) => {
      const group = (await listGroups(tx)).find((g) => g.name === name) ?? (await createGroup(tx, name, ""));
      for (const username of values.member ?? []) {
        const user = await findUserByName(tx, username);
        if (!user) throw new UsageError(`no user named ${username}; create it first with pglens user create`);
        const member = await tx.query("SELECT 1 FROM group_members WHERE group_id = $1 AND member_user_id = $2", [group.id, user.id]);
        if (member.length === 0) await addMember(tx, group.id, { type: "user", id: user.id });
      }
      const current = await directGrants(tx, group.id);
      if (mcp.length) {
        await checkMcpIdentifiers(tx, mcp);
        await setMcpGrants(tx, group.id, [...current.mcp_privileges, ...mcp]);
      }
      if (connections.length) {
        await checkConnectionIds(
          tx,
          connections.map((c) => c.connection_id),
        );
        const merged = new Map(current.connection_privileges.map((c) => [c.connection_id, c]));
        for (const c of connections) merged.set(c.connection_id, c);
        await setConnectionGrants(tx, group.id, [...merged.values()]);
      }
      const after = await directGrants(tx, group.id);
      console.error(
        `group ${name} (id ${group.id}): members +${(values.member ?? []).length}; MCP ${after.mcp_privileges.join(", ") || "none"}; connections ${after.connection_privileges.map((c) => `${c.connection_id}:${c.access_level}`).join(", ") || "none"}`,
      );
      return 0;
    }),
  );
}
