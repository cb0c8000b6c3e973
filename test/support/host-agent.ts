import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import { AgentHealth, signAgentRequest } from '../../src/shared/agent-protocol/agent-protocol';
import { ROOT, ensureBuilt } from './processes';
import { waitFor } from './renewals';

/** Why the host agent's e2e cannot run here (not root, no LXC after trying to install it), or undefined when it can. */
export function hostAgentUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (it drives LXC, loop devices and network namespaces)';
  const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
  const tools = ['lxc-start', 'debootstrap', 'nft'];
  if (!tools.every(has)) {
    // Debian's packages, as .ci/run installs them; a machine without them gets them once.
    spawnSync('sh', ['-c', 'apt-get install -y -qq --no-install-recommends lxc debootstrap nftables openssh-client >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq --no-install-recommends lxc debootstrap nftables openssh-client >/dev/null 2>&1)'], {
      timeout: 600_000,
    });
    if (!tools.every(has)) return 'needs lxc, debootstrap and nftables (apt-get install lxc debootstrap nftables failed)';
  }
  return undefined;
}

/** A cds-agent process of the test's own: its own state directory, bridge, test subnet and name prefix; the image cache shared (built once per machine). */
export interface AgentProcess {
  url: string;
  secret: string;
  stateDir: string;
  bridge: string;
  prefix: string;
  subnet: string;
  child: ChildProcess;
  output(): string;
  /** A signed call to the agent. */
  call<T>(method: string, path: string, body?: object): Promise<{ status: number; body: T }>;
  kill(signal?: NodeJS.Signals): Promise<void>;
  restart(): Promise<void>;
  /** Everything the agent made on the host, as the host shows it. */
  hostObjects(): { containers: string[]; loops: string[]; diskFiles: string[]; interfaces: string[] };
  /** Removes whatever is left (containers, loop devices, interfaces, bridge, state directory). */
  cleanUp(): void;
}

