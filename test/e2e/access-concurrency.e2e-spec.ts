import { SSH_KEYS } from '../support/ssh-keys';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * The limits and the uniqueness of SSH keys and firewall rules under concurrency: the
 * 100-per-organization limits counted under the organization's lock, one canonical rule and one
 * fingerprint per organization held by unique indexes. Only PostgreSQL can show a race: the
 * embedded engine runs one transaction at a time.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('access-concurrency.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); the embedded engine serialises transactions');
}

describeOnPostgres('SSH keys and firewall rules under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  const envelope = (requestId: string, code: string, message: string, details: object) => ({ error: { code, message, request_id: requestId, details } });

  beforeAll(async () => {
    // 120 requests queue for 20 connections while the creates take the organization's lock one
    // after the other: on a busy machine some wait longer than the default 5 s for a connection.
    t = await startTestApp({ dbPoolSize: 20, rateLimitPerMinute: 100000, dbConnectTimeoutMs: 60_000 });
    await t.seed({ regions: [region()], organizations: ['cfw', 'cdup', 'cssh'].map((s) => ({ ...organization(s), volumes: [] })) });
  });
  afterAll(async () => t?.close());

  it('120 concurrent rule creates in one organization: exactly 100 land, the other 20 are 409 quota_exceeded', async () => {
    const key = bearer(apiToken('cfw', 'rw'));
    const responses = await Promise.all(
      Array.from({ length: 120 }, (_, i) => t.http.post('/v1/firewall-rules').set(key).send({ direction: 'in', protocol: 'tcp', port: String(1000 + i), sources: ['0.0.0.0/0'] })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(100).fill(201), ...Array(20).fill(409)]);
    for (const r of responses.filter((x) => x.status === 409)) {
      expect(r.body).toEqual(envelope(r.headers['x-request-id'], 'quota_exceeded', 'An organization may hold at most 100 firewall rules; delete one first', { limit: 100 }));
    }
    expect(await t.sql("SELECT count(*)::int AS n FROM firewall_rules WHERE org_id = 'org_cfw'")).toEqual([{ n: 100 }]);
    expect(await t.sql("SELECT count(*)::int AS n FROM audit_log WHERE org_id = 'org_cfw' AND action = 'firewall_rule.create'")).toEqual([{ n: 100 }]);
    const landed = responses.filter((r) => r.status === 201).map((r) => r.body.port as string).sort();
    expect((await t.sql<{ port: string }>("SELECT port FROM firewall_rules WHERE org_id = 'org_cfw' ORDER BY port")).map((r) => r.port)).toEqual(landed);
  });

  it('concurrent creates of one canonical rule, spelt differently: exactly one lands, the others are 409 conflict naming it', async () => {
    const key = bearer(apiToken('cdup', 'rw'));
    for (let round = 0; round < 5; round++) {
      const spellings = [
        { sources: [`10.${round}.0.0/16`, '2001:db8::/32'], port: '443' },
        { sources: ['2001:DB8:0::1/32', `10.${round}.7.7/16`], port: '443-443' },
        { sources: [`10.${round}.1.2/16`, '2001:0db8::/32', `10.${round}.0.0/16`], port: '443' },
        { sources: ['2001:db8:ffff::/32', `10.${round}.255.255/16`], port: '443-443' },
      ];
      const responses = await Promise.all(spellings.map((s, i) => t.http.post('/v1/firewall-rules').set(key).send({ direction: 'in', protocol: 'tcp', ...s, description: `try ${i}` })));
      const won = responses.filter((r) => r.status === 201);
      expect(won).toHaveLength(1);
      const id = won[0].body.id as string;
      for (const r of responses.filter((x) => x.status !== 201)) {
        expect([r.status, r.body]).toEqual([409, envelope(r.headers['x-request-id'], 'conflict', `Firewall rule ${id} is the same rule (in canonical form)`, { existing_id: id })]);
      }
    }
    expect(await t.sql("SELECT count(*)::int AS n FROM firewall_rules WHERE org_id = 'org_cdup'")).toEqual([{ n: 5 }]);
  });

  it('concurrent creates of one SSH key (one fingerprint, other names and comments): exactly one lands, the others are 409 conflict on public_key', async () => {
    const key = bearer(apiToken('cssh', 'rw'));
    for (const name of ['ed', 'e256', 'rsa2048'] as const) {
      const line = SSH_KEYS[name].line;
      const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => t.http.post('/v1/ssh-keys').set(key).send({ name: `${name}-${i}`, public_key: `${line} copy${i}` })));
      const won = responses.filter((r) => r.status === 201);
      expect(won).toHaveLength(1);
      const id = won[0].body.id as string;
      for (const r of responses.filter((x) => x.status !== 201)) {
        expect([r.status, r.body]).toEqual([
          409,
          envelope(r.headers['x-request-id'], 'conflict', `SSH key ${id} has the fingerprint ${SSH_KEYS[name].fingerprint} already`, { existing_id: id, field: 'public_key' }),
        ]);
      }
    }
    expect(await t.sql("SELECT count(*)::int AS n FROM ssh_keys WHERE org_id = 'org_cssh'")).toEqual([{ n: 3 }]);
  });

  it('SSH keys: 110 concurrent creates of distinct keys on top of 3: exactly 97 land, the rest quota_exceeded', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const key = bearer(apiToken('cssh', 'rw'));
    const lines = Array.from({ length: 110 }, () => {
      const raw = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x as string;
      const field = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
      return `ssh-ed25519 ${Buffer.concat([field(Buffer.from('ssh-ed25519')), field(Buffer.from(raw, 'base64url'))]).toString('base64')}`;
    });
    const responses = await Promise.all(lines.map((line, i) => t.http.post('/v1/ssh-keys').set(key).send({ name: `bulk-${i}`, public_key: line })));
    expect(responses.map((r) => r.status).sort()).toEqual([...Array(97).fill(201), ...Array(13).fill(409)]);
    for (const r of responses.filter((x) => x.status === 409)) {
      expect(r.body).toEqual(envelope(r.headers['x-request-id'], 'quota_exceeded', 'An organization may hold at most 100 SSH keys; delete one first', { limit: 100 }));
    }
    expect(await t.sql("SELECT count(*)::int AS n FROM ssh_keys WHERE org_id = 'org_cssh'")).toEqual([{ n: 100 }]);
  });
});
