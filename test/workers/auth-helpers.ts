import { SELF } from "cloudflare:test";
import { expect } from "vitest";
import { apiOk } from "./helpers";
import { GroupRepository, type Group } from "../../src/worker/security/groups";

/** What the token endpoint answers. */
export type Tokens = { token: string; access_token: string; refresh_token: string; token_type: string; expires_in: number };

/** Calls the service through the real router with exactly the headers given (no credentials unless they are). */
export async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] ??= "application/json";
  }
  return SELF.fetch(`https://conductor.test${path}`, init);
}

/** Exchanges an API key for tokens; fails the test unless the service answers 200. */
export async function tokenFor(keyId: string, keySecret: string): Promise<Tokens> {
  const response = await call("POST", "/api/security/token", {}, { keyId, keySecret });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Tokens;
}

/** The Orkes-style token header. */
export const orkes = (token: string) => ({ "x-authorization": token });

/** Creates a user with an API key, the given roles/direct permissions, and a token. */
export async function createUser(userId: string, assignment: { roles?: string[]; directPermissions?: Array<{ action: string; scope: string }> } = {}) {
  const key = await apiOk<{ keyId: string; keySecret: string }>("POST", `/api/security/users/${userId}/api-keys`, undefined, 201);
  await apiOk("PUT", `/api/security/users/${userId}/roles`, { roles: assignment.roles ?? [], directPermissions: assignment.directPermissions ?? [] });
  const tokens = await tokenFor(key.keyId, key.keySecret);
  return { ...key, apiKey: `${key.keyId}:${key.keySecret}`, token: tokens.token, tokens };
}

/**
 * Runs `run` while reads of group `groupId` see it without roles (as it was before a change that landed between a
 * request's check and its write), then lets reads see it as stored again.
 */
export async function whileGroupReadsWithoutRoles(groupId: string, run: () => Promise<void>): Promise<void> {
  const read = GroupRepository.prototype.get;
  GroupRepository.prototype.get = async function (this: GroupRepository, id: string): Promise<Group | null> {
    const stored = await read.call(this, id);
    return stored && id === groupId ? { ...stored, roles: [] } : stored;
  };
  try {
    await run();
  } finally {
    GroupRepository.prototype.get = read;
  }
}
