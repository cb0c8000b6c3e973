import { scaled } from '../support/deadlines';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { ComputeGateway } from '../../src/modules/servers/application/compute-gateway';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization } from '../support/fixtures';
import { AgentProcess, consoleSession, hostAgentUnavailable, imageReady, ssh, startAgent, tcpProbe } from '../support/host-agent';
import { freePort, runCli, tempDir } from '../support/processes';
import { waitFor } from '../support/renewals';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * The host agent as a real provider (docs/explanation/host-agent.md), driven through the API on
 * PostgreSQL: a debian-12 server bought with an SSH key and user_data is an LXC container this
 * host reaches over SSH; its firewall rejects what no rule allows; a disk bought attached keeps
 * its bytes through a detach and an attach to a second server; stop (graceful, forced), start,
 * reboot (soft, hard) and the console work; `cli verify` finds the host's instances and disks
 * equal to the database's; deletions leave the host clean; a SIGKILL of the agent mid-creation
 * ends with one container. Runs as root with Debian's lxc, debootstrap and nftables (installed
 * when missing); the image is built once per machine (/var/cache/cds-agent) and reused after.
 */
const unavailable = usingPostgres() ? hostAgentUnavailable() : 'needs DATABASE_URL (PostgreSQL)';
const describeOnHost = unavailable ? describe.skip : describe;
if (unavailable) console.log(`host-agent.e2e-spec: skipped, ${unavailable}`);

