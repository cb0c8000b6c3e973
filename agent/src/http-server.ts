import { spawn } from 'node:child_process';
import { createHash, timingSafeEqual } from 'node:crypto';
import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { Duplex } from 'node:stream';
import { AGENT_ID, NonceCache, verifyAgentRequest } from '../../src/shared/agent-protocol/agent-protocol';
import { AgentError, invalidRequest, notFound } from './errors';
import { DiskAction, HostAgent, PowerAction } from './host-agent';
import { parseRules } from './firewall';
import { WebSocketConnection, acceptKey } from './websocket';

const POWER: readonly PowerAction[] = ['await_boot', 'power_on', 'shutdown', 'power_off', 'reboot', 'reset'];
const DISK: readonly DiskAction[] = ['attach', 'mount', 'unmount', 'detach'];
const MAX_BODY = 256 * 1024;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(invalidRequest('the body is larger than 256 KiB'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const send = (res: ServerResponse, status: number, body?: unknown): void => {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
};

function page(url: URL): { after: string; limit: number } {
  const limit = url.searchParams.get('limit');
  if (limit !== null && !/^\d{1,4}$/.test(limit)) throw invalidRequest('limit must be a whole number up to 9999');
  return { after: url.searchParams.get('after') ?? '', limit: limit === null ? 1_000_000 : Number(limit) };
}

/**
 * The agent's HTTP API (docs/explanation/host-agent.md "Protocol"): every request signed with the
 * shared secret (401 otherwise), JSON in and out, refusals as {error: {code, message}}.
 */
export function apiServer(agent: HostAgent, secret: string, log: (msg: string, extra?: object) => void): Server {
  const nonces = new NonceCache();
  return createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://agent');
      const body = await readBody(req);
      const why = verifyAgentRequest(secret, { method: req.method ?? 'GET', pathWithQuery: req.url ?? '/', body, headers: req.headers }, nonces);
      if (why) {
        log('request refused', { path: url.pathname, reason: why });
        return send(res, 401, { error: { code: 'unauthorized', message: why } });
      }
      let json: Record<string, unknown> = {};
      if (body.length) {
        try {
          json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
        } catch {
          throw invalidRequest('the body is not JSON');
        }
      }
      const parts = url.pathname.split('/').filter(Boolean);
      if (parts[0] !== 'v1') throw notFound(`no route ${req.method} ${url.pathname}`);
      const [, kind, id, sub, action] = parts;
      if (id !== undefined && !AGENT_ID.test(id)) throw invalidRequest('the id in the path is malformed');
      const m = req.method;
      if (kind === 'health' && m === 'GET' && !id) return send(res, 200, agent.health());
      if (kind === 'instances') {
        if (!id && m === 'GET') return send(res, 200, { instances: await agent.listInstances(page(url).after, page(url).limit) });
        if (id && !sub && m === 'GET') {
          const i = await agent.getInstance(id);
          return i ? send(res, 200, i) : send(res, 404, { error: { code: 'not_found', message: `no instance for server ${id}` } });
        }
        if (id && !sub && m === 'PUT') return send(res, 200, await agent.createInstance(id, json));
        if (id && !sub && m === 'DELETE') {
          await agent.deleteInstance(id, url.searchParams.get('step') ?? '');
          return send(res, 204);
        }
        if (id && sub === 'actions' && m === 'POST' && (POWER as readonly string[]).includes(action ?? '')) {
          return send(res, 200, await agent.powerAction(id, action as PowerAction, String(json.step ?? '')));
        }
        if (id && sub === 'firewall' && m === 'PUT' && !action) return send(res, 200, await agent.setFirewall(id, parseRules(json)));
        if (id && sub === 'consoles' && m === 'POST' && !action) {
          const expires = new Date(String(json.expires_at));
          if (Number.isNaN(expires.getTime())) throw invalidRequest('expires_at must be a timestamp');
          return send(res, 201, await agent.createConsole(id, typeof json.step === 'string' ? json.step : undefined, expires));
        }
      }
      if (kind === 'disks') {
        if (!id && m === 'GET') return send(res, 200, { disks: await agent.listDisks(page(url).after, page(url).limit) });
        if (id && !sub && m === 'GET') {
          const d = await agent.getDisk(id);
          return d ? send(res, 200, d) : send(res, 404, { error: { code: 'not_found', message: `no disk for volume ${id}` } });
        }
        if (id && !sub && m === 'PUT') return send(res, 200, await agent.createDisk(id, json));
        if (id && !sub && m === 'DELETE') {
          await agent.deleteDisk(id, url.searchParams.get('step') ?? '');
          return send(res, 204);
        }
        if (id && sub === 'actions' && m === 'POST' && (DISK as readonly string[]).includes(action ?? '')) {
          return send(res, 200, await agent.diskAction(id, action as DiskAction, json));
        }
      }
      throw notFound(`no route ${req.method} ${url.pathname}`);
    })().catch((err: unknown) => {
      if (err instanceof AgentError) return send(res, err.status, { error: { code: err.code, message: err.message } });
      log('request failed', { path: req.url, reason: err instanceof Error ? err.message : String(err) });
      send(res, 503, { error: { code: 'unavailable', message: `the host could not do it now: ${err instanceof Error ? err.message.slice(0, 300) : String(err)}` } });
    });
  });
}

/**
 * The console (TLS): GET /v1/consoles/{id}?token=… upgraded to a WebSocket; the token works once
 * and until the credential expires; the first message must be the password; then the socket is
 * the terminal of a root login in the container (a pseudo-terminal: binary messages both ways).
 */
export function consoleServer(agent: HostAgent, tls: { cert: string; key: string }, log: (msg: string, extra?: object) => void): Server {
  const server = createTlsServer({ cert: tls.cert, key: tls.key }, (_req, res) => send(res, 426, { error: { code: 'invalid_request', message: 'a console is a WebSocket' } }));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    const url = new URL(req.url ?? '/', 'https://agent');
    const m = /^\/v1\/consoles\/([A-Za-z0-9_]{1,64})$/.exec(url.pathname);
    const key = req.headers['sec-websocket-key'];
    const refuse = (status: number, message: string) => {
      socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Bad Request'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      log('console refused', { reason: message });
    };
    if (!m || typeof key !== 'string' || (req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return refuse(400, 'not a console WebSocket request');
    const taken = agent.takeConsole(m[1], url.searchParams.get('token') ?? '');
    if (typeof taken === 'string') return refuse(401, taken);
    socket.write(['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Accept: ${acceptKey(key)}`, '', ''].join('\r\n'));
    let shell: ReturnType<typeof spawn> | undefined;
    const ws = new WebSocketConnection(
      socket,
      (data) => {
        if (shell) {
          shell.stdin!.write(data);
          return;
        }
        const given = createHash('sha256').update(data.toString('utf8')).digest();
        const expected = Buffer.from(taken.passwordHash, 'hex');
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) return ws.close(4001, 'wrong password');
        let command: string[];
        try {
          command = agent.consoleCommand(taken.serverId);
        } catch {
          return ws.close(4004, 'the server has no running instance');
        }
        // script(1) gives the login a pseudo-terminal; the command's words are ids and paths the agent made.
        shell = spawn('script', ['-qfec', command.join(' '), '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { TERM: 'xterm', PATH: process.env.PATH } });
        shell.stdout!.on('data', (b: Buffer) => ws.send(b));
        shell.stderr!.on('data', (b: Buffer) => ws.send(b));
        shell.on('exit', () => ws.close(1000, 'console closed'));
        log('console opened', { server_id: taken.serverId });
      },
      () => shell?.kill('SIGHUP'),
    );
  });
  return server;
}
