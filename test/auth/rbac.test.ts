import { describe, expect, it } from "vitest";
import { type Authority, connectionAccess, hasAdminPermission, mayUseTool } from "../../src/auth/rbac.ts";

function authority(overrides: Partial<Authority> & { superuser?: boolean; userId?: number } = {}): Authority {
  return {
    principal: { userId: overrides.userId ?? 7, username: "u", isSuperuser: overrides.superuser ?? false, via: "api_token", tokenId: 1, tokenHash: "h" },
    groups: [],
    grants: overrides.grants ?? { mcp_privileges: [], connection_privileges: [], admin_permissions: [] },
    scope: overrides.scope ?? {},
  };
}
const conn = (id: number, owner: number | null = null, shared = false) => ({ id, owner_user_id: owner, is_shared: shared });

describe("connection access", () => {
  it("gives owners and superusers read_write, shared connections read, others nothing", () => {
    expect(connectionAccess(authority(), conn(1, 7))).toBe("read_write");
    expect(connectionAccess(authority({ superuser: true }), conn(1, 99))).toBe("read_write");
    expect(connectionAccess(authority(), conn(1, 99, true))).toBe("read");
    expect(connectionAccess(authority(), conn(1, 99))).toBeNull();
  });

  it("applies group grants on one connection or on 0 (all), the highest level winning", () => {
    const grants = {
      mcp_privileges: [],
      admin_permissions: [],
      connection_privileges: [
        { connection_id: 0, access_level: "read" as const },
        { connection_id: 2, access_level: "read_write" as const },
      ],
    };
    expect(connectionAccess(authority({ grants }), conn(1, 99))).toBe("read");
    expect(connectionAccess(authority({ grants }), conn(2, 99))).toBe("read_write");
  });

  it("caps by the token's connection scope, which only narrows", () => {
    const scope = { connections: [{ connection_id: 1, access_level: "read" as const }] };
    expect(connectionAccess(authority({ scope }), conn(1, 7))).toBe("read");
    expect(connectionAccess(authority({ scope }), conn(2, 7))).toBeNull();
    expect(connectionAccess(authority({ scope, superuser: true }), conn(2, 7))).toBeNull();
    expect(connectionAccess(authority({ scope: { connections: [{ connection_id: 1, access_level: "read_write" }] } }), conn(1, 99, true))).toBe("read");
  });
});

describe("admin permissions and tools", () => {
  const grants = { mcp_privileges: ["list_probes"], connection_privileges: [], admin_permissions: ["manage_users"] };
  it("come from groups, `*` granting all, superusers holding all", () => {
    expect(hasAdminPermission(authority({ grants }), "manage_users")).toBe(true);
    expect(hasAdminPermission(authority({ grants }), "manage_groups")).toBe(false);
    expect(hasAdminPermission(authority({ grants: { ...grants, admin_permissions: ["*"] } }), "manage_groups")).toBe(true);
    expect(hasAdminPermission(authority({ superuser: true }), "manage_groups")).toBe(true);
    expect(mayUseTool(authority({ grants }), "list_probes")).toBe(true);
    expect(mayUseTool(authority({ grants }), "query_metrics")).toBe(false);
  });

  it("are narrowed by a token scope, for superusers too", () => {
    expect(hasAdminPermission(authority({ grants, scope: { admin_permissions: ["manage_groups"] } }), "manage_users")).toBe(false);
    expect(hasAdminPermission(authority({ superuser: true, scope: { admin_permissions: ["manage_users"] } }), "manage_groups")).toBe(false);
    expect(mayUseTool(authority({ superuser: true, scope: { mcp_privileges: ["list_probes"] } }), "query_metrics")).toBe(false);
    expect(mayUseTool(authority({ superuser: true, scope: { mcp_privileges: ["*"] } }), "query_metrics")).toBe(true);
  });
});

describe("connection managers", () => {
  it("read and write every connection, within a token's scope", () => {
    const grants = { mcp_privileges: [], connection_privileges: [], admin_permissions: ["manage_connections"] };
    expect(connectionAccess(authority({ grants }), conn(5, 99))).toBe("read_write");
    expect(connectionAccess(authority({ grants, scope: { connections: [{ connection_id: 6, access_level: "read" }] } }), conn(5, 99))).toBeNull();
  });
});