export async function startAgent(port: number): Promise<AgentProcess> {
  ensureBuilt();
  const n = process.pid % 200;
  const secret = randomBytes(24).toString('base64url');
  const stateDir = mkdtempSync('/tmp/cds-agent-e2e-');
  const bridge = `cdst${n}`;
  const prefix = 'cdst';
  const subnet = `198.18.${20 + n}.0/24`;
  let child: ChildProcess;
  let out = '';
  const launch = async () => {
    out = '';
    child = spawn(process.execPath, ['dist/agent/src/main.js'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH, AGENT_SECRET: secret, AGENT_PORT: String(port), AGENT_HOST: '127.0.0.1', AGENT_CONSOLE_PORT: '0', AGENT_STATE_DIR: stateDir,
        AGENT_BRIDGE: bridge, AGENT_SUBNET: subnet, AGENT_PREFIX: prefix, AGENT_VCPUS: '16', AGENT_MEMORY_GB: '32',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    await waitFor('the agent to listen', async () => out.includes('cds-agent listening') || child.exitCode !== null, 60_000, 50);
    if (!out.includes('cds-agent listening')) throw new Error(`the agent did not start:\n${out}`);
  };
  await launch();
  const url = `http://127.0.0.1:${port}`;
  const lxcPath = join(stateDir, 'lxc');
  const agent: AgentProcess = {
    url, secret, stateDir, bridge, prefix, subnet,
    get child() {
      return child;
    },
    output: () => out,
    async call<T>(method: string, path: string, body?: object) {
      const text = body ? JSON.stringify(body) : '';
      const res = await fetch(`${url}${path}`, { method, headers: { ...signAgentRequest(secret, method, path, text), ...(text ? { 'content-type': 'application/json' } : {}) }, body: text || undefined });
      const raw = await res.text();
      return { status: res.status, body: (raw ? JSON.parse(raw) : undefined) as T };
    },
    async kill(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await exited;
    },
    restart: launch,
    hostObjects() {
      const containers = existsSync(lxcPath) ? readdirSync(lxcPath) : [];
      const disks = join(stateDir, 'disks');
      const diskFiles = existsSync(disks) ? readdirSync(disks) : [];
      const loops = execFileSync('losetup', ['-a'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(stateDir));
      const interfaces = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
        .split('\n')
        .map((l) => l.split(':')[1]?.trim().split('@')[0] ?? '')
        .filter((name) => name.startsWith(`${prefix}v`));
      return { containers, loops, diskFiles, interfaces };
    },
    cleanUp() {
      if (existsSync(lxcPath)) {
        for (const c of readdirSync(lxcPath)) spawnSync('lxc-stop', ['-P', lxcPath, '-n', c, '-k'], { timeout: 60_000 });
      }
      for (const line of agent.hostObjects().loops) spawnSync('losetup', ['-d', line.split(':')[0]]);
      spawnSync('ip', ['link', 'del', bridge]);
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
  return agent;
}

/** Waits until the agent has the image built (the first run on a machine builds it: a few minutes; later runs find it cached). */
export async function imageReady(agent: AgentProcess, image: string, timeoutMs: number): Promise<void> {
  await waitFor(`image ${image} built on the agent`, async () => {
    const h = await agent.call<AgentHealth>('GET', '/v1/health');
    const s = h.body.images.find((i) => i.id === image);
    if (s?.status === 'unavailable') throw new Error(`the agent cannot build ${image}: ${s.reason}\n${agent.output()}`);
    return s?.status === 'ready';
  }, timeoutMs, 1000);
}

/** Runs a command on a server over SSH from this host, as root with the key; its output, or throws with the reason. */
export function ssh(keyFile: string, ipv4: string, command: string): string {
  const r = spawnSync(
    'ssh',
    ['-i', keyFile, '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=5', `root@${ipv4}`, command],
    { encoding: 'utf8', timeout: 60_000 },
  );
  if (r.status !== 0) throw new Error(`ssh ${ipv4} ${command}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** What a TCP connection from this host to the address and port meets: connected, or the error code (EHOSTUNREACH: the firewall's reject). */
export function tcpProbe(ipv4: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, ipv4);
    s.setTimeout(5000, () => {
      s.destroy();
      resolve('timeout');
    });
    s.on('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/**
 * A console session as a client would hold it: the WebSocket of the console's wss:// URL (the
 * agent's self-signed certificate accepted), the password as the first message, then `input`
 * typed; resolves with what the terminal showed once `until` appears (or the deadline passes).
 */
export function consoleSession(url: string, password: string, input: string, until: RegExp, timeoutMs = 30_000): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    let shown = '';
    let buffered = Buffer.alloc(0);
    let upgraded = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`console showed no ${until} in ${timeoutMs} ms:\n${shown}`));
    }, timeoutMs);
    const frame = (text: string) => {
      const payload = Buffer.from(text);
      const mask = randomBytes(4);
      const head = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
      return Buffer.concat([head, mask, Buffer.from(payload.map((b, i) => b ^ mask[i % 4]))]);
    };
    const socket = tls.connect({ host: u.hostname === 'localhost' ? '127.0.0.1' : u.hostname, port: Number(u.port), servername: u.hostname, rejectUnauthorized: false }, () => {
      const key = randomBytes(16).toString('base64');
      socket.write(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!upgraded) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString();
        if (!head.startsWith('HTTP/1.1 101')) {
          clearTimeout(timer);
          socket.destroy();
          reject(new Error(`console refused: ${head.split('\r\n')[0]}`));
          return;
        }
        upgraded = true;
        buffered = buffered.subarray(end + 4);
        socket.write(frame(password));
        setTimeout(() => socket.write(frame(input)), 1500);
      }
      while (buffered.length >= 2) {
        let len = buffered[1] & 0x7f;
        let offset = 2;
        if (len === 126) {
          if (buffered.length < 4) return;
          len = buffered.readUInt16BE(2);
          offset = 4;
        } else if (len === 127) {
          if (buffered.length < 10) return;
          len = Number(buffered.readBigUInt64BE(2));
          offset = 10;
        }
        if (buffered.length < offset + len) return;
        shown += buffered.subarray(offset, offset + len).toString();
        buffered = buffered.subarray(offset + len);
      }
      if (until.test(shown)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(shown);
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