describeOnHost('a real server on this machine (host agent, PostgreSQL)', () => {
  let t: TestApp;
  let agent: AgentProcess;
  let advance: AdvanceOperations;
  const rw = bearer(apiToken('ha', 'rw'));
  const keys = tempDir('cds-agent-e2e-key-');
  const keyFile = join(keys.path, 'id_ed25519');
  let sshKeyId: string;
  const servers: Record<string, { id: string; ipv4: string }> = {};
  let volumeId: string;

  /** Runs the worker until the operation has ended (its retries included); its final state. */
  const settle = async (operationId: string, timeoutMs = 180_000) => {
    let op: { status: string; error: unknown } = { status: 'pending', error: null };
    await waitFor(`operation ${operationId} to end`, async () => {
      await advance.runUntilIdle();
      op = (await t.http.get(`/v1/operations/${operationId}`).set(rw)).body;
      return op.status === 'succeeded' || op.status === 'failed';
    }, timeoutMs, 200);
    return op;
  };
  const act = async (method: 'post' | 'delete', path: string, body?: object) => {
    const res = await (method === 'post' ? t.http.post(path).set(rw).send(body ?? {}) : t.http.delete(path).set(rw));
    expect(res.status).toBe(202);
    return settle(res.body.operation.id);
  };
  const containerState = (serverId: string) =>
    execFileSync('lxc-info', ['-P', join(agent.stateDir, 'lxc'), '-n', `${agent.prefix}-${serverId}`, '-sH'], { encoding: 'utf8' }).trim();
  const buy = async (name: string, userData?: string) => {
    const res = await t.http.post('/v1/servers').set(rw).send({
      name, region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD', ssh_key_ids: [sshKeyId], ...(userData ? { user_data: userData } : {}),
    });
    expect(res.status).toBe(202);
    expect(await settle(res.body.operation.id)).toMatchObject({ status: 'succeeded', error: null });
    const server = (await t.http.get(`/v1/servers/${res.body.server.id}`).set(rw)).body;
    expect(server).toMatchObject({ status: 'running', ipv4: expect.stringMatching(/^198\.18\.\d+\.\d+$/) });
    return { id: server.id as string, ipv4: server.ipv4 as string };
  };

  beforeAll(async () => {
    const started = Date.now();
    agent = await startAgent(await freePort());
    await imageReady(agent, 'debian-12', 20 * 60_000);
    console.log(`host-agent.e2e-spec: image ready after ${Math.round((Date.now() - started) / 1000)} s`);
    t = await startTestApp({ computeProvider: 'agent', agentUrls: [agent.url], agentSecret: agent.secret, providerRetryBaseMs: 200 });
    await t.seed({
      server_plans: SERVER_PLANS, images: IMAGES, regions: [serverRegion('id-jkt', 256)],
      organizations: [organization('ha', { servers: [], volumes: [], wallet: { USD: '500.00000', IDR: '1500000' } })],
    });
    advance = t.app.get(AdvanceOperations);
    await t.app.get(ComputeGateway).probeOnce(); // learns the agent's images now rather than within a second
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'e2e@host-agent', '-f', keyFile]);
    const key = await t.http.post('/v1/ssh-keys').set(rw).send({ name: 'e2e', public_key: readFileSync(`${keyFile}.pub`, 'utf8').trim() });
    expect(key.status).toBe(201);
    sshKeyId = key.body.id;
  }, 25 * 60_000);

  afterAll(async () => {
    await t?.close();
    await agent?.kill();
    agent?.cleanUp();
    keys.remove();
  }, scaled(120_000));

  it('offers only the images an agent can serve: debian-12; another catalog image is not found', async () => {
    const options = await t.http.get('/v1/server-options?region=id-jkt').set(rw);
    expect(options.status).toBe(200);
    expect(options.body.images).toEqual([{ id: 'debian-12', name: 'Debian 12', type: 'system' }]);
    const res = await t.http.post('/v1/servers').set(rw).send({ name: 'other', region: 'id-jkt', plan: 'cx1', image: 'ubuntu-24.04', term_months: 1, currency: 'USD' });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'not_found', message: expect.stringContaining('ubuntu-24.04') });
  });

  it('buys a server whose user_data ran once at first boot; SSH from the host reads its file once a rule opens port 22; a port without a rule is refused', async () => {
    const userData = '#!/bin/sh\necho "written by user_data on $(hostname)" > /root/from-user-data.txt\nsystemd-run --unit=alt-ssh /usr/sbin/sshd -D -p 2222\n';
    servers.a = await buy('web-a', userData);
    expect(containerState(servers.a.id)).toBe('RUNNING');
    // A new server denies all inbound traffic: the agent's ruleset rejects (host unreachable).
    expect(await tcpProbe(servers.a.ipv4, 22)).toBe('EHOSTUNREACH');
    const rule = await t.http.post('/v1/firewall-rules').set(rw).send({ direction: 'in', protocol: 'tcp', port: '22', sources: ['0.0.0.0/0'] });
    expect(rule.status).toBe(201);
    expect(await tcpProbe(servers.a.ipv4, 22)).toBe('connected');
    expect(await t.sql('SELECT server_id FROM firewall_pushes')).toEqual([]);
    let file = '';
    await waitFor('user_data to have run', async () => {
      file = ssh(keyFile, servers.a.ipv4, 'cat /root/from-user-data.txt 2>/dev/null || true');
      return file !== '';
    }, 60_000, 500);
    expect(file).toBe('written by user_data on web-a\n');
    expect(ssh(keyFile, servers.a.ipv4, 'hostname')).toBe('web-a\n');
    // Port 2222 has a listener inside (user_data's second sshd) but no rule: refused from the host.
    await waitFor('the second sshd to listen', async () => ssh(keyFile, servers.a.ipv4, 'ss -Hltn "sport = :2222"').includes('2222'), 30_000, 500);
    expect(await tcpProbe(servers.a.ipv4, 2222)).toBe('EHOSTUNREACH');
    // The cgroup limits of cx1: 1 vCPU (a 100 ms quota per 100 ms), 2 GB.
    const cgroup = (key: string) => execFileSync('lxc-cgroup', ['-P', join(agent.stateDir, 'lxc'), '-n', `${agent.prefix}-${servers.a.id}`, key], { encoding: 'utf8' }).trim();
    expect([cgroup('cpu.cfs_quota_us'), cgroup('cpu.cfs_period_us'), cgroup('memory.limit_in_bytes')]).toEqual(['100000', '100000', '2147483648']);
  }, scaled(300_000));

  it('a disk bought attached holds what was written at its mount path through a detach and an attach to a second server', async () => {
    servers.b = await buy('web-b');
    const bought = await t.http.post('/v1/volumes').set(rw).send({ name: 'data', region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD', server_id: servers.a.id, mount_path: '/mnt/data' });
    expect(bought.status).toBe(202);
    volumeId = bought.body.volume.id;
    expect(await settle(bought.body.operation.id)).toMatchObject({ status: 'succeeded' });
    expect((await t.http.get(`/v1/volumes/${volumeId}`).set(rw)).body).toMatchObject({ status: 'attached', server: { id: servers.a.id, name: 'web-a' }, mount_path: '/mnt/data', mounted: true });
    expect(ssh(keyFile, servers.a.ipv4, 'echo "bytes of $(hostname)" > /mnt/data/hello.txt && sync && findmnt -n -o FSTYPE,SIZE /mnt/data')).toMatch(/^ext4\s+9\.\dG\n$/);
    expect(await act('post', `/v1/volumes/${volumeId}/detach`)).toMatchObject({ status: 'succeeded' });
    expect(ssh(keyFile, servers.a.ipv4, 'mountpoint -q /mnt/data && echo mounted || echo not-mounted')).toBe('not-mounted\n');
    expect(await act('post', `/v1/volumes/${volumeId}/attach`, { server_id: servers.b.id, mount_path: '/srv/disk' })).toMatchObject({ status: 'succeeded' });
    expect(ssh(keyFile, servers.b.ipv4, 'cat /srv/disk/hello.txt')).toBe('bytes of web-a\n');
    // The disk's file is sparse: 10 GB long, a few MB on the host.
    const d = (await agent.call<{ size_gb: number; server_id: string; mounted: boolean }>('GET', `/v1/disks/${volumeId}`)).body;
    expect(d).toMatchObject({ size_gb: 10, server_id: servers.b.id, mounted: true });
  }, scaled(300_000));

  it('stops gracefully and by force, starts, reboots soft and hard: the container follows, the disk and the firewall come back', async () => {
    const id = servers.b.id;
    expect(await act('post', `/v1/servers/${id}/stop`)).toMatchObject({ status: 'succeeded', result: { server_id: id, status: 'stopped', forced: false } });
    expect(containerState(id)).toBe('STOPPED');
    expect(await act('post', `/v1/servers/${id}/start`)).toMatchObject({ status: 'succeeded', result: { server_id: id, status: 'running' } });
    expect(containerState(id)).toBe('RUNNING');
    expect(await act('post', `/v1/servers/${id}/stop`, { force: true })).toMatchObject({ status: 'succeeded', result: { status: 'stopped', forced: true } });
    expect(containerState(id)).toBe('STOPPED');
    expect(await act('post', `/v1/servers/${id}/start`)).toMatchObject({ status: 'succeeded' });
    const bootId = ssh(keyFile, servers.b.ipv4, 'cat /proc/sys/kernel/random/boot_id; cat /proc/1/stat | cut -d" " -f22');
    expect(await act('post', `/v1/servers/${id}/reboot`)).toMatchObject({ status: 'succeeded', result: { status: 'running', hard: false } });
    expect(await act('post', `/v1/servers/${id}/reboot`, { hard: true })).toMatchObject({ status: 'succeeded', result: { status: 'running', hard: true } });
    // A new init (its start time differs), the disk mounted again, port 22 open, 2222 still refused.
    expect(ssh(keyFile, servers.b.ipv4, 'cat /proc/sys/kernel/random/boot_id; cat /proc/1/stat | cut -d" " -f22')).not.toBe(bootId);
    expect(ssh(keyFile, servers.b.ipv4, 'cat /srv/disk/hello.txt')).toBe('bytes of web-a\n');
    expect(await tcpProbe(servers.b.ipv4, 2222)).toBe('EHOSTUNREACH');
    expect((await t.http.get(`/v1/servers/${id}`).set(rw)).body).toMatchObject({ status: 'running', ipv4: servers.b.ipv4 });
  }, scaled(300_000));

  it('the console URL leads to a root terminal in the container, with its one-time token and password', async () => {
    const res = await t.http.post(`/v1/servers/${servers.a.id}/console`).set(rw).send({});
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: 'vnc', url: expect.stringMatching(/^wss:\/\/localhost:\d+\/v1\/consoles\/con_\w+\?token=\w{32}$/), password: expect.stringMatching(/^[A-Za-z0-9]{24}$/) });
    const shown = await consoleSession(res.body.url, res.body.password, 'cat /root/from-user-data.txt\n', /written by user_data on web-a/);
    expect(shown).toContain('written by user_data on web-a');
    // The token worked once.
    await expect(consoleSession(res.body.url, res.body.password, 'true\n', /never/, 5000)).rejects.toThrow('console refused: HTTP/1.1 401');
  }, scaled(120_000));

  it('cli verify on this database finds the instances and disks of the host equal to the servers and volumes', async () => {
    const listed = await agent.call<{ instances: { server_id: string; ipv4: string; power: string }[] }>('GET', '/v1/instances');
    expect(listed.body.instances.map((i) => [i.server_id, i.ipv4, i.power]).sort()).toEqual([[servers.a.id, servers.a.ipv4, 'running'], [servers.b.id, servers.b.ipv4, 'running']].sort());
    const r = runCli(['verify'], { DATABASE_URL: t.settings.databaseUrl, COMPUTE_PROVIDER: 'agent', AGENT_URLS: agent.url, AGENT_SECRET: agent.secret });
    const report = JSON.parse(r.stdout) as { ok: boolean; violations: unknown[] };
    expect({ status: r.status, stderr: r.stderr, violations: report.violations, ok: report.ok }).toEqual({ status: 0, stderr: '', violations: [], ok: true });
  }, scaled(120_000));

  it('a SIGKILL of the agent mid-creation ends with one container: the step is retried once the agent is back', async () => {
    const res = await t.http.post('/v1/servers').set(rw).send({ name: 'killed', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD', ssh_key_ids: [sshKeyId] });
    expect(res.status).toBe(202);
    const id = res.body.server.id as string;
    const record = join(agent.stateDir, 'instances', `${id}.json`);
    const running = advance.runUntilIdle();
    await waitFor('the agent to be creating the container', async () => {
      try {
        return (JSON.parse(readFileSync(record, 'utf8')) as { state: string }).state === 'creating';
      } catch {
        return false;
      }
    }, 60_000, 5);
    await agent.kill('SIGKILL');
    await running;
    await agent.restart();
    // Restarted, the agent removed the creation cut short: no container for the server now.
    expect(agent.hostObjects().containers.filter((c) => c.includes(id))).toEqual([]);
    expect(await settle(res.body.operation.id)).toMatchObject({ status: 'succeeded' });
    expect(agent.hostObjects().containers.filter((c) => c.includes(id))).toEqual([`${agent.prefix}-${id}`]);
    expect(containerState(id)).toBe('RUNNING');
    expect(await act('delete', `/v1/servers/${id}`)).toMatchObject({ status: 'succeeded' });
  }, scaled(300_000));

  it('deleting the disk and the servers leaves the host clean: no container, loop device, disk file or interface', async () => {
    expect(await act('delete', `/v1/volumes/${volumeId}?detach=true`)).toMatchObject({ status: 'succeeded' });
    expect(await act('delete', `/v1/servers/${servers.a.id}`)).toMatchObject({ status: 'succeeded', result: { server_id: servers.a.id } });
    expect(await act('delete', `/v1/servers/${servers.b.id}`)).toMatchObject({ status: 'succeeded' });
    expect(agent.hostObjects()).toEqual({ containers: [], loops: [], diskFiles: [], interfaces: [] });
    expect((await agent.call<{ instances: unknown[] }>('GET', '/v1/instances')).body.instances).toEqual([]);
    expect((await agent.call<{ disks: unknown[] }>('GET', '/v1/disks')).body.disks).toEqual([]);
  }, scaled(300_000));
});
