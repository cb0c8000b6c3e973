import SwaggerParser from '@apidevtools/swagger-parser';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { STATUS_OF } from '../../src/shared/http/error-envelope';
import { servedRoutes } from '../../src/shared/http/route-methods';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

interface Operation {
  operationId: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: unknown }[];
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string }; examples?: Record<string, { value: { error: { code: string } } }> }> }>;
}
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> } };

const ROOT = join(__dirname, '..', '..');

/** Every Markdown page under docs/, relative to the repository. */
function docPages(dir = join(ROOT, 'docs')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? docPages(path) : name.endsWith('.md') ? [relative(ROOT, path)] : [];
  });
}

/**
 * Routes of other APIs the docs describe, never this document's: the host agent's own API
 * (docs/explanation/host-agent.md) and Stripe's (the Stripe adapter's calls).
 */
const FOREIGN_ROUTES = [/^\/v1\/instances(\/|$)/, /^\/v1\/disks(\/|$)/, /^\/v1\/checkout\/sessions(\/|$)/, /^\/v1\/refunds(\/|$)/];

/**
 * The routes a page names ("GET /v1/volumes/{id}", "POST /v1/deployments/{id}/update", "GET
 * /v1/wallet/top-ups[/{id}]"), each as [method, path segments]: the query and trailing
 * punctuation dropped, an optional `[/…]` tail giving both forms.
 */
