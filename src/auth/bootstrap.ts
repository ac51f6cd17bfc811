/** The first superuser: from PGLENS_ADMIN_USERNAME/PASSWORD when the datastore has no user yet. */
import type { Queryable } from "../../drivers/types.ts";
import type { Config } from "../config.ts";
import { countUsers, createUser } from "../datastore/users.ts";
import type { Logger } from "../log.ts";
import { checkPasswordPolicy, hashPassword } from "./passwords.ts";

/** Creates the configured first superuser if there are no users; returns whether it did. */
export async function ensureFirstSuperuser(db: Queryable, config: Config, log: Logger): Promise<boolean> {
  const { username, password } = config.admin;
  if (!username && !password) return false;
  if (!username || !password) throw new Error("set both PGLENS_ADMIN_USERNAME and PGLENS_ADMIN_PASSWORD (admin.username and admin.password), or neither");
  if ((await countUsers(db)) > 0) return false;
  try {
    checkPasswordPolicy(password, username);
  } catch (err) {
    throw new Error(`PGLENS_ADMIN_PASSWORD: ${(err as Error).message}`);
  }
  await createUser(db, { username, passwordHash: await hashPassword(password), isSuperuser: true });
  log.info("created the first superuser", { username });
  return true;
}
