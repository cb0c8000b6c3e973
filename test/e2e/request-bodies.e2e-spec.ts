import type { Server } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { headOnly } from '../support/head-only';
import { TestApp, startTestApp } from '../support/test-app';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';

/**
 * Request bodies are read only after authentication, the rate limit and the access check, never
 * inflated (415), and within a small limit: a few bytes of brotli sent by anyone used to become a
 * 1 MiB parse before the 401.
 */

const bodyOf = (raw: string): unknown => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
const statusOf = (raw: string): number => Number(raw.slice(9, 12));
const requestIdOf = (raw: string): string | undefined => /x-request-id: (\S+)/i.exec(raw)?.[1];

const compressedBody = (encoding: string) => ({
  error: {
    code: 'invalid_request',
    message: `Compressed request bodies are not accepted (Content-Encoding: ${encoding}); send the body uncompressed`,
    request_id: expect.any(String),
    details: {},
  },
});

describe('request bodies: read after the guards, never inflated, 64 KiB (16 KiB anonymous)', () => {
  let t: TestApp;
  const token = apiToken('bod', 'rw');
  const readOnly = apiToken('bod', 'ro');

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({
      regions: [region()],
      organizations: [
        organization('bod', {
          api_keys: [
            { name: 'ci', scopes: ['vm:read', 'vm:write'], token },
            { name: 'ro', scopes: ['vm:read'], token: readOnly },
          ],
        }),
      ],
    });
  });
  afterAll(async () => t?.close());

  it.each([
    ['br', brotliCompressSync],
    ['gzip', gzipSync],
    ['deflate', deflateSync],
  ])('refuses a %s-compressed login with 415 and the envelope, after the rate limit, and logs nobody in', async (encoding, compress) => {
    const res = await t.http
      .post('/v1/auth/login')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', encoding)
      .send(compress(Buffer.from(JSON.stringify({ email: 'owner@bod.test', password: OWNER_PASSWORD }))));
    expect(res.status).toBe(415);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(compressedBody(encoding));
    expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
    expect(res.headers['x-ratelimit-limit']).toBe('600');
    expect(await t.sql('SELECT id FROM sessions')).toEqual([]);

    // The same body uncompressed logs in.
    const plain = await t.http.post('/v1/auth/login').send({ email: 'owner@bod.test', password: OWNER_PASSWORD });
    expect(plain.status).toBe(200);
    await t.sql('DELETE FROM sessions');
  });

  it('refuses a compressed body on an authenticated route with 415, and writes nothing', async () => {
    const res = await t.http
      .patch('/v1/volumes/vol_boddata1')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send(gzipSync(Buffer.from(JSON.stringify({ note: 'compressed' }))));
    expect(res.status).toBe(415);
    expect(res.body).toEqual(compressedBody('gzip'));
    expect(await t.sql("SELECT note FROM volumes WHERE id = 'vol_boddata1'")).toEqual([{ note: null }]);
  });

  it('checks 401, then 403, before it looks at a compressed body', async () => {
    const bomb = brotliCompressSync(Buffer.from(`"${'x'.repeat(1024 * 1024)}"`));
    expect(bomb.length).toBeLessThan(100);
    const anonymous = await t.http.patch('/v1/volumes/vol_boddata1').set('Content-Type', 'application/json').set('Content-Encoding', 'br').send(bomb);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('unauthorized');
    const forbidden = await t.http.patch('/v1/volumes/vol_boddata1').set(bearer(readOnly)).set('Content-Type', 'application/json').set('Content-Encoding', 'br').send(bomb);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe('forbidden');
  });

  it('answers 401 without waiting for the body: nothing of it is read before authentication', async () => {
    // 60,000 bytes declared, none sent: a server that read the body first would wait for it.
    const raw = await headOnly(
      t.app.getHttpServer() as Server,
      'PATCH /v1/volumes/vol_boddata1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n',
      '{"note":"',
    );
    expect(statusOf(raw)).toBe(401);
    expect(bodyOf(raw)).toEqual({
      error: { code: 'unauthorized', message: 'Missing Authorization header; send "Authorization: Bearer <token>"', request_id: requestIdOf(raw), details: {} },
    });
  });

  it('answers 403 without waiting for the body of a key that may not write', async () => {
    const raw = await headOnly(
      t.app.getHttpServer() as Server,
      `PATCH /v1/volumes/vol_boddata1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${readOnly}\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n`,
    );
    expect(statusOf(raw)).toBe(403);
    expect((bodyOf(raw) as { error: { code: string } }).error.code).toBe('forbidden');
  });

  it('refuses a login body over 16 KiB with 413, even with the right password', async () => {
    const body = JSON.stringify({ email: 'owner@bod.test', password: OWNER_PASSWORD }).slice(0, -1) + ' '.repeat(16 * 1024) + '}';
    const res = await t.http.post('/v1/auth/login').set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: { code: 'invalid_request', message: 'Request body is larger than 16 KiB', request_id: res.headers['x-request-id'], details: {} } });
    expect(await t.sql('SELECT id FROM sessions')).toEqual([]);
  });

  it('takes a 60 KiB body on an authenticated route (a server user_data fits) and refuses 64 KiB + 1 with 413', async () => {
    const note = 'n'.repeat(200);
    const fits = await t.http
      .patch('/v1/volumes/vol_boddata1')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send(`{"note":"${note}"${' '.repeat(60 * 1024)}}`);
    expect(fits.status).toBe(200);
    expect(fits.body.note).toBe(note);
    const over = await t.http
      .patch('/v1/volumes/vol_boddata1')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send(`{"note":"other"${' '.repeat(64 * 1024 - 15)}}`);
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ error: { code: 'invalid_request', message: 'Request body is larger than 64 KiB', request_id: over.headers['x-request-id'], details: {} } });
    expect(await t.sql("SELECT note FROM volumes WHERE id = 'vol_boddata1'")).toEqual([{ note }]);
  });

  const unknownMember = (res: { headers: Record<string, string> }, field: string) => ({
    error: {
      code: 'invalid_request',
      message: `${field} is not a member of this request body (check its spelling: unknown members are refused)`,
      request_id: res.headers['x-request-id'],
      details: { field },
    },
  });

  it('a typo in a body member is 400 naming it, before anything is charged: POST /v1/volumes with serverId and delete_protecton', async () => {
    const state = () =>
      Promise.all([
        t.sql(`SELECT id FROM volumes WHERE org_id = 'org_bod' ORDER BY id`),
        t.sql(`SELECT currency, available::text, reserved::text FROM wallet_balances WHERE org_id = 'org_bod' ORDER BY currency`),
        t.sql(`SELECT count(*)::int AS n FROM wallet_ledger WHERE org_id = 'org_bod'`),
        t.sql(`SELECT count(*)::int AS n FROM operations WHERE org_id = 'org_bod'`),
      ]);
    const before = await state();
    const buy = { name: 'typo-1', region: 'id-jkt', size_gb: 100, term_months: 1, currency: 'USD' };
    const res = await t.http.post('/v1/volumes').set(bearer(token)).set('Idempotency-Key', 'typo-1').send({ ...buy, serverId: 'vm_bodweb1', delete_protecton: true });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(unknownMember(res, 'serverId'));
    const second = await t.http.post('/v1/volumes').set(bearer(token)).send({ ...buy, delete_protecton: true });
    expect(second.body).toEqual(unknownMember(second, 'delete_protecton'));
    expect(await state()).toEqual(before);
    expect(await t.sql(`SELECT count(*)::int AS n FROM idempotency_records WHERE org_id = 'org_bod'`)).toEqual([{ n: 0 }]);
  });

  it('an unknown member is 400 on signup, login, a PATCH and a top-up (whose body is read by hand) alike', async () => {
    const login = await t.http.post('/v1/auth/login').send({ email: 'owner@bod.test', password: OWNER_PASSWORD, remember_me: true });
    expect(login.status).toBe(400);
    expect(login.body).toEqual(unknownMember(login, 'remember_me'));
    const signup = await t.http.post('/v1/auth/signup').send({ email: 'new@bod.test', password: 'a long password', organization_name: 'New', orgName: 'x' });
    expect(signup.body).toEqual(unknownMember(signup, 'orgName'));
    const patch = await t.http.patch('/v1/volumes/vol_boddata1').set(bearer(token)).send({ name: 'data-1', labels: {}, Note: 'x' });
    expect(patch.body).toEqual(unknownMember(patch, 'Note'));
    const session = (await t.http.post('/v1/auth/login').send({ email: 'owner@bod.test', password: OWNER_PASSWORD })).body.token as string;
    const topUp = await t.http.post('/v1/wallet/top-ups').set(bearer(session)).set('X-Org-ID', 'org_bod').send({ currency: 'USD', amount: '10.00', returnUrl: 'https://example.com/' });
    expect(topUp.body).toEqual(unknownMember(topUp, 'returnUrl'));
    expect(await t.sql(`SELECT count(*)::int AS n FROM users WHERE email = 'new@bod.test'`)).toEqual([{ n: 0 }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM top_ups`)).toEqual([{ n: 0 }]);
    await t.sql('DELETE FROM sessions');
  });
});
