import { scaled } from '../support/deadlines';
import { newApiKeyToken } from '../../src/modules/auth/domain/tokens';
import { createTestDatabase, TestDatabase } from '../support/database';
import { bearer } from '../support/fixtures';
import { processHttp } from '../support/openapi-validation';
import { ServerProcess, startServerProcess, tempDir } from '../support/processes';

/**
 * No token or password in any log line: a real server process at LOG_LEVEL=trace (the most
 * verbose), its stdout and stderr captured while it handles a signup, logins (right and wrong),
 * authenticated requests, a request with an unknown token, an API key created with an
 * Idempotency-Key (replayed, used, revoked) and a logout.
 */
describe('logs hold no token and no password', () => {
  let server: ServerProcess;
  let db: TestDatabase;
  const dataDir = tempDir('cds-auth-logs-');

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServerProcess({
      LOG_LEVEL: 'trace',
      DATABASE_URL: db.url,
      DATA_DIR: db.url ? undefined : dataDir.path,
      DEMO_SEED: 'false',
      WORKER_ENABLED: 'false',
    });
  }, scaled(90_000));
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dataDir.remove();
  });

  it('logs the requests, but none of the secrets they carried', async () => {
    const password = 'Sekr3t-passphrase-for-log-test';
    const wrongPassword = 'Wr0ng-passphrase-for-log-test';
    const unknownToken = newApiKeyToken();
    const api = await processHttp(server.url);
    const http = () => api;
    const requestIds: string[] = [];
    const track = <T extends { headers: Record<string, string> }>(res: T): T => {
      requestIds.push(res.headers['x-request-id']);
      return res;
    };

    const signup = track(await http().post('/v1/auth/signup').send({ email: 'logs@test.test', password, organization_name: 'Logs' }));
    expect(signup.status).toBe(201);
    const login = track(await http().post('/v1/auth/login').send({ email: 'logs@test.test', password }));
    expect(login.status).toBe(200);
    const failed = track(await http().post('/v1/auth/login').send({ email: 'logs@test.test', password: wrongPassword }));
    expect(failed.status).toBe(401);
    const wallet = track(await http().get('/v1/wallet').set(bearer(login.body.token)));
    expect(wallet.status).toBe(200);
    const wrongOrg = track(await http().get('/v1/wallet').set(bearer(login.body.token)).set('X-Org-ID', 'org_other'));
    expect(wrongOrg.status).toBe(403);
    const unknown = track(await http().get('/v1/wallet').set(bearer(unknownToken)));
    expect(unknown.status).toBe(401);
    // An API key created over HTTP with an Idempotency-Key (the key decrypts the stored answer), replayed, used and revoked.
    const idem = 'log-test-idempotency-key-5b9e';
    const org = { ...bearer(login.body.token), 'X-Org-ID': signup.body.organization.id as string };
    const created = track(await http().post('/v1/api-keys').set(org).set('Idempotency-Key', idem).send({ name: 'logged', scopes: ['vm:read'] }));
    expect(created.status).toBe(201);
    const replayed = track(await http().post('/v1/api-keys').set(org).set('Idempotency-Key', idem).send({ name: 'logged', scopes: ['vm:read'] }));
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(track(await http().get('/v1/wallet').set(bearer(created.body.token))).status).toBe(200);
    expect(track(await http().delete(`/v1/api-keys/${created.body.api_key.id}`).set(org)).status).toBe(204);
    // Invitations (accounts.md): one accepted by a signed-in user, one used to sign up; an Idempotency-Key on the first.
    const invited = track(await http().post('/v1/invitations').set(org).set('Idempotency-Key', 'log-test-invite-7c1d').send({ email: 'invited@test.test', role: 'viewer' }));
    expect(invited.status).toBe(201);
    const invitee = track(await http().post('/v1/auth/signup').send({ email: 'invited@test.test', password, organization_name: 'Invitee' }));
    expect(track(await http().post('/v1/invitations/accept').set(bearer(invitee.body.token)).send({ token: invited.body.token })).status).toBe(200);
    const viaMembers = track(await http().post('/v1/members').set(org).send({ email: 'newcomer@test.test', role: 'developer' }));
    expect(viaMembers.status).toBe(201);
    const newcomer = track(await http().post('/v1/auth/signup').send({ email: 'newcomer@test.test', password, invitation_token: viaMembers.body.token }));
    expect(newcomer.status).toBe(201);
    const logout = track(await http().post('/v1/auth/logout').set(bearer(login.body.token)));
    expect(logout.status).toBe(204);

    // Stop the process so that everything it buffered is written out.
    await server.stop();
    const output = server.output();
    expect(output).toContain('listening on');
    // The requests themselves were logged (one line each, with its request id)...
    for (const id of requestIds) expect(output).toContain(id);

    const secrets = {
      password,
      wrongPassword,
      signupToken: signup.body.token as string,
      loginToken: login.body.token as string,
      unknownToken,
      createdApiKey: created.body.token as string,
      idempotencyKey: idem,
      invitationToken: invited.body.token as string,
      signupInvitationToken: viaMembers.body.token as string,
      inviteeSession: invitee.body.token as string,
      newcomerSession: newcomer.body.token as string,
    };
    const found = Object.entries(secrets)
      .flatMap(([name, secret]) => [
        output.includes(secret) ? name : undefined,
        // The random part alone, in case a log line splits or re-encodes the prefix.
        secret.startsWith('cds_') && output.includes(secret.slice(secret.lastIndexOf('_') + 1)) ? `${name} (random part)` : undefined,
      ])
      .filter((x) => x !== undefined);
    // ...but no secret they carried.
    expect(found).toEqual([]);
    expect(output).not.toMatch(/Bearer\s+cds_/i);
  });
});
