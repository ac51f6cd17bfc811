/** `pglens token create|list|delete`: service tokens for programs. */
import { parseArgs } from "node:util";
import { DEFAULT_TOKEN_EXPIRY, issueApiToken } from "../auth/issue-token.ts";
import { deleteApiToken, listApiTokens } from "../datastore/api-tokens.ts";
import { printTable, withDatastore } from "./common.ts";
import { parserOptions, usageError } from "./options.ts";

export async function tokenCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case "create": {
      const { values } = parseArgs({
        args: rest,
        options: parserOptions("token create"),
      });
      if (!values.user) throw usageError("token create", "--user NAME is required: the token's owner");
      return withDatastore(async (db) => {
        const t = await issueApiToken(db, { owner: values.user!, note: values.note, expires: values.expires ?? DEFAULT_TOKEN_EXPIRY });
        if (values.json) console.log(JSON.stringify({ id: t.id, token: t.token, owner: t.owner, note: t.note, expires_at: t.expires_at }));
        else {
          console.log(t.token);
          console.error(`token ${t.id} for ${t.owner}, ${t.expires_at ? `expires ${t.expires_at}` : "never expires"}; it is shown only now`);
        }
        return 0;
      });
    }
    case "list": {
      const { values } = parseArgs({ args: rest, options: parserOptions("token list") });
      return withDatastore(async (db) => {
        const tokens = await listApiTokens(db);
        if (values.json)
          console.log(
            JSON.stringify(
              tokens.map((t) => ({
                id: t.id,
                owner: t.username,
                note: t.note,
                token_prefix: t.token_prefix,
                created_at: t.created_at,
                expires_at: t.expires_at,
              })),
            ),
          );
        else {
          const now = Date.now();
          printTable(
            ["ID", "OWNER", "PREFIX", "EXPIRES", "STATE", "NOTE"],
            tokens.map((t) => [
              t.id,
              t.username,
              t.token_prefix,
              t.expires_at?.toISOString() ?? "never",
              t.expires_at && t.expires_at.getTime() < now ? "expired" : "active",
              t.note,
            ]),
          );
        }
        return 0;
      });
    }
    case "delete": {
      const id = Number(rest[0]);
      if (!Number.isInteger(id) || id <= 0 || rest.length !== 1) throw usageError("token delete", "give one token ID (pglens token list shows them)");
      return withDatastore(async (db) => {
        await deleteApiToken(db, id);
        console.error(`deleted token ${id}`);
        return 0;
      });
    }
    default:
      throw usageError("token", `unknown token command "${sub ?? ""}"`);
  }
}
