/** Creating an API token: shared by the REST endpoint and `pglens token create`. */
import type { Queryable } from "../../drivers/types.ts";
import { createApiToken } from "../datastore/api-tokens.ts";
import { findUserByName } from "../datastore/users.ts";
import { InputError } from "../errors.ts";
import { parseExpiry } from "./expiry.ts";
import { newApiToken, tokenHash } from "./tokens.ts";

export interface IssuedToken {
  id: number;
  token: string;
  owner: string;
  owner_is_superuser: boolean;
  note: string;
  expires_at: string | null;
}

/** A token nobody asked to keep forever expires: one left in a script or a config file stops working in time. */
export const DEFAULT_TOKEN_EXPIRY = "90d";

export async function issueApiToken(db: Queryable, request: { owner: string; note?: string; expires?: string; createdBy?: number }): Promise<IssuedToken> {
  const expiresAt = parseExpiry(request.expires);
  const owner = await findUserByName(db, request.owner);
  if (!owner) throw new InputError(`no user named \`${request.owner}\``);
  const token = newApiToken();
  const id = await createApiToken(db, { tokenHash: tokenHash(token), userId: owner.id, note: request.note ?? "", expiresAt, createdBy: request.createdBy });
  return { id, token, owner: owner.username, owner_is_superuser: owner.is_superuser, note: request.note ?? "", expires_at: expiresAt?.toISOString() ?? null };
}
