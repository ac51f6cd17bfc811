/** `pglens user create|list`. */
import { parseArgs } from "node:util";
import { checkPasswordPolicy, hashPassword } from "../auth/passwords.ts";
import { createUser, listUsers } from "../datastore/users.ts";
import { printTable, withDatastore } from "./common.ts";
import { readPassword } from "./password-input.ts";
import { parserOptions, usageError } from "./options.ts";

export async function userCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "list") {
    return withDatastore(async (db) => {
      const users = await listUsers(db);
      printTable(
        ["ID", "USERNAME", "SUPERUSER", "SERVICE", "STATE", "LAST LOGIN"],
        users.map((u) => [
          u.id,
          u.username,
          u.is_superuser ? "yes" : "",
          u.is_service_account ? "yes" : "",
          u.locked ? "locked" : u.enabled ? "enabled" : "disabled",
          u.last_login?.toISOString() ?? "",
        ]),
      );
      return 0;
    });
  }
  // Otherwise "create" (cli.ts lets only the known subcommands through).
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: parserOptions("user create"),
  });
  const [username] = positionals;
  if (!username || positionals.length > 1) throw usageError("user create", "give one user NAME");
  let passwordHash: string | null = null;
  if (!values["service-account"]) {
    const password = await readPassword({ file: values["password-file"], argv: values.password });
    checkPasswordPolicy(password, username);
    passwordHash = await hashPassword(password);
  }
  return withDatastore(async (db) => {
    const user = await createUser(db, {
      username,
      passwordHash,
      isSuperuser: values.superuser,
      isServiceAccount: values["service-account"],
      displayName: values["display-name"],
      email: values.email,
    });
    console.error(`created ${user.is_service_account ? "service account" : user.is_superuser ? "superuser" : "user"} ${user.username} (id ${user.id})`);
    return 0;
  });
}