function routesNamed(text: string): { method: string; path: string }[] {
  const found: { method: string; path: string }[] = [];
  for (const m of text.matchAll(/\b(GET|POST|PUT|PATCH|DELETE|HEAD) `?(\/v1\/[A-Za-z0-9_{}/.…\-[\]]*)/g)) {
    const raw = m[2].replace(/[.,:;]+$/, '').replace(/\/$/, '');
    const variants = raw.includes('[') ? [raw.replace(/\[[^\]]*\]/g, ''), raw.replace(/[[\]]/g, '')] : [raw];
    for (const path of variants) found.push({ method: m[1], path: path.replace(/\/$/, '') });
  }
  return found;
}

/** Whether a path a page names is the document's path (a `{param}` of the document matches any segment). */
const samePath = (named: string, documented: string): boolean => {
  const a = named.split('/');
  const b = documented.split('/');
  return a.length === b.length && b.every((seg, i) => (seg.startsWith('{') ? a[i] !== '' : seg === a[i]));
};

/** Express's `/v1/volumes/:id` is OpenAPI's `/v1/volumes/{id}`. */
const toOpenApiPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('OpenAPI document and docs page', () => {
  let t: TestApp;
  let doc: Doc;
  let routes: { path: string; methods: string[] }[];

  beforeAll(async () => {
    t = await startTestApp();
    const res = await t.http.get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.body as Doc;
    routes = servedRoutes(t.app.getHttpAdapter().getInstance() as Express);
  });
  afterAll(async () => t?.close());

  const operations = (): { path: string; method: string; op: Operation }[] =>
    Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));

  describe('docs/ against the document', () => {
    const pages = docPages();
    const text = (page: string) => readFileSync(join(ROOT, page), 'utf8');
    const schema = (name: string) => doc.components.schemas[name] as { properties: Record<string, { enum?: string[]; items?: { enum?: string[] } }> };
    const documentedRoutes = () => operations().map((o) => ({ method: o.method.toUpperCase(), path: o.path }));

    it('every route a page names is in the document (other APIs aside: the host agent, Stripe)', () => {
      expect(pages.length).toBeGreaterThan(30);
      const unknown = pages.flatMap((page) =>
        routesNamed(text(page))
          .filter((r) => !FOREIGN_ROUTES.some((f) => f.test(r.path)))
          .filter((r) => !documentedRoutes().some((d) => d.method === r.method && samePath(r.path, d.path)))
          .map((r) => `${page}: ${r.method} ${r.path}`),
      );
      expect(unknown).toEqual([]);
    });

    it('every route of the document (HEAD aside) is named by a reference page', () => {
      const named = pages.filter((p) => p.startsWith('docs/reference/')).flatMap((p) => routesNamed(text(p)));
      const unnamed = documentedRoutes()
        .filter((d) => d.method !== 'HEAD')
        .filter((d) => !named.some((r) => r.method === d.method && samePath(r.path, d.path) && r.path.split('/').every((seg, i) => seg.startsWith('{') === d.path.split('/')[i].startsWith('{'))))
        .map((d) => `${d.method} ${d.path}`);
      expect(unnamed).toEqual([]);
    });

    it('every operation type, event type, scope and error code a page names is one the document lists', () => {
      const opTypes = Object.values(doc.components.schemas).flatMap((s) => {
        const type = (s as { properties?: { type?: { enum?: string[] } } }).properties?.type?.enum;
        return type?.length === 1 && /^(vm|volume|template)\./.test(type[0]) ? type : [];
      });
      expect(opTypes.length).toBeGreaterThanOrEqual(15);
      const eventTypes = schema('WebhookDelivery').properties.event_type?.enum ?? schema('WebhookDelivery').properties.type?.enum ?? [];
      expect(eventTypes).toContain('wallet.credited');
      // Audit actions have no enum in the document: the ones the code writes.
      const auditActions = new Set<string>();
      const walk = (dir: string): void => {
        for (const name of readdirSync(dir)) {
          const path = join(dir, name);
          if (statSync(path).isDirectory()) walk(path);
          else if (name.endsWith('.ts')) for (const m of readFileSync(path, 'utf8').matchAll(/action: '([a-z_]+(?:\.[a-z_]+)+)'/g)) auditActions.add(m[1]);
        }
      };
      walk(join(ROOT, 'src'));
      const scopes = schema('ApiKey').properties.scopes.items?.enum ?? [];
      expect(scopes).toContain('vm:read');
      const codes = (schema('ErrorBody').properties.code.enum ?? []).concat(['payload_too_large']);
      const wrong: string[] = [];
      for (const page of pages) {
        const t = text(page);
        for (const m of t.matchAll(/`((?:vm|volume|template)\.[a-z_]+)`/g)) {
          if (!opTypes.includes(m[1]) && !eventTypes.includes(m[1]) && !auditActions.has(m[1])) wrong.push(`${page}: type ${m[1]}`);
        }
        for (const m of t.matchAll(/`([a-z]+:(?:read|write))`/g)) if (!scopes.includes(m[1])) wrong.push(`${page}: scope ${m[1]}`);
        // The host agent's page describes that agent's own API and its own error codes.
        if (page === 'docs/explanation/host-agent.md') continue;
        for (const m of t.matchAll(/\b[45]\d\d `([a-z_]+)`/g)) if (!codes.includes(m[1])) wrong.push(`${page}: error code ${m[1]}`);
      }
      expect(wrong).toEqual([]);
      // The document's own description names every scope, and api.md's Operation row every type.
      const description = (doc as unknown as { info: { description: string } }).info.description;
      expect(scopes.filter((sc) => !description.includes(`\`${sc}\``))).toEqual([]);
      const api = text('docs/reference/api.md');
      const operationSection = api.slice(api.indexOf('### Operation\n'), api.indexOf('\n### ', api.indexOf('### Operation\n') + 1));
      const operationRow = operationSection.split('\n').find((l) => l.startsWith('| type |')) ?? '';
      expect(opTypes.filter((op) => !operationRow.includes(`\`${op}\``))).toEqual([]);
    });

    it('keeps implementation detail (SQL locks, triggers, migration numbers, module internals) out of reference pages', () => {
      const detail = /\b176[34]\d{9}\b|FOR (NO KEY )?UPDATE|FOR SHARE|SKIP LOCKED|BEFORE INSERT|^## For the /m;
      const found = pages
        .filter((p) => p.startsWith('docs/reference/'))
        .flatMap((page) => text(page).split('\n').map((line, i) => ({ where: `${page}:${i + 1}`, line })))
        .filter(({ line }) => detail.test(line))
        .map(({ where, line }) => `${where}: ${line.trim()}`);
      expect(found).toEqual([]);
    });

    it('gives X-Org-ID no example (Swagger UI would send it under "Try it out": 403 for everyone else)', () => {
      const params = operations().flatMap(({ op }) => op.parameters ?? []).filter((p) => p.name === 'X-Org-ID');
      expect(params.length).toBeGreaterThan(50);
      for (const p of params) expect(p).toEqual(expect.not.objectContaining({ example: expect.anything() }));
      for (const p of params) expect(p.schema).toEqual({ type: 'string' });
    });
  });

  it('is a valid OpenAPI 3 document (swagger-parser)', async () => {
    expect(doc.openapi).toBe('3.0.3');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('documents every route the application serves, and only those, with HEAD for every GET (Express answers it); every path starts with /v1', () => {
    expect(routes.length).toBeGreaterThanOrEqual(9);
    // The simulated payment provider's hosted checkout, and the page a checkout without return_url ends on, are a site, not the API: outside /v1 and the document.
    const checkout = routes.filter((r) => r.path.startsWith('/checkout/'));
    expect(checkout.flatMap((r) => r.methods.map((m) => `${m} ${r.path}`)).sort()).toEqual([
      'GET /checkout/:session',
      'GET /checkout/complete',
      'POST /checkout/:session/cancel',
      'POST /checkout/:session/pay',
    ]);
    // The admin API's routes answer only on the admin listener, in their own document (admin.e2e-spec.ts).
    const admin = routes.filter((r) => r.path.startsWith('/admin/v1/'));
    const served = routes
      .filter((r) => !checkout.includes(r) && !admin.includes(r))
      .flatMap((r) => r.methods.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])).map((m) => `${m} ${toOpenApiPath(r.path)}`))
      .sort();
    const documented = operations().map((o) => `${o.method.toUpperCase()} ${o.path}`).sort();
    expect(documented).toEqual(served);
    for (const path of Object.keys(doc.paths)) expect(path).toMatch(/^\/v1\//);
    for (const r of routes) if (!checkout.includes(r) && !admin.includes(r)) expect(r.path).toMatch(/^\/v1\//);
  });

  it('declares the bearer scheme; the routes that answer 401 without a token require it and take X-Org-ID; the others are public', async () => {
    expect(doc.components.securitySchemes).toEqual({
      bearer: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'cds_live_… (API key) or cds_sess_… (session token)',
        description: expect.stringContaining('cds_live_'),
      },
    });
    for (const { path, method, op } of operations()) {
      const url = path.replace(/\{[^}]+\}/g, 'x');
      const res = await (t.http as unknown as Record<string, (u: string) => Promise<{ status: number; body: { error?: { code: string } } }>>)[method](url);
      // A HEAD answer has no body: its 401 is the GET's unauthorized.
      const needsToken = res.status === 401 && (method === 'head' || res.body.error?.code === 'unauthorized');
      const where = `${method.toUpperCase()} ${path}`;
      if (needsToken) {
        expect({ where, security: op.security }).toEqual({ where, security: [{ bearer: [] }] });
        expect({ where, orgHeader: op.parameters?.find((p) => p.name === 'X-Org-ID') }).toEqual({
          where,
          orgHeader: expect.objectContaining({ in: 'header', required: false }),
        });
        expect({ where, has401: '401' in op.responses }).toEqual({ where, has401: true });
      } else {
        expect({ where, security: op.security }).toEqual({ where, security: [] });
      }
    }
  });

  it('documents a success response for every operation, and every error with the ErrorEnvelope schema and examples of its codes', () => {
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses);
      expect({ where, success: statuses.some((s) => /^2\d\d$/.test(s)) }).toEqual({ where, success: true });
      expect({ where, has500: statuses.includes('500') }).toEqual({ where, has500: true });
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        if (where.endsWith(' /v1/ready') && status === '503') continue; // a probe report, not an error (README)
        if (method === 'head') {
          expect({ where, status, content: op.responses[status].content }).toEqual({ where, status, content: undefined });
          continue;
        }
        const json = op.responses[status].content?.['application/json'];
        expect({ where, status, schema: json?.schema }).toEqual({ where, status, schema: { $ref: '#/components/schemas/ErrorEnvelope' } });
        const codes = Object.values(json?.examples ?? {}).map((e) => e.value.error.code);
        expect(codes.length).toBeGreaterThan(0);
        for (const code of codes) {
          const expected = status === '413' || status === '415' ? 'invalid_request' : code;
          expect({ where, status, code, statusOfCode: status === '413' || status === '415' ? Number(status) : STATUS_OF[code as keyof typeof STATUS_OF] }).toEqual({
            where,
            status,
            code: expected,
            statusOfCode: Number(status),
          });
        }
      }
    }
  });

  it('documents X-RateLimit-* on every error a rate-limited route answers after counting (all but 401 unauthorized), as the service sends them', async () => {
    const RATE_LIMIT = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
    type Documented = { headers?: Record<string, unknown>; content?: Record<string, { examples?: Record<string, unknown> }> };
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      const responses = op.responses as Record<string, Documented>;
      const limited = Object.entries(responses).some(([s, r]) => /^2\d\d$/.test(s) && r.headers !== undefined && 'X-RateLimit-Limit' in r.headers);
      for (const [status, response] of Object.entries(responses).filter(([s]) => Number(s) >= 400)) {
        const codes = Object.keys(response.content?.['application/json']?.examples ?? {});
        const counted = limited && !(status === '401' && codes.every((c) => c === 'unauthorized'));
        const documented = RATE_LIMIT.filter((h) => h in (response.headers ?? {}));
        expect({ where, status, documented, requestId: 'X-Request-Id' in (response.headers ?? {}) }).toEqual({
          where,
          status,
          documented: counted ? RATE_LIMIT : [],
          requestId: true,
        });
      }
    }
    expect(Object.keys((doc.paths['/v1/volumes/{id}'].get.responses['404'] as Documented).headers ?? {}).sort()).toEqual([...RATE_LIMIT, 'X-Request-Id'].sort());

    // What the document says is what the service sends.
    await t.seed({ regions: [region()], organizations: [organization('oa')] });
    const notFound = await t.http.get('/v1/volumes/vol_missing').set(bearer(apiToken('oa', 'rw')));
    expect(notFound.status).toBe(404);
    expect(notFound.headers['x-ratelimit-limit']).toBe('600');
    expect(notFound.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(notFound.headers['x-ratelimit-reset']).toMatch(/^\d{10}$/);
    const wrongPassword = await t.http.post('/v1/auth/login').send({ email: 'owner@oa.test', password: `${OWNER_PASSWORD}!` });
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body.error.code).toBe('invalid_credentials');
    expect(wrongPassword.headers['x-ratelimit-limit']).toBe('600');
    const noToken = await t.http.get('/v1/volumes/vol_missing');
    expect(noToken.status).toBe(401);
    expect(noToken.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('describes the error envelope with every code of the error table', () => {
    expect(doc.components.schemas.ErrorEnvelope).toEqual({
      type: 'object',
      description: 'The body of every error response',
      properties: { error: { $ref: '#/components/schemas/ErrorBody' } },
      required: ['error'],
    });
    // ErrorBody, not Error (which would shadow the built-in Error class in generated TypeScript).
    expect(doc.components.schemas.Error).toBeUndefined();
    const error = doc.components.schemas.ErrorBody as { properties: { code: { enum: string[] } }; required: string[] };
    // The codes the routes declare, and those of requests no route takes (404, 405): only codes the service sends.
    const declared = new Set(['not_found', 'method_not_allowed']);
    for (const { op } of operations()) {
      for (const response of Object.values(op.responses)) {
        for (const e of Object.values(response.content?.['application/json']?.examples ?? {})) declared.add(e.value.error.code);
      }
    }
    expect(error.properties.code.enum.sort()).toEqual([...declared].sort());
    expect(error.properties.code.enum.every((c) => c in STATUS_OF)).toBe(true);
    expect(error.required.sort()).toEqual(['code', 'details', 'message', 'request_id']);
  });

  it('documents the auth and wallet bodies with examples from the demo data', () => {
    const login = doc.paths['/v1/auth/login'].post as unknown as { requestBody: { content: { 'application/json': { schema: { $ref: string } } } } };
    expect(login.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/LoginDto' });
    expect(doc.components.schemas.LoginDto).toEqual({
      type: 'object',
      properties: {
        email: { type: 'string', maxLength: 254, example: 'owner@demo.test' },
        password: { type: 'string', maxLength: 200, format: 'password', example: 'demo password 123' },
      },
      required: ['email', 'password'],
      additionalProperties: false,
    });
    expect(doc.paths['/v1/wallet'].get.responses['200'].content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/Wallet' });
  });

  it('every JSON request body refuses unknown members (additionalProperties: false), the inbound payment events excepted', () => {
    const schemas = doc.components.schemas as Record<string, { additionalProperties?: unknown; $ref?: string }>;
    const open: string[] = [];
    let closed = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, { requestBody?: { content?: Record<string, { schema?: { $ref?: string; additionalProperties?: unknown } }> } }>)) {
        for (const media of Object.values(op.requestBody?.content ?? {})) {
          const schema = media.schema?.$ref ? schemas[media.schema.$ref.replace('#/components/schemas/', '')] : media.schema;
          if (schema?.additionalProperties === false) closed++;
          else open.push(`${method.toUpperCase()} ${path}`);
        }
      }
    }
    expect(open).toEqual(['POST /v1/payment-events/{provider}']);
    expect(closed).toBeGreaterThan(20);
  });

  it('documents Idempotency-Key on the renewal, with its 202 headers and every error code of the renewal', () => {
    const renew = doc.paths['/v1/volumes/{id}/renew'].post as unknown as Operation & { requestBody: unknown };
    expect(renew.parameters?.find((p) => p.name === 'Idempotency-Key')).toEqual({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: expect.stringContaining('Idempotent-Replayed: true'),
      schema: { type: 'string', minLength: 1, maxLength: 255, example: '3f1c9a52-7a4e-4d0b-9a8e-2b6f0d1c7e45' },
    });
    expect(Object.keys(renew.responses).sort()).toEqual(['202', '400', '401', '402', '403', '404', '409', '413', '415', '429', '500']);
    const codes409 = Object.keys(renew.responses['409'].content?.['application/json'].examples ?? {}).sort();
    expect(codes409).toEqual(['idempotency_conflict', 'invalid_state']);
    const headers = (renew.responses['202'] as unknown as { headers: Record<string, unknown> }).headers;
    expect(Object.keys(headers).sort()).toEqual(['Idempotent-Replayed', 'Location', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id']);
    expect(renew.requestBody).toEqual({ required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/RenewVolumeBody' } } } });
  });

  it('serves the OpenAPI document and the docs page publicly, without rate limiting', async () => {
    const json = await t.http.get('/v1/openapi.json');
    expect(json.headers['x-ratelimit-limit']).toBeUndefined();

    const page = await t.http.get('/v1/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['x-ratelimit-limit']).toBeUndefined();
    expect(page.text).toContain('<script src="/v1/docs/swagger-ui-bundle.js"></script>');
    expect(page.text).toContain('<link rel="stylesheet" href="/v1/docs/swagger-ui.css">');

    const init = await t.http.get('/v1/docs/docs-init.js');
    expect(init.status).toBe(200);
    expect(init.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(init.text).toContain("fetch('/v1/openapi.json')");
    expect(init.text).toContain('delete item.head');

    const bundle = await t.http.get('/v1/docs/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(bundle.text).toContain('SwaggerUIBundle');
    const css = await t.http.get('/v1/docs/swagger-ui.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');

    const missing = await t.http.get('/v1/docs/package.json');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      error: {
        code: 'not_found',
        message: 'No documentation file package.json; the files are swagger-ui.css, swagger-ui-bundle.js, favicon-32x32.png, docs-init.js',
        request_id: missing.headers['x-request-id'],
        details: {},
      },
    });
  });

  it('sends a browser opening / to the docs page; / is no part of the API (not in the document)', async () => {
    // Not through t.http: / is outside the document, whose validation would refuse any answer there.
    const root = await request(t.app.getHttpServer()).get('/').set('Accept', 'text/html');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/v1/docs');
    expect(root.headers['x-request-id']).toMatch(/^req_/);
    expect(doc.paths['/']).toBeUndefined();
    const post = await t.http.post('/').send({});
    expect(post.status).toBe(404);
    expect(post.body.error.code).toBe('not_found');
  });

  it('compresses the docs page, its script and JSON answers for clients that accept it, and only for them', async () => {
    const raw = async (path: string, encoding?: string): Promise<{ status: number; headers: Record<string, string>; size: number; body: Buffer }> => {
      const req = request(t.app.getHttpServer()).get(path).buffer(true).parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      });
      // superagent decompresses what it receives; the size on the wire is read from Content-Length or counted before that.
      if (encoding) req.set('Accept-Encoding', encoding);
      else req.set('Accept-Encoding', 'identity');
      const res = await req;
      return { status: res.status, headers: res.headers as Record<string, string>, size: (res.body as Buffer).length, body: res.body as Buffer };
    };
    const plainBundle = await raw('/v1/docs/swagger-ui-bundle.js');
    expect(plainBundle.status).toBe(200);
    expect(plainBundle.headers['content-encoding']).toBeUndefined();
    const gzBundle = await raw('/v1/docs/swagger-ui-bundle.js', 'gzip');
    expect(gzBundle.status).toBe(200);
    expect(gzBundle.headers['content-encoding']).toBe('gzip');
    expect(gzBundle.headers.vary).toBe('Accept-Encoding');
    expect(gzBundle.body.equals(plainBundle.body)).toBe(true);

    const gzDoc = await t.http.get('/v1/openapi.json').set('Accept-Encoding', 'gzip');
    expect(gzDoc.status).toBe(200);
    expect(gzDoc.headers['content-encoding']).toBe('gzip');
    expect(gzDoc.body.openapi).toBe('3.0.3');

    // A small JSON answer (under 1 KiB) is sent as it is.
    const health = await t.http.get('/v1/health').set('Accept-Encoding', 'gzip');
    expect(health.headers['content-encoding']).toBeUndefined();
    expect(health.body).toEqual({ status: 'ok' });
  });

  it('names every operation for what it does (stable operationIds), with a server, a summary and described 2xx responses', () => {
    const ids = Object.fromEntries(operations().map(({ path, method, op }) => [`${method.toUpperCase()} ${path}`, op.operationId]));
    expect(ids).toEqual({
      'POST /v1/auth/signup': 'signup',
      'POST /v1/auth/login': 'login',
      'POST /v1/auth/logout': 'logout',
      'GET /v1/wallet': 'getWallet',
      'HEAD /v1/wallet': 'headWallet',
      'GET /v1/wallet/transactions': 'listWalletTransactions',
      'HEAD /v1/wallet/transactions': 'headWalletTransactions',
      'POST /v1/wallet/top-ups': 'createTopUp',
      'GET /v1/wallet/top-ups': 'listTopUps',
      'HEAD /v1/wallet/top-ups': 'headTopUps',
      'GET /v1/wallet/top-ups/{id}': 'getTopUp',
      'HEAD /v1/wallet/top-ups/{id}': 'headTopUp',
      'POST /v1/wallet/top-ups/{id}/cancel': 'cancelTopUp',
      'POST /v1/payment-events/{provider}': 'receivePaymentEvent',
      'GET /v1/volume-options': 'getVolumeOptions',
      'HEAD /v1/volume-options': 'headVolumeOptions',
      'GET /v1/regions': 'listRegions',
      'HEAD /v1/regions': 'headRegions',
      'GET /v1/server-options': 'getServerOptions',
      'HEAD /v1/server-options': 'headServerOptions',
      'GET /v1/servers': 'listServers',
      'HEAD /v1/servers': 'headServers',
      'GET /v1/servers/{id}': 'getServer',
      'HEAD /v1/servers/{id}': 'headServer',
      'PATCH /v1/servers/{id}': 'updateServer',
      'DELETE /v1/servers/{id}': 'deleteServer',
      'POST /v1/servers/{id}/console': 'createServerConsole',
      'GET /v1/operations': 'listOperations',
      'HEAD /v1/operations': 'headOperations',
      'GET /v1/operations/{id}': 'getOperation',
      'HEAD /v1/operations/{id}': 'headOperation',
      'GET /v1/volumes': 'listVolumes',
      'HEAD /v1/volumes': 'headVolumes',
      'POST /v1/volumes': 'purchaseVolume',
      'GET /v1/volumes/{id}': 'getVolume',
      'HEAD /v1/volumes/{id}': 'headVolume',
      'POST /v1/volumes/{id}/renew': 'renewVolume',
      'POST /v1/volumes/{id}/resize': 'resizeVolume',
      'PATCH /v1/volumes/{id}': 'updateVolume',
      'DELETE /v1/volumes/{id}': 'deleteVolume',
      'GET /v1/templates': 'listTemplates',
      'POST /v1/servers/{id}/deployments': 'deployTemplate',
      'GET /v1/servers/{id}/deployments': 'listServerDeployments',
      'HEAD /v1/servers/{id}/deployments': 'headServerDeployments',
      'GET /v1/deployments': 'listDeployments',
      'GET /v1/deployments/{id}': 'getDeployment',
      'POST /v1/deployments/{id}/update': 'updateDeployment',
      'POST /v1/deployments/{id}/health': 'checkDeploymentHealth',
      'DELETE /v1/deployments/{id}': 'removeDeployment',
      'HEAD /v1/templates': 'headTemplates',
      'HEAD /v1/deployments': 'headDeployments',
      'HEAD /v1/deployments/{id}': 'headDeployment',
      'POST /v1/volumes/{id}/attach': 'attachVolume',
      'POST /v1/volumes/{id}/detach': 'detachVolume',
      'POST /v1/volumes/{id}/snapshots': 'createSnapshot',
      'GET /v1/snapshots': 'listSnapshots',
      'GET /v1/snapshots/{id}': 'getSnapshot',
      'PATCH /v1/snapshots/{id}': 'updateSnapshot',
      'DELETE /v1/snapshots/{id}': 'deleteSnapshot',
      'POST /v1/snapshots/{id}/renew': 'renewSnapshot',
      'POST /v1/servers/{id}/images': 'createImage',
      'POST /v1/servers/{id}/networks': 'attachServerToNetwork',
      'POST /v1/servers/{id}/networks/{network_id}/detach': 'detachServerFromNetwork',
      'POST /v1/networks': 'createNetwork',
      'GET /v1/networks': 'listNetworks',
      'GET /v1/networks/{id}': 'getNetwork',
      'PATCH /v1/networks/{id}': 'updateNetwork',
      'DELETE /v1/networks/{id}': 'deleteNetwork',
      'GET /v1/images': 'listImages',
      'GET /v1/images/{id}': 'getImage',
      'PATCH /v1/images/{id}': 'updateImage',
      'DELETE /v1/images/{id}': 'deleteImage',
      'POST /v1/images/{id}/renew': 'renewImage',
      'POST /v1/quotes': 'createQuote',
      'POST /v1/servers': 'purchaseServer',
      'POST /v1/servers/{id}/reboot': 'rebootServer',
      'POST /v1/servers/{id}/renew': 'renewServer',
      'POST /v1/servers/{id}/resize': 'resizeServer',
      'POST /v1/servers/{id}/rebuild': 'rebuildServer',
      'POST /v1/servers/{id}/start': 'startServer',
      'POST /v1/servers/{id}/stop': 'stopServer',
      'GET /v1/quotes/{id}': 'getQuote',
      'HEAD /v1/quotes/{id}': 'headQuote',
      'POST /v1/api-keys': 'createApiKey',
      'GET /v1/api-keys': 'listApiKeys',
      'HEAD /v1/api-keys': 'headApiKeys',
      'DELETE /v1/api-keys/{id}': 'revokeApiKey',
      'GET /v1/members': 'listMembers',
      'HEAD /v1/members': 'headMembers',
      'HEAD /v1/networks': 'headNetworks',
      'HEAD /v1/networks/{id}': 'headNetwork',
      'POST /v1/members': 'addMember',
      'PATCH /v1/members/{user_id}': 'changeMemberRole',
      'DELETE /v1/members/{user_id}': 'removeMember',
      'GET /v1/organizations': 'listOrganizations',
      'HEAD /v1/organizations': 'headOrganizations',
      'POST /v1/organizations': 'createOrganization',
      'PATCH /v1/organizations/{id}': 'renameOrganization',
      'POST /v1/invitations': 'createInvitation',
      'GET /v1/invitations': 'listInvitations',
      'HEAD /v1/invitations': 'headInvitations',
      'POST /v1/invitations/accept': 'acceptInvitation',
      'DELETE /v1/invitations/{id}': 'revokeInvitation',
      'GET /v1/audit-log': 'listAuditLog',
      'HEAD /v1/audit-log': 'headAuditLog',
      'GET /v1/health': 'getHealth',
      'HEAD /v1/health': 'headHealth',
      'GET /v1/ready': 'getReadiness',
      'HEAD /v1/ready': 'headReadiness',
      'GET /v1/openapi.json': 'getOpenApiDocument',
      'HEAD /v1/openapi.json': 'headOpenApiDocument',
      'GET /v1/docs': 'getDocsPage',
      'HEAD /v1/docs': 'headDocsPage',
      'GET /v1/docs/{asset}': 'getDocsAsset',
      'HEAD /v1/docs/{asset}': 'headDocsAsset',
      'POST /v1/ssh-keys': 'createSshKey',
      'GET /v1/ssh-keys': 'listSshKeys',
      'HEAD /v1/snapshots': 'headSnapshots',
      'HEAD /v1/snapshots/{id}': 'headSnapshot',
      'HEAD /v1/images': 'headImages',
      'HEAD /v1/images/{id}': 'headImage',
      'POST /v1/reserved-ips': 'createReservedIp',
      'GET /v1/reserved-ips': 'listReservedIps',
      'HEAD /v1/reserved-ips': 'headReservedIps',
      'GET /v1/reserved-ips/{id}': 'getReservedIp',
      'HEAD /v1/reserved-ips/{id}': 'headReservedIp',
      'PATCH /v1/reserved-ips/{id}': 'updateReservedIp',
      'DELETE /v1/reserved-ips/{id}': 'releaseReservedIp',
      'POST /v1/reserved-ips/{id}/assign': 'assignReservedIp',
      'POST /v1/reserved-ips/{id}/unassign': 'unassignReservedIp',
      'POST /v1/reserved-ips/{id}/renew': 'renewReservedIp',
      'HEAD /v1/ssh-keys': 'headSshKeys',
      'GET /v1/ssh-keys/{id}': 'getSshKey',
      'HEAD /v1/ssh-keys/{id}': 'headSshKey',
      'PATCH /v1/ssh-keys/{id}': 'updateSshKey',
      'DELETE /v1/ssh-keys/{id}': 'deleteSshKey',
      'POST /v1/firewall-rules': 'createFirewallRule',
      'GET /v1/firewall-rules': 'listFirewallRules',
      'HEAD /v1/firewall-rules': 'headFirewallRules',
      'GET /v1/firewall-rules/{id}': 'getFirewallRule',
      'HEAD /v1/firewall-rules/{id}': 'headFirewallRule',
      'DELETE /v1/firewall-rules/{id}': 'deleteFirewallRule',
      'GET /v1/servers/{id}/firewall': 'getServerFirewall',
      'HEAD /v1/servers/{id}/firewall': 'headServerFirewall',
      'POST /v1/webhook-endpoints': 'createWebhookEndpoint',
      'GET /v1/webhook-endpoints': 'listWebhookEndpoints',
      'HEAD /v1/webhook-endpoints': 'headWebhookEndpoints',
      'GET /v1/webhook-endpoints/{id}': 'getWebhookEndpoint',
      'HEAD /v1/webhook-endpoints/{id}': 'headWebhookEndpoint',
      'PATCH /v1/webhook-endpoints/{id}': 'updateWebhookEndpoint',
      'DELETE /v1/webhook-endpoints/{id}': 'deleteWebhookEndpoint',
      'POST /v1/webhook-endpoints/{id}/rotate-secret': 'rotateWebhookSecret',
      'POST /v1/webhook-endpoints/{id}/test': 'testWebhookEndpoint',
      'GET /v1/webhook-endpoints/{id}/deliveries': 'listWebhookDeliveries',
      'HEAD /v1/webhook-endpoints/{id}/deliveries': 'headWebhookDeliveries',
      'POST /v1/webhook-endpoints/{id}/deliveries/{delivery_id}/redeliver': 'redeliverWebhook',
    });
    expect((doc as unknown as { servers: unknown }).servers).toEqual([{ url: '/', description: 'This service (every path starts with /v1)' }]);
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      const summary = (op as unknown as { summary?: string }).summary;
      expect({ where, summary: typeof summary === 'string' && summary.length > 0 }).toEqual({ where, summary: true });
      for (const [status, r] of Object.entries(op.responses as Record<string, { description?: string }>)) {
        expect({ where, status, described: (r.description ?? '').length > 0 }).toEqual({ where, status, described: true });
      }
    }
  });

  it('declares null-or-object members in the form strict validators and generators accept (oneOf [ref, null]), integers as integers, results per operation type', () => {
    const schemas = doc.components.schemas as Record<string, { properties: Record<string, Record<string, unknown>> }>;
    const NULL = { type: 'object', nullable: true, enum: [null], description: 'null' };
    expect(schemas.Volume.properties.server).toEqual({
      oneOf: [{ $ref: '#/components/schemas/ServerRef' }, NULL],
      description: 'The server the disk is on; null when detached',
    });
    // Operation: a union of one schema per type, each fixing `type` and typing `result` as that type's (or null).
    const variants: Record<string, [string, string]> = {
      'volume.create': ['VolumeCreateOperation', 'VolumeCreateResult'],
      'volume.attach': ['VolumeAttachOperation', 'VolumeActionResult'],
      'volume.detach': ['VolumeDetachOperation', 'VolumeActionResult'],
      'volume.delete': ['VolumeDeleteOperation', 'VolumeActionResult'],
      'volume.renew': ['VolumeRenewOperation', 'VolumeRenewResult'],
      'vm.create': ['VmCreateOperation', 'VmCreateResult'],
      'vm.start': ['VmStartOperation', 'VmStartResult'],
      'vm.stop': ['VmStopOperation', 'VmStopResult'],
      'vm.reboot': ['VmRebootOperation', 'VmRebootResult'],
      'vm.renew': ['VmRenewOperation', 'VmRenewResult'],
      'vm.delete': ['VmDeleteOperation', 'VmDeleteResult'],
      'vm.suspend': ['VmSuspendOperation', 'VmSuspendResult'],
      'volume.suspend': ['VolumeSuspendOperation', 'VolumeSuspendResult'],
      'snapshot.create': ['SnapshotCreateOperation', 'SnapshotCreateResult'],
      'snapshot.renew': ['SnapshotRenewOperation', 'SnapshotRenewResult'],
      'snapshot.delete': ['SnapshotDeleteOperation', 'SnapshotDeleteResult'],
      'image.create': ['ImageCreateOperation', 'ImageCreateResult'],
      'image.renew': ['ImageRenewOperation', 'ImageRenewResult'],
      'image.delete': ['ImageDeleteOperation', 'ImageDeleteResult'],
      'template.deploy': ['TemplateDeployOperation', 'TemplateDeployResult'],
      'template.update': ['TemplateUpdateOperation', 'TemplateUpdateResult'],
      'template.health': ['TemplateHealthOperation', 'TemplateHealthResult'],
      'template.remove': ['TemplateRemoveOperation', 'TemplateRemoveResult'],
      'volume.resize': ['VolumeResizeOperation', 'VolumeResizeResult'],
      'vm.resize': ['VmResizeOperation', 'VmResizeResult'],
      'vm.rebuild': ['VmRebuildOperation', 'VmRebuildResult'],
      'ip.reserve': ['IpReserveOperation', 'IpReserveResult'],
      'ip.assign': ['IpAssignOperation', 'IpAssignmentResult'],
      'ip.unassign': ['IpUnassignOperation', 'IpAssignmentResult'],
      'ip.renew': ['IpRenewOperation', 'IpRenewResult'],
      'ip.release': ['IpReleaseOperation', 'IpReleaseResult'],
      'vm.attach_network': ['VmAttachNetworkOperation', 'VmNetworkResult'],
      'vm.detach_network': ['VmDetachNetworkOperation', 'VmNetworkResult'],
    };
    expect((schemas.Operation as unknown as { oneOf: unknown }).oneOf).toEqual(Object.values(variants).map(([name]) => ({ $ref: `#/components/schemas/${name}` })));
    expect(schemas.Operation.properties).toBeUndefined();
    // The discriminator, derived from the variants: every type to its schema (Quote likewise, by kind).
    expect((schemas.Operation as unknown as { type: string; discriminator: unknown }).discriminator).toEqual({
      propertyName: 'type',
      mapping: Object.fromEntries(Object.entries(variants).map(([type, [name]]) => [type, `#/components/schemas/${name}`])),
    });
    expect((schemas.Operation as unknown as { type: string }).type).toBe('object');
    expect((schemas.Quote as unknown as { discriminator: unknown }).discriminator).toEqual({
      propertyName: 'kind',
      mapping: { volume: '#/components/schemas/VolumeQuote', server: '#/components/schemas/ServerQuote' },
    });
    // A oneOf that no member tells apart (null or an object) has none.
    expect((schemas.Volume.properties.server as { discriminator?: unknown }).discriminator).toBeUndefined();
    for (const [type, [name, result]] of Object.entries(variants)) {
      const variant = schemas[name] as unknown as { properties: Record<string, unknown>; required: string[] };
      expect(variant.properties.type).toEqual({ type: 'string', enum: [type], example: type });
      expect(variant.properties.result).toEqual({
        oneOf: [{ $ref: `#/components/schemas/${result}` }, NULL],
        description: 'Outcome once succeeded; null until then and when failed',
        example: null,
      });
      expect(variant.properties.error).toEqual({
        oneOf: [{ $ref: '#/components/schemas/OperationError' }, NULL],
        description: 'Set when failed; null otherwise',
        example: null,
      });
      expect(variant.required).toEqual(['id', 'type', 'status', 'vm_id', 'steps', 'result', 'error', 'created_at', 'finished_at']);
    }
    expect(schemas.VolumeRenewResult).toEqual({
      type: 'object',
      description: 'result of a succeeded volume.renew',
      properties: {
        volume_id: { type: 'string', example: 'vol_demodata1' },
        term_months: { type: 'integer', enum: [1, 3, 12], example: 3 },
        expires_at: { type: 'string', format: 'date-time', description: 'The new end of the paid term', example: '2027-03-21T00:00:00.000Z' },
        charged: { $ref: '#/components/schemas/Charge' },
      },
      required: ['volume_id', 'term_months', 'expires_at', 'charged'],
    });
    // No schema anywhere keeps `nullable` next to a $ref/allOf (3.0 would still require the object).
    const offenders: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      if (o.nullable === true && (o.allOf || o.$ref || o.type === undefined)) offenders.push(at);
      for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`);
    };
    walk(doc, '#');
    expect(offenders).toEqual([]);
    expect(schemas.Volume.properties.size_gb.type).toBe('integer');
    expect(schemas.Volume.properties.term_months.type).toBe('integer');
    for (const name of ['min_gb', 'max_gb', 'step_gb', 'per_server_limit']) expect(schemas.VolumeOptions.properties[name].type).toBe('integer');
    expect(schemas.VolumeOptions.properties.terms).toEqual(expect.objectContaining({ type: 'array', items: { type: 'integer' } }));
    expect((schemas.ErrorBody.properties.details as { anyOf: unknown[] }).anyOf).toEqual([
      { $ref: '#/components/schemas/FieldErrorDetails' },
      { $ref: '#/components/schemas/InsufficientBalanceDetails' },
      { $ref: '#/components/schemas/QuotaExceededDetails' },
      { $ref: '#/components/schemas/OperationInTheWayDetails' },
      { $ref: '#/components/schemas/ConflictDetails' },
      { $ref: '#/components/schemas/ResourceStateDetails' },
      { $ref: '#/components/schemas/InstanceMissingDetails' },
      { $ref: '#/components/schemas/SuspendedDetails' },
      { $ref: '#/components/schemas/ForbiddenReasonDetails' },
      { type: 'object', maxProperties: 0, description: 'Every other code: `{}`' },
    ]);
  });

  it('declares Idempotent-Replayed on every stored answer of the renewal, and the headers always sent as required', () => {
    type Headers = Record<string, { required?: boolean }>;
    const renew = doc.paths['/v1/volumes/{id}/renew'].post.responses as unknown as Record<string, { headers: Headers }>;
    const replayed = Object.entries(renew).filter(([, r]) => 'Idempotent-Replayed' in r.headers).map(([s]) => s);
    expect(replayed).toEqual(['202', '402', '404', '409']);
    expect(renew['202'].headers.Location.required).toBe(true);
    expect(renew['202'].headers['Idempotent-Replayed'].required).toBeUndefined();
    for (const { path, method, op } of operations()) {
      for (const [status, r] of Object.entries(op.responses as unknown as Record<string, { headers?: Headers }>)) {
        const where = `${method.toUpperCase()} ${path} ${status}`;
        expect({ where, requestId: r.headers?.['X-Request-Id']?.required }).toEqual({ where, requestId: true });
        const limit = r.headers?.['X-RateLimit-Limit'];
        if (limit) expect({ where, required: limit.required }).toEqual({ where, required: status !== '500' });
      }
    }
  });

  it('sends no ETag (none is declared) and answers If-None-Match with the full 200', async () => {
    await t.seed({ regions: [], organizations: [organization('oe')] });
    const first = await t.http.get('/v1/wallet').set(bearer(apiToken('oe', 'rw')));
    expect(first.status).toBe(200);
    expect(first.headers.etag).toBeUndefined();
    const again = await t.http.get('/v1/wallet').set(bearer(apiToken('oe', 'rw'))).set('If-None-Match', '*');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const head = await t.http.head('/v1/wallet').set(bearer(apiToken('oe', 'rw')));
    expect(head.status).toBe(200);
    expect(head.headers['x-ratelimit-limit']).toBe('600');
    expect(head.text ?? '').toBe('');
  });
});
