import { scaled } from '../support/deadlines';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestDatabase, createTestDatabase } from '../support/database';
import { apiToken, organization, region } from '../support/fixtures';
import { validatedFetch } from '../support/openapi-validation';
import { ServerProcess, runCli, startServerProcess, tempDir } from '../support/processes';
import { SSH_KEYS } from '../support/ssh-keys';

/**
 * A real server process at LOG_LEVEL=debug: creating, refusing, renaming and deleting SSH keys and
 * creating firewall rules leaves no key material in its output (stdout and stderr), while the
 * answers and the audit log are as the API promises.
 */
describe('SSH keys in a server process: no key material in the logs', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  let server: ServerProcess;
  let output = '';
  const token = apiToken('plog', 'rw');
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await validatedFetch(`${server.url.replace('localhost', '127.0.0.1')}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
  };
  const blobs = [SSH_KEYS.ed, SSH_KEYS.rsa2048, SSH_KEYS.rsa1024, SSH_KEYS.dsa].map((k) => k.line.split(' ')[1]);

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = tempDir('cds-access-logs-');
    const env = db.url ? { DATABASE_URL: db.url } : { DATA_DIR: join(dir.path, 'data') };
    const seedFile = join(dir.path, 'seed.json');
    writeFileSync(seedFile, JSON.stringify({ regions: [region()], organizations: [{ ...organization('plog'), volumes: [] }] }));
    const seeded = runCli(['seed', seedFile], env);
    if (seeded.status !== 0) throw new Error(`seed failed: ${seeded.stderr}`);
    server = await startServerProcess({ ...env, DEMO_SEED: 'false', LOG_LEVEL: 'debug' });

    const created = await call('POST', '/v1/ssh-keys', { name: 'laptop', public_key: SSH_KEYS.ed.line });
    expect([created.status, created.body?.fingerprint]).toEqual([201, SSH_KEYS.ed.fingerprint]);
    expect((await call('POST', '/v1/ssh-keys', { name: 'rsa', public_key: SSH_KEYS.rsa2048.line })).status).toBe(201);
    const refused = await call('POST', '/v1/ssh-keys', { name: 'short', public_key: SSH_KEYS.rsa1024.line });
    expect([refused.status, (refused.body?.error as { message: string }).message]).toEqual([400, 'public_key is an RSA key of 1024 bits; at least 2048 are required']);
    expect((await call('POST', '/v1/ssh-keys', { name: 'dsa', public_key: SSH_KEYS.dsa.line })).status).toBe(400);
    const dup = await call('POST', '/v1/ssh-keys', { name: 'again', public_key: SSH_KEYS.ed.line });
    expect([dup.status, (dup.body?.error as { details: unknown }).details]).toEqual([409, { existing_id: created.body?.id, field: 'public_key' }]);
    expect((await call('PATCH', `/v1/ssh-keys/${created.body?.id as string}`, { name: 'work' })).status).toBe(200);
    expect((await call('DELETE', `/v1/ssh-keys/${created.body?.id as string}`)).status).toBe(204);
    expect((await call('POST', '/v1/firewall-rules', { direction: 'in', protocol: 'tcp', port: '22', sources: ['0.0.0.0/0'] })).status).toBe(201);
    expect(await server.stop('SIGTERM')).toBe(0);
    output = server.output();
  }, scaled(120_000));

  afterAll(async () => {
    if (server) await server.stop('SIGKILL');
    await db?.drop();
    dir?.remove();
  });

  it('logged every request, and no key blob (nor a part of one) appears in the output', () => {
    expect(output.match(/"path":"\/v1\/ssh-keys[^"]*"/g)?.length).toBeGreaterThanOrEqual(7);
    for (const blob of blobs) {
      for (let i = 0; i + 24 <= blob.length; i += 24) expect(output.includes(blob.slice(i, i + 24))).toBe(false);
    }
  });
});
