import type { Response } from 'supertest';
import { OWNER_PASSWORD, apiToken, organization, region } from './fixtures';

/** The whole error envelope a client sees. */
export const envelope = (res: Response, code: string, message: string, details: Record<string, unknown> = {}) => ({
  error: { code, message, request_id: res.headers['x-request-id'], details },
});

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const AUD_ID = /^aud_[A-Za-z0-9]{20,}$/;
export const KEY_ID = /^key_[A-Za-z0-9]{20,}$/;

/** Organization `suffix` with an owner, an admin, a developer and a viewer (owner@, admin@, dev@, viewer@<suffix>.test) and a read-write key. */
export function teamOrg(suffix: string) {
  return organization(suffix, {
    members: (['owner', 'admin', 'developer', 'viewer'] as const).map((role) => ({
      email: `${role === 'developer' ? 'dev' : role}@${suffix}.test`,
      password: OWNER_PASSWORD,
      role,
    })),
    api_keys: [{ name: 'ci', scopes: ['vm:read', 'vm:write'], token: apiToken(suffix, 'rw') }],
  });
}

export const teamSeed = (...suffixes: string[]) => ({ regions: [region()], organizations: suffixes.map(teamOrg) });
