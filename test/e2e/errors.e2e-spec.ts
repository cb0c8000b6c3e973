import { scaled } from '../support/deadlines';
import type { Server } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import { validateRawResponse } from '../support/openapi-validation';
import { TestApp, startTestApp } from '../support/test-app';
import { apiToken, bearer, organization, region } from '../support/fixtures';

const REQUEST_ID = /^req_[A-Za-z0-9]{24}$/;

/** Sends raw bytes on a new connection and returns the whole answer once the server closes it. */
async function rawExchange(t: TestApp, request: string): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  const server = t.app.getHttpServer() as Server;
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    const deadlineMs = scaled(10_000);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer in ${deadlineMs} ms; received ${JSON.stringify(data)}`));
    }, deadlineMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.on('error', () => undefined);
    socket.write(request);
  });
  const [head, body] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const [method, target] = request.split(' ');
  const status = Number(statusLine.split(' ')[1]);
  validateRawResponse(t.document, { method, path: target.split('?')[0], status, headers, text: body ?? '' });
  return { status, headers, body: body ? JSON.parse(body) : undefined };
}

describe('error envelope, request ids, 404/405/413/400/500', () => {
  let t: TestApp;
  const token = apiToken('err', 'rw');

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ regions: [region()], organizations: [organization('err')] });
  });
  afterAll(async () => t?.close());

  it('answers an unknown path with 404 not_found in the envelope, with a generated X-Request-Id', async () => {
    const res = await t.http.get('/v1/nothing-here').set(bearer(token));
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
    expect(res.body).toEqual({
      error: { code: 'not_found', message: 'No route GET /v1/nothing-here', request_id: res.headers['x-request-id'], details: {} },
    });
  });

  it('keeps a valid incoming X-Request-Id and replaces an invalid one', async () => {
    const kept = await t.http.get('/v1/nothing-here').set('X-Request-Id', 'client-abc.123_X');
    expect(kept.headers['x-request-id']).toBe('client-abc.123_X');
    expect(kept.body.error.request_id).toBe('client-abc.123_X');

    const replaced = await t.http.get('/v1/nothing-here').set('X-Request-Id', 'bad id with spaces');
    expect(replaced.headers['x-request-id']).toMatch(REQUEST_ID);
    expect(replaced.body.error.request_id).toBe(replaced.headers['x-request-id']);

    const tooLong = await t.http.get('/v1/nothing-here').set('X-Request-Id', 'a'.repeat(129));
    expect(tooLong.headers['x-request-id']).toMatch(REQUEST_ID);
  });

  it('answers a known path with the wrong method with 405 and an Allow header', async () => {
    const res = await t.http.delete('/v1/wallet').set(bearer(token));
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.body).toEqual({
      error: {
        code: 'method_not_allowed',
        message: 'Method DELETE is not allowed on /v1/wallet; allowed: GET, HEAD',
        request_id: res.headers['x-request-id'],
        details: {},
      },
    });

    const post = await t.http.get('/v1/auth/login');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('POST');
    expect(post.headers['x-request-id']).toMatch(REQUEST_ID);
    expect(post.body).toEqual({
      error: { code: 'method_not_allowed', message: 'Method GET is not allowed on /v1/auth/login; allowed: POST', request_id: post.headers['x-request-id'], details: {} },
    });
  });

  it('answers a request line and headers over 16 KiB with 431 and the envelope, not a bare status line', async () => {
    const res = await rawExchange(t, `GET /v1/volumes/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers.connection).toBe('close');
    expect(res.body).toEqual({
      error: {
        code: 'invalid_request',
        message: 'Request line and headers are too large (at most 16 KiB together)',
        request_id: res.headers['x-request-id'],
        details: {},
      },
    });
  });

  it('closes the connection after such an answer even when the client keeps its side open', async () => {
    await rawExchange(t, 'GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'); // listening now
    const server = t.app.getHttpServer() as Server;
    const connections = (): Promise<number> => new Promise((resolve) => server.getConnections((_err, n) => resolve(n)));
    const { port } = server.address() as AddressInfo;
    // A client that does not end its side when the server ends its own.
    const client = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    try {
      let answer = '';
      client.setEncoding('utf8');
      client.on('data', (chunk: string) => (answer += chunk));
      client.on('error', () => undefined);
      const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
      client.write(`GET /v1/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await ended;
      expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
      for (let i = 0; i < 40 && (await connections()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await connections()).toBe(0);
    } finally {
      client.destroy();
    }
  });

  it('answers a header value with a control character with 400 and the envelope', async () => {
    const res = await rawExchange(t, `GET /v1/wallet HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Org-ID: org_\x01err\r\n\r\n`);
    expect(res.status).toBe(400);
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
    expect(res.body).toEqual({
      error: {
        code: 'invalid_request',
        message: 'Malformed HTTP request (request line, header names or values, or framing)',
        request_id: res.headers['x-request-id'],
        details: {},
      },
    });
  });

  it('answers malformed JSON with 400 invalid_request naming the body', async () => {
    const res = await t.http.post('/v1/auth/login').set('Content-Type', 'application/json').send('{"email": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { code: 'invalid_request', message: 'Request body is not valid JSON', request_id: res.headers['x-request-id'], details: { field: 'body' } },
    });
  });

  it('answers a body over its limit with 413 invalid_request: 16 KiB on login, 64 KiB elsewhere', async () => {
    const big = JSON.stringify({ email: 'a@b.test', password: 'x'.repeat(16 * 1024) });
    const res = await t.http.post('/v1/auth/login').set('Content-Type', 'application/json').send(big);
    expect(res.status).toBe(413);
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
    expect(res.body).toEqual({
      error: { code: 'invalid_request', message: 'Request body is larger than 16 KiB', request_id: res.headers['x-request-id'], details: {} },
    });
    // Refused after the rate limit, like every body error: counted, with the headers.
    expect(res.headers['x-ratelimit-limit']).toBe('600');
    expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(res.headers['x-ratelimit-reset']).toMatch(/^\d{10}$/);
    expect(await t.sql('SELECT id FROM sessions')).toEqual([]);

    // On an authenticated route too, with the credential's headers: 64 KiB there.
    const authed = await t.http.get('/v1/wallet').set(bearer(token)).set('Content-Type', 'application/json').send(JSON.stringify({ x: 'x'.repeat(64 * 1024) }));
    expect(authed.status).toBe(413);
    expect(authed.body).toEqual({
      error: { code: 'invalid_request', message: 'Request body is larger than 64 KiB', request_id: authed.headers['x-request-id'], details: {} },
    });
    expect(authed.headers['x-ratelimit-limit']).toBe('600');
    // Just under 64 KiB is read (and ignored by a GET).
    const under = await t.http.get('/v1/wallet').set(bearer(token)).set('Content-Type', 'application/json').send(JSON.stringify({ x: 'x'.repeat(60 * 1024) }));
    expect(under.status).toBe(200);
  });

  it('answers a validation failure with 400 naming the field, and writes nothing', async () => {
    const res = await t.http.post('/v1/auth/signup').send({ email: 'new@user.test', password: 'short', organization_name: 'X' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { code: 'invalid_request', message: 'password must be 8 to 200 characters', request_id: res.headers['x-request-id'], details: { field: 'password' } },
    });
    expect(await t.sql("SELECT id FROM users WHERE email = 'new@user.test'")).toEqual([]);

    const wrongType = await t.http.post('/v1/auth/signup').send({ email: 'new@user.test', password: 12345678, organization_name: 'X' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.details).toEqual({ field: 'password' });

    const notObject = await t.http.post('/v1/auth/signup').set('Content-Type', 'application/json').send('[1,2]');
    expect(notObject.status).toBe(400);
    expect(notObject.body.error).toEqual({ code: 'invalid_request', message: 'Request body must be a JSON object', request_id: notObject.headers['x-request-id'], details: { field: 'body' } });

    for (const contentType of [undefined, 'text/plain']) {
      const req = t.http.post('/v1/auth/signup');
      if (contentType) req.set('Content-Type', contentType);
      const unlabelled = await req.send(Buffer.from(JSON.stringify({ email: 'new@user.test', password: 'a long password', organization_name: 'X' })));
      expect(unlabelled.status).toBe(400);
      expect(unlabelled.body.error).toEqual({
        code: 'invalid_request',
        message: 'Request body must be a JSON object sent with the header Content-Type: application/json',
        request_id: unlabelled.headers['x-request-id'],
        details: { field: 'body' },
      });
    }
    expect(await t.sql("SELECT id FROM users WHERE email = 'new@user.test'")).toEqual([]);
  });

  it('reports body errors only after authentication (check order: 401 before 400)', async () => {
    const res = await t.http.get('/v1/wallet').set('Content-Type', 'application/json').send('{not json');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: {
        code: 'unauthorized',
        message: 'Missing Authorization header; send "Authorization: Bearer <token>"',
        request_id: res.headers['x-request-id'],
        details: {},
      },
    });
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('answers an unexpected failure with 500 internal and no stack, SQL or class names', async () => {
    await t.sql('ALTER TABLE wallet_balances RENAME TO wallet_balances_gone');
    try {
      const res = await t.http.get('/v1/wallet').set(bearer(token));
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        error: {
          code: 'internal',
          message: 'Internal server error; retry, and quote the request_id to support if it persists',
          request_id: res.headers['x-request-id'],
          details: {},
        },
      });
      expect(res.text).not.toMatch(/wallet_balances|SELECT|QueryFailedError|at \w+ \(/);
    } finally {
      await t.sql('ALTER TABLE wallet_balances_gone RENAME TO wallet_balances');
    }
    const ok = await t.http.get('/v1/wallet').set(bearer(token));
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      balances: [
        { currency: 'USD', available: '100.00000', reserved: '0.00000' },
        { currency: 'IDR', available: '1500000', reserved: '0' },
      ],
    });
  });
});
