/**
 * First start of the embedded datastore without a configured admin: create `admin` with a random password,
 * written to <data_dir>/secrets/initial-admin-password (mode 0600) and announced once, so `npm start` is usable at once.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { secretsDir } from "../drivers/embedded-layout.ts";
import type { Queryable } from "../drivers/types.ts";
import { hashPassword } from "./auth/passwords.ts";
import { countUsers, createUser } from "./datastore/users.ts";
import type { Logger } from "./log.ts";

export async function ensureEmbeddedAdmin(db: Queryable, dataDir: string, log: Logger): Promise<void> {
  if ((await countUsers(db)) > 0) return;
  const password = randomBytes(18).toString("base64url");
  await createUser(db, { username: "admin", passwordHash: await hashPassword(password), isSuperuser: true });
  const file = join(secretsDir(dataDir), "initial-admin-password");
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  log.warn("created superuser `admin` for the embedded datastore; its password is in the file named here (change it with PUT /api/v1/rbac/users/{id})", {
    password_file: file,
  });
}
