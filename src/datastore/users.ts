/** The users table: accounts, password hashes, lockout state. */
import type { Queryable } from "../../drivers/types.ts";
import { ConflictError, InputError, NotFoundError } from "../errors.ts";

export interface User {
  id: number;
  username: string;
  password_hash: string | null;
  display_name: string;
  email: string;
  annotation: string;
  enabled: boolean;
  is_superuser: boolean;
  is_service_account: boolean;
  failed_attempts: number;
  locked: boolean;
  last_login: Date | null;
  created_at: Date;
}

/** A user as the API shows it: never the password hash. */
export function userJson(u: User) {
  return {
    id: u.id,
    username: u.username,
    display_name: u.display_name,
    email: u.email,
    annotation: u.annotation,
    enabled: u.enabled,
    locked: u.locked,
    is_superuser: u.is_superuser,
    is_service_account: u.is_service_account,
    last_login: u.last_login?.toISOString() ?? null,
    created_at: u.created_at.toISOString(),
  };
}

const USERNAME = /^[\p{L}\p{N}][\p{L}\p{N}_.@-]{0,127}$/u;

export function checkUsername(username: string): void {
  if (!USERNAME.test(username)) throw new InputError("username must be 1 to 128 letters, digits, `_`, `.`, `@` or `-`, starting with a letter or digit");
}

export interface NewUser {
  username: string;
  passwordHash: string | null;
  displayName?: string;
  email?: string;
  annotation?: string;
  enabled?: boolean;
  isSuperuser?: boolean;
  isServiceAccount?: boolean;
}

export async function createUser(db: Queryable, u: NewUser): Promise<User> {
  checkUsername(u.username);
  try {
    const [row] = await db.query<User>(
      `INSERT INTO users (username, password_hash, display_name, email, annotation, enabled, is_superuser, is_service_account)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [
        u.username,
        u.passwordHash,
        u.displayName ?? "",
        u.email ?? "",
        u.annotation ?? "",
        u.enabled ?? true,
        u.isSuperuser ?? false,
        u.isServiceAccount ?? false,
      ],
    );
    return row;
  } catch (err) {
    if ((err as { code?: string }).code === "23505") throw new ConflictError(`a user named \`${u.username}\` already exists`);
    throw err;
  }
}

export async function findUserByName(db: Queryable, username: string): Promise<User | undefined> {
  return (await db.query<User>("SELECT * FROM users WHERE lower(username) = lower($1)", [username]))[0];
}

export async function getUser(db: Queryable, id: number): Promise<User> {
  const [user] = await db.query<User>("SELECT * FROM users WHERE id = $1", [id]);
  if (!user) throw new NotFoundError(`user ${id} not found`);
  return user;
}

export const listUsers = (db: Queryable) => db.query<User>("SELECT * FROM users ORDER BY lower(username)");

export async function countUsers(db: Queryable): Promise<number> {
  return (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM users"))[0].n;
}

export interface UserChanges {
  passwordHash?: string;
  display_name?: string;
  email?: string;
  annotation?: string;
  enabled?: boolean;
  is_superuser?: boolean;
}

export async function updateUser(db: Queryable, id: number, changes: UserChanges): Promise<User> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (changes.passwordHash !== undefined) set("password_hash", changes.passwordHash);
  for (const key of ["display_name", "email", "annotation", "is_superuser"] as const) if (changes[key] !== undefined) set(key, changes[key]);
  if (changes.enabled !== undefined) {
    set("enabled", changes.enabled);
    // Re-enabling is how an admin lifts a lockout.
    if (changes.enabled) sets.push("locked = false", "failed_attempts = 0");
  }
  if (sets.length === 0) return getUser(db, id);
  const [user] = await db.query<User>(`UPDATE users SET ${sets.join(", ")} WHERE id = $1 RETURNING *`, params);
  if (!user) throw new NotFoundError(`user ${id} not found`);
  return user;
}

export async function deleteUser(db: Queryable, id: number): Promise<void> {
  const rows = await db.query("DELETE FROM users WHERE id = $1 RETURNING id", [id]);
  if (rows.length === 0) throw new NotFoundError(`user ${id} not found`);
}

/** Counts a wrong password; at `lockAfter` consecutive failures the account locks until an admin re-enables it. */
export async function recordFailedLogin(db: Queryable, id: number, lockAfter: number): Promise<boolean> {
  const [row] = await db.query<{ locked: boolean }>(
    `UPDATE users SET failed_attempts = failed_attempts + 1,
            locked = locked OR ($2 > 0 AND failed_attempts + 1 >= $2),
            enabled = enabled AND NOT ($2 > 0 AND failed_attempts + 1 >= $2)
      WHERE id = $1 RETURNING locked`,
    [id, lockAfter],
  );
  return row?.locked ?? false;
}

export async function recordLogin(db: Queryable, id: number): Promise<void> {
  await db.query("UPDATE users SET failed_attempts = 0, last_login = now() WHERE id = $1", [id]);
}

/** How many enabled superusers there are besides `userId` (the last one may not remove itself). */
export async function otherEnabledSuperusers(db: Queryable, userId: number): Promise<number> {
  return (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM users WHERE is_superuser AND enabled AND id <> $1", [userId]))[0].n;
}
