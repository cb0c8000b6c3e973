import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AgentConfig, loadAgentConfig } from './config';
import { apiServer, consoleServer } from './http-server';
import { HostAgent } from './host-agent';
import { Images } from './images';
import { run } from './run';

/** One JSON line per event on standard output (never a secret, a token or user_data). */
const log = (msg: string, extra: object = {}): void => {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), service: 'cds-agent', msg, ...extra })}\n`);
};

function aptSources(): string {
  const files = ['/etc/apt/sources.list'];
  try {
    for (const f of readdirSync('/etc/apt/sources.list.d')) if (/\.(list|sources)$/.test(f)) files.push(join('/etc/apt/sources.list.d', f));
  } catch {
    // no directory
  }
  return files.map((f) => (existsSync(f) ? readFileSync(f, 'utf8') : '')).join('\n');
}

/** The console's certificate: AGENT_TLS_CERT and AGENT_TLS_KEY, else a self-signed one made once in the state directory. */
async function tlsFiles(config: AgentConfig): Promise<{ cert: string; key: string }> {
  if (config.tlsCert && config.tlsKey) return { cert: readFileSync(config.tlsCert, 'utf8'), key: readFileSync(config.tlsKey, 'utf8') };
  const dir = join(config.stateDir, 'tls');
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  if (!existsSync(cert) || !existsSync(key)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '3650', '-subj', `/CN=${config.consolePublicHost}`,
      '-addext', `subjectAltName=DNS:${config.consolePublicHost},DNS:localhost,IP:127.0.0.1`, '-keyout', key, '-out', cert,
    ]);
  }
  return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
}

/** Whether the host has what the agent drives (Debian's lxc, debootstrap, nftables, util-linux, iproute2, OpenSSH's ssh-keygen). */
async function checkTools(): Promise<void> {
  const missing: string[] = [];
  for (const tool of ['lxc-start', 'debootstrap', 'nft', 'losetup', 'mkfs.ext4', 'ip', 'nsenter', 'ssh-keygen', 'script', 'openssl']) {
    try {
      await run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      missing.push(tool);
    }
  }
  if (missing.length) throw new Error(`cds-agent needs ${missing.join(', ')}: apt-get install lxc debootstrap nftables openssh-client (as root)`);
  if (process.getuid && process.getuid() !== 0) throw new Error('cds-agent runs as root (it drives LXC, loop devices and network namespaces)');
}

async function main(): Promise<void> {
  const config = loadAgentConfig(process.env, aptSources());
  await checkTools();
  const images = new Images(config, log);
  const agent = new HostAgent(config, images, log);
  await agent.recover();
  const api = apiServer(agent, config.secret, log);
  const consoles = consoleServer(agent, await tlsFiles(config), log);
  await new Promise<void>((resolve) => api.listen(config.port, config.host, resolve));
  await new Promise<void>((resolve) => consoles.listen(config.consolePort, config.host, resolve));
  const port = (s: typeof api) => (s.address() as { port: number }).port;
  // AGENT_CONSOLE_PORT=0 (tests): the console URLs name the port the system chose.
  config.consolePort = port(consoles);
  log('cds-agent listening', { url: `http://${config.host}:${port(api)}`, console_port: port(consoles), bridge: config.bridge, state_dir: config.stateDir });
  if (config.buildOnStart) void images.build('debian-12');
  const stop = (signal: string) => {
    log('stopping', { signal });
    api.close();
    consoles.close();
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  log('cds-agent failed to start', { reason: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
