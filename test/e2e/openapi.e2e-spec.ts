import SwaggerParser from '@apidevtools/swagger-parser';
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

  it('is a valid OpenAPI 3 document (swagger-parser)', async () => {
    expect(doc.openapi).toBe('3.0.3');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('documents every route the application serves, and only those; every path starts with /v1', () => {
    expect(routes.length).toBeGreaterThanOrEqual(9);
    const served = routes.flatMap((r) => r.methods.map((m) => `${m} ${toOpenApiPath(r.path)}`)).sort();
    const documented = operations().map((o) => `${o.method.toUpperCase()} ${o.path}`).sort();
    expect(documented).toEqual(served);
    for (const path of Object.keys(doc.paths)) expect(path).toMatch(/^\/v1\//);
    for (const r of routes) expect(r.path).toMatch(/^\/v1\//);
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
      const needsToken = res.status === 401 && res.body.error?.code === 'unauthorized';
      const where = `${method.toUpperCase()} ${path}`;
      if (needsToken) {
        expect({ where, security: op.security }).toEqual({ where, security: [{ bearer: [] }] });
        expect({ where, orgHeader: op.parameters?.find((p) => p.name === 'X-Org-ID') }).toEqual({
          where,
          orgHeader: expect.objectContaining({ in: 'header', required: false }),
        });
        expect({ where, has401: '401' in op.responses }).toEqual({ where, has401: true });
      } else {
        expect({ where, security: op.security }).toEqual({ where, security: undefined });
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
        if (where === 'GET /v1/ready' && status === '503') continue; // a probe report, not an error (README)
        const json = op.responses[status].content?.['application/json'];
        expect({ where, status, schema: json?.schema }).toEqual({ where, status, schema: { $ref: '#/components/schemas/ErrorEnvelope' } });
        const codes = Object.values(json?.examples ?? {}).map((e) => e.value.error.code);
        expect(codes.length).toBeGreaterThan(0);
        for (const code of codes) {
          const expected = status === '413' ? 'invalid_request' : code;
          expect({ where, status, code, statusOfCode: status === '413' ? 413 : STATUS_OF[code as keyof typeof STATUS_OF] }).toEqual({
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
      properties: { error: { $ref: '#/components/schemas/Error' } },
      required: ['error'],
    });
    const error = doc.components.schemas.Error as { properties: { code: { enum: string[] } }; required: string[] };
    expect(error.properties.code.enum.sort()).toEqual(Object.keys(STATUS_OF).sort());
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
    });
    expect(doc.paths['/v1/wallet'].get.responses['200'].content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/Wallet' });
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
    expect(Object.keys(renew.responses).sort()).toEqual(['202', '400', '401', '402', '403', '404', '409', '413', '429', '500']);
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
    expect(init.text).toContain("url: '/v1/openapi.json'");

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
});
