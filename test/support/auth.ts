/** Users and tokens for tests, made directly in the datastore (cheap password hashes for speed). */
import type { Queryable } from "../../drivers/types.ts";
import { issueApiToken } from "../../src/auth/issue-token.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import { createUser } from "../../src/datastore/users.ts";

/** Test fixtures only: real hashes use the full cost. */
export const CHEAP_HASH = { rounds: 1, iterations: 1000 };

export async function userWithToken(
  db: Queryable,
  username: string,
  options: { superuser?: boolean; password?: string } = {},
): Promise<{ id: number; token: string }> {
  const user = await createUser(db, {
    username,
    passwordHash: options.password ? await hashPassword(options.password, CHEAP_HASH) : null,
    isSuperuser: options.superuser,
  });
  const { token } = await issueApiToken(db, { owner: username });
  return { id: user.id, token };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
