import { scaled } from '../support/deadlines';
import { ServerAccess } from '../../src/modules/access/application/server-access';
import { AccessCheck } from '../../src/modules/verification/infrastructure/access-checks';
import { Db } from '../../src/shared/database/transaction';
import { ISO, envelope, teamOrg } from '../support/accounts';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { SSH_KEYS } from '../support/ssh-keys';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * servers.md "SSH keys and firewall rules (synchronous)" on the real application and database
 * (both engines): whole answers, the state left behind, the audit entries (without key material).
 */
describe('SSH keys and firewall rules', () => {
  let t: TestApp;
  let owner: Record<string, string>;
  let viewer: Record<string, string>;
  const key = bearer(apiToken('acc', 'rw'));
  const other = bearer(apiToken('oth', 'rw'));
  const EXAMPLE = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g x@y';
  const EXAMPLE_FP = 'SHA256:mKqU+0K8OhKmA8bBQi9Rz0Q5l7/g160hIP+rJYSTNj4';
  const SSH_ID = /^ssh_[A-Za-z0-9]{24}$/;
  const FWR_ID = /^fwr_[A-Za-z0-9]{24}$/;
  const login = async (email: string) => {
    const res = await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD });
    expect(res.status).toBe(200);
    return { ...bearer(res.body.token as string), 'X-Org-ID': 'org_acc' };
  };
  const count = async (table: string, org = 'org_acc') => (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE org_id = $1`, [org]))[0].n;
  const audit = async (query: string) => (await t.http.get(`/v1/audit-log?${query}`).set(owner).expect(200)).body.entries as Record<string, unknown>[];
  const keyId = async () => (await t.sql<{ id: string }>("SELECT id FROM api_keys WHERE org_id = 'org_acc'"))[0].id;

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({
      regions: [region()],
      organizations: [
        { ...teamOrg('acc'), volumes: [], servers: [{ id: 'vm_accweb1', name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' }, { id: 'vm_accweb2', name: 'web-2', region: 'id-jkt', zone: 'id-jkt-a' }, { id: 'vm_accgone', name: 'gone', region: 'id-jkt', zone: 'id-jkt-a' }] },
        { ...organization('oth'), volumes: [] },
        { ...organization('accq'), volumes: [] },
      ],
    });
    await t.sql("UPDATE servers SET deleted_at = now() WHERE id = 'vm_accgone'");
    owner = await login('owner@acc.test');
    viewer = await login('viewer@acc.test');
  });
  afterAll(async () => t?.close());

  describe('/v1/ssh-keys', () => {
    it("creates servers.md's example key: 201 with the fingerprint ssh-keygen prints, the audit entry without the key", async () => {
      const res = await t.http.post('/v1/ssh-keys').set(key).set('X-Forwarded-For', '198.51.100.4').send({ name: 'example', public_key: `  ${EXAMPLE.replace(/ /g, '   ')}  ` });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.stringMatching(SSH_ID), name: 'example', fingerprint: EXAMPLE_FP, public_key: EXAMPLE, created_at: expect.stringMatching(ISO) });
      expect(await t.sql('SELECT name, key_type, fingerprint, public_key FROM ssh_keys WHERE id = $1', [res.body.id])).toEqual([
        { name: 'example', key_type: 'ssh-ed25519', fingerprint: EXAMPLE_FP, public_key: EXAMPLE },
      ]);
      expect(await audit(`action=ssh_key.create&target_id=${res.body.id}`)).toEqual([
        expect.objectContaining({
          action: 'ssh_key.create',
          actor: expect.objectContaining({ type: 'api_key', id: await keyId() }),
          target: { type: 'ssh_key', id: res.body.id },
          data: { name: 'example', type: 'ssh-ed25519', fingerprint: EXAMPLE_FP },
        }),
      ]);
      expect(await t.http.get(`/v1/ssh-keys/${res.body.id}`).set(viewer).expect(200).then((r) => r.body)).toEqual(res.body);
    });

    it.each([
      ['e256', 'ecdsa-sha2-nistp256'],
      ['e384', 'ecdsa-sha2-nistp384'],
      ['e521', 'ecdsa-sha2-nistp521'],
      ['rsa2048', 'ssh-rsa'],
      ['ed', 'ssh-ed25519'],
    ] as const)('accepts an ssh-keygen %s key with the fingerprint ssh-keygen printed', async (name, type) => {
      const res = await t.http.post('/v1/ssh-keys').set(owner).send({ name: `kg-${name}`, public_key: SSH_KEYS[name].line });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.stringMatching(SSH_ID), name: `kg-${name}`, fingerprint: SSH_KEYS[name].fingerprint, public_key: SSH_KEYS[name].line, created_at: expect.stringMatching(ISO) });
      expect(await t.sql('SELECT key_type FROM ssh_keys WHERE id = $1', [res.body.id])).toEqual([{ key_type: type }]);
    });

    it('refuses each key type servers.md refuses with 400 naming public_key, and writes nothing', async () => {
      const before = await count('ssh_keys');
      const ed = SSH_KEYS.ed.line.split(' ')[1];
      const cases: [string, string][] = [
        [SSH_KEYS.dsa.line, 'public_key type ssh-dss (DSA) is not accepted: DSA keys are obsolete; use ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 or ssh-rsa of 2048 bits or more'],
        [SSH_KEYS.rsa1024.line, 'public_key is an RSA key of 1024 bits; at least 2048 are required'],
        [`ssh-ed25519-cert-v01@openssh.com ${ed} cert`, 'public_key type ssh-ed25519-cert-v01@openssh.com is a certificate, not accepted; give the plain public key (ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 or ssh-rsa of 2048 bits or more)'],
        [`sk-ecdsa-sha2-nistp256@openssh.com ${ed}`, 'public_key type sk-ecdsa-sha2-nistp256@openssh.com is a security-key (FIDO) key, not accepted; use ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 or ssh-rsa of 2048 bits or more'],
        [`no-pty ${SSH_KEYS.ed.line}`, 'public_key must be "<type> <base64>[ <comment>]" with type ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 or ssh-rsa of 2048 bits or more'],
        ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8*', 'public_key key data is not valid base64'],
        [`ssh-rsa ${ed}`, 'public_key names type ssh-rsa but its key data holds a key of type "ssh-ed25519"'],
        [`ecdsa-sha2-nistp521 ${SSH_KEYS.e384.line.split(' ')[1]}`, 'public_key names type ecdsa-sha2-nistp521 but its key data holds a key of type "ecdsa-sha2-nistp384"'],
        [`${SSH_KEYS.ed.line}\n`, 'public_key must be one line without control characters (tabs, line breaks)'],
      ];
      for (const [line, message] of cases) {
        const res = await t.http.post('/v1/ssh-keys').set(owner).send({ name: 'refused', public_key: line });
        expect([line.slice(0, 40), res.status, res.body]).toEqual([line.slice(0, 40), 400, envelope(res, 'invalid_request', message, { field: 'public_key' })]);
      }
      const noKey = await t.http.post('/v1/ssh-keys').set(owner).send({ name: 'refused' });
      expect(noKey.body).toEqual(envelope(noKey, 'invalid_request', 'public_key must be a string: an OpenSSH public key line', { field: 'public_key' }));
      const blank = await t.http.post('/v1/ssh-keys').set(owner).send({ name: '  ', public_key: SSH_KEYS.ed.line });
      expect(blank.body).toEqual(envelope(blank, 'invalid_request', 'name must be 1 to 64 characters, not blank, without control characters', { field: 'name' }));
      expect(await count('ssh_keys')).toBe(before);
    });

    it('409 conflict: the fingerprint (checked first, whatever the comment) or the name taken, naming the holder', async () => {
      const holder = (await t.sql<{ id: string }>("SELECT id FROM ssh_keys WHERE name = 'example'"))[0].id;
      const before = await count('ssh_keys');
      const sameKey = await t.http.post('/v1/ssh-keys').set(owner).send({ name: 'example', public_key: EXAMPLE.replace('x@y', 'another comment') });
      expect([sameKey.status, sameKey.body]).toEqual([409, envelope(sameKey, 'conflict', `SSH key ${holder} has the fingerprint ${EXAMPLE_FP} already`, { existing_id: holder, field: 'public_key' })]);
      const sameName = await t.http.post('/v1/ssh-keys').set(owner).send({ name: 'example', public_key: SSH_KEYS.e256.line.replace(/ e256$/, ' x') });
      // e256 exists as kg-e256: its fingerprint comes first.
      const e256 = (await t.sql<{ id: string }>("SELECT id FROM ssh_keys WHERE name = 'kg-e256'"))[0].id;
      expect(sameName.body.error.details).toEqual({ existing_id: e256, field: 'public_key' });
      await t.http.delete(`/v1/ssh-keys/${e256}`).set(owner).expect(204);
      const nameOnly = await t.http.post('/v1/ssh-keys').set(owner).send({ name: 'example', public_key: SSH_KEYS.e256.line });
      expect([nameOnly.status, nameOnly.body]).toEqual([409, envelope(nameOnly, 'conflict', `SSH key ${holder} has the name "example" already`, { existing_id: holder, field: 'name' })]);
      // Another organization may hold the same key.
      expect((await t.http.post('/v1/ssh-keys').set(other).send({ name: 'example', public_key: EXAMPLE })).status).toBe(201);
      expect(await count('ssh_keys')).toBe(before - 1);
    });

    it('lists newest first with the fingerprint and name filters and pages; another organization sees its own', async () => {
      const all = await t.http.get('/v1/ssh-keys?limit=100').set(viewer).expect(200);
      const rows = await t.sql<{ id: string }>("SELECT id FROM ssh_keys WHERE org_id = 'org_acc' ORDER BY created_at DESC, id DESC");
      expect(all.body).toEqual({ ssh_keys: rows.map((r) => expect.objectContaining({ id: r.id })), next_cursor: null });
      const byFp = await t.http.get(`/v1/ssh-keys?fingerprint=${encodeURIComponent(EXAMPLE_FP)}`).set(key).expect(200);
      expect(byFp.body).toEqual({ ssh_keys: [expect.objectContaining({ name: 'example', fingerprint: EXAMPLE_FP })], next_cursor: null });
      expect((await t.http.get('/v1/ssh-keys?name=kg-ed').set(key).expect(200)).body.ssh_keys.map((k: { name: string }) => k.name)).toEqual(['kg-ed']);
      const first = await t.http.get('/v1/ssh-keys?limit=2').set(key).expect(200);
      expect(first.body.ssh_keys.map((k: { id: string }) => k.id)).toEqual(rows.slice(0, 2).map((r) => r.id));
      const second = await t.http.get(`/v1/ssh-keys?limit=2&cursor=${first.body.next_cursor}`).set(key).expect(200);
      expect(second.body.ssh_keys.map((k: { id: string }) => k.id)).toEqual(rows.slice(2, 4).map((r) => r.id));
      expect((await t.http.get('/v1/ssh-keys').set(other).expect(200)).body.ssh_keys.map((k: { name: string }) => k.name)).toEqual(['example']);
      const id = rows[0].id;
      const foreign = await t.http.get(`/v1/ssh-keys/${id}`).set(other);
      expect([foreign.status, foreign.body]).toEqual([404, envelope(foreign, 'not_found', `SSH key ${id} not found`)]);
      const bad = await t.http.get('/v1/ssh-keys?limit=0').set(key);
      expect(bad.body).toEqual(envelope(bad, 'invalid_request', 'limit must be a whole number from 1 to 100', { field: 'limit' }));
    });

    it('renames (200, audited old and new), refuses a taken name (409), deletes (204, then 404), audited', async () => {
      const id = (await t.sql<{ id: string }>("SELECT id FROM ssh_keys WHERE name = 'kg-ed'"))[0].id;
      const res = await t.http.patch(`/v1/ssh-keys/${id}`).set(owner).send({ name: 'alice laptop' });
      expect([res.status, res.body]).toEqual([200, { id, name: 'alice laptop', fingerprint: SSH_KEYS.ed.fingerprint, public_key: SSH_KEYS.ed.line, created_at: expect.stringMatching(ISO) }]);
      expect((await audit(`action=ssh_key.update&target_id=${id}`)).map((e) => e.data)).toEqual([{ changes: { name: { old: 'kg-ed', new: 'alice laptop' } } }]);
      const holder = (await t.sql<{ id: string }>("SELECT id FROM ssh_keys WHERE name = 'example' AND org_id = 'org_acc'"))[0].id;
      const taken = await t.http.patch(`/v1/ssh-keys/${id}`).set(owner).send({ name: 'example' });
      expect([taken.status, taken.body]).toEqual([409, envelope(taken, 'conflict', `SSH key ${holder} has the name "example" already`, { existing_id: holder, field: 'name' })]);
      const forbidden = await t.http.patch(`/v1/ssh-keys/${id}`).set(viewer).send({ name: 'x' });
      expect(forbidden.status).toBe(403);
      await t.http.delete(`/v1/ssh-keys/${id}`).set(owner).expect(204);
      const again = await t.http.delete(`/v1/ssh-keys/${id}`).set(owner);
      expect([again.status, again.body]).toEqual([404, envelope(again, 'not_found', `SSH key ${id} not found`)]);
      expect(await t.sql('SELECT id FROM ssh_keys WHERE id = $1', [id])).toEqual([]);
      expect((await audit(`action=ssh_key.delete&target_id=${id}`)).map((e) => e.data)).toEqual([{ name: 'alice laptop', fingerprint: SSH_KEYS.ed.fingerprint }]);
    });

    it('Idempotency-Key: a retried create answers the same 201 once; a retried delete the same 204', async () => {
      const body = { name: 'idem', public_key: SSH_KEYS.ed.line };
      const first = await t.http.post('/v1/ssh-keys').set(owner).set('Idempotency-Key', 'ssh-idem-1').send(body);
      const again = await t.http.post('/v1/ssh-keys').set(owner).set('Idempotency-Key', 'ssh-idem-1').send(body);
      expect(first.status).toBe(201);
      expect([again.status, again.body, again.headers['idempotent-replayed']]).toEqual([201, first.body, 'true']);
      expect(await t.sql("SELECT count(*)::int AS n FROM ssh_keys WHERE name = 'idem'")).toEqual([{ n: 1 }]);
      const other409 = await t.http.post('/v1/ssh-keys').set(owner).set('Idempotency-Key', 'ssh-idem-1').send({ ...body, name: 'idem2' });
      expect(other409.body.error.code).toBe('idempotency_conflict');
      const d1 = await t.http.delete(`/v1/ssh-keys/${first.body.id}`).set(owner).set('Idempotency-Key', 'ssh-idem-del');
      const d2 = await t.http.delete(`/v1/ssh-keys/${first.body.id}`).set(owner).set('Idempotency-Key', 'ssh-idem-del');
      expect([d1.status, d2.status, d2.headers['idempotent-replayed']]).toEqual([204, 204, 'true']);
    });

    it('a viewer may read but not create: 403 forbidden', async () => {
      const res = await t.http.post('/v1/ssh-keys').set(viewer).send({ name: 'v', public_key: SSH_KEYS.ed.line });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    });
  });

  describe('/v1/firewall-rules', () => {
    let ssh: Record<string, unknown>;

    it("creates servers.md's canonical form example: 201 in canonical form, audited with it", async () => {
      const res = await t.http.post('/v1/firewall-rules').set(key).send({
        direction: 'in', protocol: 'tcp', port: '22-22', sources: ['10.1.2.3/8', '2001:DB8::1/32', '10.0.0.0/8'], description: 'ssh',
      });
      expect(res.status).toBe(201);
      ssh = res.body;
      expect(res.body).toEqual({
        id: expect.stringMatching(FWR_ID), direction: 'in', protocol: 'tcp', port: '22', sources: ['10.0.0.0/8', '2001:db8::/32'], destinations: [],
        server_id: null, description: 'ssh', created_at: expect.stringMatching(ISO),
      });
      expect(await t.sql('SELECT direction, protocol, port, sources, destinations, server_id FROM firewall_rules WHERE id = $1', [res.body.id])).toEqual([
        { direction: 'in', protocol: 'tcp', port: '22', sources: ['10.0.0.0/8', '2001:db8::/32'], destinations: [], server_id: null },
      ]);
      expect(await audit(`action=firewall_rule.create&target_id=${res.body.id}`)).toEqual([
        expect.objectContaining({
          target: { type: 'firewall_rule', id: res.body.id },
          data: { direction: 'in', protocol: 'tcp', port: '22', sources: ['10.0.0.0/8', '2001:db8::/32'], destinations: [], server_id: null, description: 'ssh' },
        }),
      ]);
      expect((await t.http.get(`/v1/firewall-rules/${res.body.id}`).set(viewer).expect(200)).body).toEqual(res.body);
    });

    it('400 naming the member: icmp with a port, tcp without one, sources on an out rule, a bad CIDR; nothing written', async () => {
      const before = await count('firewall_rules');
      const cases: [Record<string, unknown>, string, string][] = [
        [{ direction: 'in', protocol: 'icmp', port: '8', sources: ['0.0.0.0/0'] }, 'port', 'port must be absent or null for icmp (a rule allows every ICMP type)'],
        [{ direction: 'in', protocol: 'tcp', sources: ['0.0.0.0/0'] }, 'port', 'port is required for tcp: "N" or "N-M" with 1 ≤ N ≤ M ≤ 65535'],
        [{ direction: 'in', protocol: 'udp', port: 53, sources: ['0.0.0.0/0'] }, 'port', 'port must be "N" or "N-M" with 1 ≤ N ≤ M ≤ 65535, without leading zeros (a string)'],
        [{ direction: 'out', protocol: 'tcp', port: '443', sources: ['0.0.0.0/0'] }, 'sources', 'sources must be absent for an out rule (it matches destinations)'],
        [{ direction: 'in', protocol: 'tcp', port: '443', sources: ['10.0.0.256/8'] }, 'sources[0]', 'sources[0] must be an IPv4 or IPv6 address or CIDR (e.g. 203.0.113.0/24, 2001:db8::/32)'],
        [{ direction: 'in', protocol: 'tcp', port: '443', sources: Array.from({ length: 101 }, (_, i) => `10.0.0.${i}`) }, 'sources', 'sources must be a list of 1 to 100 IPv4 or IPv6 addresses or CIDRs'],
        [{ direction: 'in', protocol: 'tcp', port: '443', sources: ['::/0'], server_id: 7 }, 'server_id', 'server_id must be a server id or null'],
      ];
      for (const [body, field, message] of cases) {
        const res = await t.http.post('/v1/firewall-rules').set(owner).send(body);
        expect([res.status, res.body]).toEqual([400, envelope(res, 'invalid_request', message, { field })]);
      }
      expect(await count('firewall_rules')).toBe(before);
    });

    it('409 conflict with existing_id for the same canonical rule spelt otherwise (description aside)', async () => {
      const res = await t.http.post('/v1/firewall-rules').set(owner).send({
        direction: 'in', protocol: 'tcp', port: '22', sources: ['2001:0db8:0000::/32', '10.9.9.9/8', '10.0.0.0/8'], description: 'another',
      });
      expect([res.status, res.body]).toEqual([409, envelope(res, 'conflict', `Firewall rule ${ssh.id} is the same rule (in canonical form)`, { existing_id: ssh.id })]);
      // Only for the same server (null = all): the same match for one server is another rule.
      const own = await t.http.post('/v1/firewall-rules').set(owner).send({ direction: 'in', protocol: 'tcp', port: '22', sources: ['10.0.0.0/8', '2001:db8::/32'], server_id: 'vm_accweb1' });
      expect([own.status, own.body.server_id]).toEqual([201, 'vm_accweb1']);
    });

    it("404 for a server_id that is no live server of the organization", async () => {
      for (const serverId of ['vm_nope', 'vm_othweb1', 'vm_accgone']) {
        const res = await t.http.post('/v1/firewall-rules').set(owner).send({ direction: 'in', protocol: 'icmp', sources: ['0.0.0.0/0'], server_id: serverId });
        expect([res.status, res.body]).toEqual([404, envelope(res, 'not_found', `Server ${serverId} not found`)]);
      }
    });

    it('GET /v1/servers/{id}/firewall: rules in force, defaults, and the verdict for allowed and denied packets', async () => {
      const icmp = (await t.http.post('/v1/firewall-rules').set(owner).send({ direction: 'in', protocol: 'icmp', sources: ['0.0.0.0/0', '::/0'], server_id: 'vm_accweb2' }).expect(201)).body;
      const rules = (await t.http.get('/v1/firewall-rules?limit=100').set(key).expect(200)).body.firewall_rules as Record<string, unknown>[];
      const web1 = rules.filter((r) => r.server_id === null || r.server_id === 'vm_accweb1');
      const fw = await t.http.get('/v1/servers/vm_accweb1/firewall').set(viewer);
      expect([fw.status, fw.body]).toEqual([200, { server_id: 'vm_accweb1', inbound_default: 'deny', outbound_default: 'allow', rules: web1 }]);
      expect(web1.map((r) => r.id)).toContain(ssh.id);
      expect(web1.map((r) => r.id)).not.toContain(icmp.id);

      const ask = async (server: string, q: string) => (await t.http.get(`/v1/servers/${server}/firewall?${q}`).set(key).expect(200)).body.verdict;
      expect(await ask('vm_accweb1', 'direction=in&protocol=tcp&address=10.20.30.40&port=22')).toEqual({ allowed: true, rule_id: ssh.id });
      expect(await ask('vm_accweb1', 'direction=in&protocol=tcp&address=2001:db8:1::5&port=22')).toEqual({ allowed: true, rule_id: ssh.id });
      expect(await ask('vm_accweb1', 'direction=in&protocol=tcp&address=192.0.2.1&port=22')).toEqual({ allowed: false, rule_id: null });
      expect(await ask('vm_accweb1', 'direction=in&protocol=tcp&address=10.20.30.40&port=23')).toEqual({ allowed: false, rule_id: null });
      expect(await ask('vm_accweb1', 'direction=in&protocol=icmp&address=192.0.2.1')).toEqual({ allowed: false, rule_id: null });
      expect(await ask('vm_accweb2', 'direction=in&protocol=icmp&address=192.0.2.1')).toEqual({ allowed: true, rule_id: icmp.id });
      expect(await ask('vm_accweb1', 'direction=out&protocol=udp&address=192.0.2.1&port=53')).toEqual({ allowed: true, rule_id: null });

      // An out rule turns outbound to deny-unless-allowed, at once, on every server it covers.
      const dns = (await t.http.post('/v1/firewall-rules').set(owner).send({ direction: 'out', protocol: 'udp', port: '53', destinations: ['192.0.2.0/24'] }).expect(201)).body;
      expect((await t.http.get('/v1/servers/vm_accweb1/firewall').set(key).expect(200)).body.outbound_default).toBe('deny');
      expect(await ask('vm_accweb1', 'direction=out&protocol=udp&address=192.0.2.1&port=53')).toEqual({ allowed: true, rule_id: dns.id });
      expect(await ask('vm_accweb1', 'direction=out&protocol=tcp&address=192.0.2.1&port=443')).toEqual({ allowed: false, rule_id: null });

      const partial = await t.http.get('/v1/servers/vm_accweb1/firewall?direction=in&protocol=tcp&address=10.0.0.1').set(key);
      expect([partial.status, partial.body]).toEqual([400, envelope(partial, 'invalid_request', 'port is required: a verdict needs direction, protocol, address and (tcp, udp) port', { field: 'port' })]);
      const network = await t.http.get('/v1/servers/vm_accweb1/firewall?direction=in&protocol=tcp&address=10.0.0.0/8&port=22').set(key);
      expect(network.body).toEqual(envelope(network, 'invalid_request', 'address must be one IPv4 or IPv6 address, not a network', { field: 'address' }));
      const foreign = await t.http.get('/v1/servers/vm_othweb1/firewall').set(key);
      expect([foreign.status, foreign.body]).toEqual([404, envelope(foreign, 'not_found', 'Server vm_othweb1 not found')]);
    });

    it('lists oldest first; server_id lists that server\'s own rules only', async () => {
      const rows = await t.sql<{ id: string }>("SELECT id FROM firewall_rules WHERE org_id = 'org_acc' ORDER BY created_at, id COLLATE \"C\"");
      const all = await t.http.get('/v1/firewall-rules').set(key).expect(200);
      expect(all.body).toEqual({ firewall_rules: rows.map((r) => expect.objectContaining({ id: r.id })), next_cursor: null });
      const own = await t.http.get('/v1/firewall-rules?server_id=vm_accweb1').set(key).expect(200);
      expect(own.body).toEqual({ firewall_rules: [expect.objectContaining({ server_id: 'vm_accweb1', port: '22' })], next_cursor: null });
      const page1 = await t.http.get('/v1/firewall-rules?limit=1').set(key).expect(200);
      const page2 = await t.http.get(`/v1/firewall-rules?limit=1&cursor=${page1.body.next_cursor}`).set(key).expect(200);
      expect([...page1.body.firewall_rules, ...page2.body.firewall_rules].map((r: { id: string }) => r.id)).toEqual(rows.slice(0, 2).map((r) => r.id));
    });

    it('DELETE: 204, out of force at once, again 404; audited with the canonical rule', async () => {
      const res = await t.http.delete(`/v1/firewall-rules/${ssh.id}`).set(owner).set('Idempotency-Key', 'fwr-del-1');
      expect(res.status).toBe(204);
      const replay = await t.http.delete(`/v1/firewall-rules/${ssh.id}`).set(owner).set('Idempotency-Key', 'fwr-del-1');
      expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([204, 'true']);
      const again = await t.http.delete(`/v1/firewall-rules/${ssh.id}`).set(owner);
      expect([again.status, again.body]).toEqual([404, envelope(again, 'not_found', `Firewall rule ${ssh.id} not found`)]);
      const verdict = (await t.http.get('/v1/servers/vm_accweb2/firewall?direction=in&protocol=tcp&address=10.20.30.40&port=22').set(key).expect(200)).body.verdict;
      expect(verdict).toEqual({ allowed: false, rule_id: null });
      expect((await audit(`action=firewall_rule.delete&target_id=${ssh.id}`)).map((e) => e.data)).toEqual([
        { direction: 'in', protocol: 'tcp', port: '22', sources: ['10.0.0.0/8', '2001:db8::/32'], destinations: [], server_id: null, description: 'ssh' },
      ]);
    });
  });

  describe('what servers get from this module (ServerAccess)', () => {
    it("resolves ssh_key_ids to the organization's public keys, in order; an unknown or foreign id is 400 naming ssh_key_ids[i]", async () => {
      const access = t.app.get(ServerAccess);
      const mine = await t.sql<{ id: string; name: string; fingerprint: string; public_key: string }>(
        "SELECT id, name, fingerprint, public_key FROM ssh_keys WHERE org_id = 'org_acc' ORDER BY name LIMIT 2",
      );
      expect(await access.resolveSshKeys('org_acc', [mine[1].id, mine[0].id])).toEqual(
        [mine[1], mine[0]].map((k) => ({ id: k.id, name: k.name, fingerprint: k.fingerprint, publicKey: k.public_key })),
      );
      const foreign = (await t.sql<{ id: string }>("SELECT id FROM ssh_keys WHERE org_id = 'org_oth'"))[0].id;
      await expect(access.resolveSshKeys('org_acc', [mine[0].id, foreign])).rejects.toMatchObject({
        code: 'invalid_request', message: `ssh_key_ids[1]: ${foreign} is no SSH key of the organization`, details: { field: 'ssh_key_ids[1]' },
      });
      await expect(access.resolveSshKeys('org_acc', [mine[0].id, mine[0].id])).rejects.toMatchObject({ details: { field: 'ssh_key_ids[1]' } });
    });

    it("deletes a deleted server's own rules, each audited firewall_rule.delete with reason server_deleted", async () => {
      const own = await t.sql<{ id: string }>("SELECT id FROM firewall_rules WHERE server_id = 'vm_accweb2'");
      expect(own).toHaveLength(1);
      const deleted = await t.app.get(ServerAccess).deleteServerRules('org_acc', 'vm_accweb2', { type: 'user', id: null, ip: '203.0.113.1' });
      expect(deleted.map((r) => r.id)).toEqual(own.map((r) => r.id));
      expect(await t.sql("SELECT id FROM firewall_rules WHERE server_id = 'vm_accweb2'")).toEqual([]);
      expect((await audit(`action=firewall_rule.delete&target_id=${own[0].id}`)).map((e) => [e.ip, (e.data as { reason: string }).reason])).toEqual([['203.0.113.1', 'server_deleted']]);
    });
  });

  it('no audit entry holds key material: neither a public key line nor its base64', async () => {
    const entries = await t.sql<{ action: string; data: unknown }>("SELECT action, data FROM audit_log WHERE action LIKE 'ssh\\_key.%'");
    expect(entries.length).toBeGreaterThanOrEqual(8);
    const text = JSON.stringify(entries);
    for (const k of [EXAMPLE, ...Object.values(SSH_KEYS).map((x) => x.line)]) expect(text).not.toContain(k.split(' ')[1].slice(0, 40));
  });

  it('limits: the 101st SSH key and the 101st firewall rule of an organization are 409 quota_exceeded, and nothing is written', async () => {
    const q = bearer(apiToken('accq', 'rw'));
    const field = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
    const keyLine = (i: number) => {
      const x = Buffer.alloc(32);
      x.writeUInt32BE(i + 1);
      return `ssh-ed25519 ${Buffer.concat([field(Buffer.from('ssh-ed25519')), field(x)]).toString('base64')}`;
    };
    for (let i = 0; i < 100; i++) {
      expect((await t.http.post('/v1/ssh-keys').set(q).send({ name: `k${i}`, public_key: keyLine(i) })).status).toBe(201);
      expect((await t.http.post('/v1/firewall-rules').set(q).send({ direction: 'out', protocol: 'udp', port: String(2000 + i), destinations: ['0.0.0.0/0'] })).status).toBe(201);
    }
    const key101 = await t.http.post('/v1/ssh-keys').set(q).send({ name: 'k100', public_key: keyLine(100) });
    expect([key101.status, key101.body]).toEqual([409, envelope(key101, 'quota_exceeded', 'An organization may hold at most 100 SSH keys; delete one first', { limit: 100 })]);
    const rule101 = await t.http.post('/v1/firewall-rules').set(q).send({ direction: 'out', protocol: 'udp', port: '3000', destinations: ['0.0.0.0/0'] });
    expect([rule101.status, rule101.body]).toEqual([409, envelope(rule101, 'quota_exceeded', 'An organization may hold at most 100 firewall rules; delete one first', { limit: 100 })]);
    // A duplicate is still named as such at the limit (conflict is checked before the limit).
    const dup = await t.http.post('/v1/firewall-rules').set(q).send({ direction: 'out', protocol: 'udp', port: '2000-2000', destinations: ['0.0.0.0/0'] });
    expect(dup.body.error.code).toBe('conflict');
    expect([await count('ssh_keys', 'org_accq'), await count('firewall_rules', 'org_accq')]).toEqual([100, 100]);
  }, scaled(120_000));

  it('verify: the state left holds the invariant; a tampered rule, a rule of a deleted server and a tampered key are each named', async () => {
    const check = new AccessCheck(t.app.get(Db));
    expect(await check.findViolations()).toEqual([]);
    const rule = (await t.http.post('/v1/firewall-rules').set(owner).send({ direction: 'in', protocol: 'udp', port: '500', sources: ['192.0.2.0/24'], server_id: 'vm_accweb1' }).expect(201)).body;
    const web = (await t.sql<{ id: string }>("SELECT id FROM firewall_rules WHERE server_id = 'vm_accweb1' AND port = '22'"))[0].id;
    const sshKey = (await t.sql<{ id: string }>("SELECT id FROM ssh_keys WHERE name = 'example' AND org_id = 'org_acc'"))[0].id;
    await t.sql(`UPDATE firewall_rules SET sources = ARRAY['192.0.2.7/24'] WHERE id = $1`, [rule.id]);
    await t.sql(`UPDATE ssh_keys SET fingerprint = 'SHA256:x' WHERE id = $1`, [sshKey]);
    await t.sql("UPDATE servers SET deleted_at = now() WHERE id = 'vm_accweb1'");
    const subjects = (await check.findViolations()).map((f) => [f.subject, f.message]);
    expect(subjects).toEqual(expect.arrayContaining([
      [rule.id, 'firewall rule is not stored in canonical form'],
      [web, 'firewall rule of the deleted server vm_accweb1 was not deleted with it'],
      [sshKey, 'SSH key fingerprint or stored line differs from its public key'],
    ]));
    await t.sql("UPDATE servers SET deleted_at = NULL, status = 'running' WHERE id = 'vm_accweb1'");
  });

  it('the OpenAPI document lists every route of this module', () => {
    const paths = t.document.paths;
    expect(Object.keys(paths['/v1/ssh-keys']).sort()).toEqual(['get', 'head', 'post']);
    expect(Object.keys(paths['/v1/ssh-keys/{id}']).sort()).toEqual(['delete', 'get', 'head', 'patch']);
    expect(Object.keys(paths['/v1/firewall-rules']).sort()).toEqual(['get', 'head', 'post']);
    expect(Object.keys(paths['/v1/firewall-rules/{id}']).sort()).toEqual(['delete', 'get', 'head']);
    expect(Object.keys(paths['/v1/servers/{id}/firewall']).sort()).toEqual(['get', 'head']);
  });
});
