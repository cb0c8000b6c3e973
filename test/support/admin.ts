import request from 'supertest';
import { adminServerOf } from '../../src/app.factory';
import { StaffAccounts } from '../../src/modules/admin/application/staff.use-cases';
import { adminClient } from './admin-client';
import { bearer } from './fixtures';
import type { TestApp } from './test-app';

export const STAFF_ROLES = ['superadmin', 'support', 'billing', 'operator'] as const;
export type Role = (typeof STAFF_ROLES)[number];

/**
 * The admin side of a test app started with `adminPort` set: the generated admin client bound to
 * its admin listener (`client`, test/support/admin-client) and a supertest agent of it for what the
 * client cannot send (no token, a raw body), one staff member (and token) per role, Idempotency-Keys unique in the file, and the staff audit row
 * of a request (written once the answer is sent, so polled).
 */
export async function adminSetup(t: TestApp, domain: string) {
  const admin = request(adminServerOf(t.app)!);
  const accounts = t.app.get(StaffAccounts);
  const tokens = {} as Record<Role, string>;
  const staffIds = {} as Record<Role, string>;
  for (const role of STAFF_ROLES) {
    const created = await accounts.create({ email: `${role}@${domain}`, name: `Staff ${role}`, role });
    tokens[role] = created.token;
    staffIds[role] = created.staff.id;
  }
  const client = await adminClient(t);
  let keySeq = 0;
  return {
    admin,
    client,
    tokens,
    staffIds,
    as: (role: Role | string) => bearer(tokens[role as Role]),
    key: () => ({ 'Idempotency-Key': `${domain}-${++keySeq}` }),
    /** The Idempotency-Key key() gave last. */
    lastKey: () => ({ 'Idempotency-Key': `${domain}-${keySeq}` }),
    async staffAudit(requestId: string): Promise<Record<string, unknown>> {
      for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
        const res = await admin.get('/admin/v1/staff-audit?limit=100').set(bearer(tokens.superadmin));
        const entry = (res.body.entries as { request_id: string }[]).find((e) => e.request_id === requestId);
        if (entry) return entry;
      }
      throw new Error(`no staff audit row for request ${requestId}`);
    },
  };
}
