import { Socket, connect } from 'node:net';
import { scaled } from '../support/deadlines';
import { join } from 'node:path';
import { TestDatabase, createTestDatabase } from '../support/database';
import { ServerProcess, startServerProcess, tempDir } from '../support/processes';

/** A raw HTTP/1.1 connection, so the test decides when each part of the request is sent. */
class RawConnection {
  readonly socket: Socket;
  private data = '';
  private closed = false;
  private readonly waiters: (() => void)[] = [];

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => {
      this.data += chunk;
      this.wake();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    this.socket.on('error', () => undefined);
  }

  received(): string {
    return this.data;
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** Resolves once the condition holds (checked on every event), or fails after timeoutMs. */
  async until(what: string, condition: (data: string, closed: boolean) => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition(this.data, this.closed)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received so far: ${JSON.stringify(this.data)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    this.waiters.splice(0).forEach((w) => w());
  }
}

/** Resolves true when a new TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  timeoutMs = scaled(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const SIGNUP = JSON.stringify({ email: 'late@shutdown.test', password: 'a long password', organization_name: 'Late Org' });

function signupHeaders(): string {
  return (
    'POST /v1/auth/signup HTTP/1.1\r\n' +
    'Host: 127.0.0.1\r\n' +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(SIGNUP)}\r\n` +
    'X-Request-Id: slow-signup-1\r\n' +
    // The server answers "100 Continue" once it has parsed the headers: then the request is in flight.
    'Expect: 100-continue\r\n' +
    '\r\n'
  );
}

describe('graceful shutdown of a server process', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  let server: ServerProcess | undefined;

  beforeEach(async () => {
    db = await createTestDatabase();
    dir = tempDir('cds-shutdown-');
  });
  afterEach(async () => {
    if (server) await server.stop('SIGKILL');
    server = undefined;
    await db?.drop();
    dir?.remove();
  });

  const start = async (extra: Record<string, string> = {}): Promise<{ s: ServerProcess; port: number }> => {
    const env = db.url ? { DATABASE_URL: db.url } : { DATA_DIR: join(dir.path, 'data') };
    server = await startServerProcess({ ...env, DEMO_SEED: 'false', LOG_LEVEL: 'info', ...extra });
    return { s: server, port: Number(new URL(server.url).port) };
  };

  it('on SIGTERM stops accepting connections, finishes the request in flight, and exits 0', async () => {
    const { s, port } = await start();
    const conn = new RawConnection(port);
    conn.write(signupHeaders());
    await conn.until('100 Continue', (d) => d.startsWith('HTTP/1.1 100 Continue\r\n\r\n'));
    conn.write(SIGNUP.slice(0, 20));

    const exited = s.stop('SIGTERM');
    await waitFor('the shutdown log line', () => s.output().includes('shutdown started'));
    await waitFor('new connections to be refused', () => refused(port));

    // The rest of the body arrives after the signal: the request is still answered in full.
    conn.write(SIGNUP.slice(20));
    await conn.until('the end of the response', (_d, closed) => closed);
    const [head, body] = conn.received().replace('HTTP/1.1 100 Continue\r\n\r\n', '').split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 201 Created');
    expect(head).toMatch(/\r\nX-Request-Id: slow-signup-1\r\n/);
    expect(JSON.parse(body)).toEqual({
      token: expect.stringMatching(/^cds_sess_/),
      expires_at: expect.any(String),
      user: { id: expect.stringMatching(/^usr_/), email: 'late@shutdown.test', created_at: expect.any(String) },
      organization: { id: expect.stringMatching(/^org_/), name: 'Late Org', role: 'owner', created_at: expect.any(String) },
    });

    expect(await exited).toBe(0);
    const lines = s
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ context: 'Shutdown', signal: 'SIGTERM', open_connections: 1 }),
        expect.objectContaining({ client_request_id: 'slow-signup-1', route: '/v1/auth/signup', status: 201, msg: 'request completed' }),
        expect.objectContaining({ context: 'Shutdown', msg: 'shutdown complete' }),
      ]),
    );
    const order = (pred: (l: Record<string, unknown>) => boolean): number => lines.findIndex(pred);
    expect(order((l) => l.signal === 'SIGTERM')).toBeLessThan(order((l) => l.client_request_id === 'slow-signup-1'));
    expect(order((l) => l.client_request_id === 'slow-signup-1')).toBeLessThan(order((l) => l.msg === 'shutdown complete'));
  });

  it('closes a request still incomplete after SHUTDOWN_TIMEOUT_MS, and still exits 0', async () => {
    const { s, port } = await start({ SHUTDOWN_TIMEOUT_MS: '300' });
    const conn = new RawConnection(port);
    conn.write(signupHeaders());
    await conn.until('100 Continue', (d) => d.startsWith('HTTP/1.1 100 Continue\r\n\r\n'));
    conn.write(SIGNUP.slice(0, 20));

    expect(await s.stop('SIGTERM')).toBe(0);
    await conn.until('the connection to close', (_d, closed) => closed);
    expect(conn.received()).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    expect(s.output()).toContain('"msg":"requests still in flight after the drain timeout; their connections were closed"');
    expect(s.output()).toContain('"msg":"shutdown complete"');
  });

  it('on SIGINT with nothing in flight exits 0 and closes the metrics port too', async () => {
    const { s, port } = await start();
    const metricsPort = Number(/Metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(s.output())?.[1]);
    expect(metricsPort).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);
    expect(await s.stop('SIGINT')).toBe(0);
    expect(await refused(port)).toBe(true);
    expect(await refused(metricsPort)).toBe(true);
    expect(s.output()).toContain('"signal":"SIGINT"');
  });
});
