import { Server, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { ObservedResponse, OpenApiDoc, ResponseValidator, validatedHttp } from '../support/openapi-validation';

/** The response validator every e2e test goes through: it must refuse what the document does not say. */

const doc = {
  openapi: '3.0.3',
  info: { title: 'things', version: '1' },
  paths: {
    '/v1/things/{id}': {
      get: {
        responses: {
          '200': {
            description: 'a thing',
            headers: { 'X-Request-Id': { required: true, schema: { type: 'string' } }, 'X-RateLimit-Limit': { required: true, schema: { type: 'integer' } } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
          '404': { description: 'none', headers: { 'X-Request-Id': { required: true, schema: { type: 'string' } } }, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
        },
      },
    },
    '/v1/things/{id}/poke': {
      post: { responses: { '204': { description: 'poked', headers: { 'X-Request-Id': { required: true, schema: { type: 'string' } } } } } },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          size_gb: { type: 'integer' },
          server: { oneOf: [{ $ref: '#/components/schemas/Ref' }, { type: 'object', nullable: true, enum: [null] }] },
        },
        required: ['id', 'size_gb', 'server'],
        additionalProperties: false,
      },
      Ref: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      ErrorEnvelope: {
        type: 'object',
        properties: { error: { type: 'object', properties: { code: { type: 'string', enum: ['not_found', 'method_not_allowed'] } }, required: ['code'] } },
        required: ['error'],
      },
    },
  },
} as OpenApiDoc;

const ok: ObservedResponse = {
  method: 'GET',
  path: '/v1/things/t1',
  status: 200,
  headers: { 'x-request-id': 'req_1', 'x-ratelimit-limit': '600', 'content-type': 'application/json; charset=utf-8', 'content-length': '40' },
  text: JSON.stringify({ id: 't1', size_gb: 10, server: null }),
};

describe('ResponseValidator', () => {
  const v = new ResponseValidator(doc);

  it('accepts a response the document describes (null and an object for a nullable reference)', () => {
    expect(v.problems(ok)).toEqual([]);
    expect(v.problems({ ...ok, text: JSON.stringify({ id: 't1', size_gb: 10, server: { id: 's' } }) })).toEqual([]);
    // A method the document does not declare for the path (here HEAD) is refused.
    expect(v.problems({ ...ok, method: 'HEAD', text: '' })).toEqual([
      'HEAD /v1/things/t1: no operation of the document serves it; expected the 405 of an unmatched request, got 200',
      'header Allow is missing on a 405',
    ]);
  });

  it('refuses an undeclared status, a body off schema, a missing required header, a bad header value and an undeclared header', () => {
    expect(v.problems({ ...ok, status: 409 })).toEqual(['status 409 is not declared for GET /v1/things/{id}']);
    expect(v.problems({ ...ok, text: JSON.stringify({ id: 't1', size_gb: 1.5, server: null }) })).toEqual(['body/size_gb must be integer {"type":"integer"}']);
    expect(v.problems({ ...ok, text: JSON.stringify({ id: 't1', size_gb: 1, server: 'x' }) }).length).toBeGreaterThan(0);
    expect(v.problems({ ...ok, headers: { ...ok.headers, 'x-ratelimit-limit': undefined } })).toEqual(['required header X-RateLimit-Limit is missing']);
    expect(v.problems({ ...ok, headers: { ...ok.headers, 'x-ratelimit-limit': 'many' } })).toEqual(['header X-RateLimit-Limit must be integer {"type":"integer"}']);
    expect(v.problems({ ...ok, headers: { ...ok.headers, etag: 'W/"1"' } })).toEqual(['header etag is sent but not declared for status 200']);
    expect(v.problems({ ...ok, headers: { ...ok.headers, 'content-type': 'text/html' } })).toEqual([
      'Content-Type text/html is not declared for status 200 (declared: application/json)',
    ]);
  });

  it('refuses a body where none is declared, and checks unmatched requests as the error envelope', () => {
    const poke = { method: 'POST', path: '/v1/things/t1/poke', status: 204, headers: { 'x-request-id': 'r' }, text: '' };
    expect(v.problems(poke)).toEqual([]);
    expect(v.problems({ ...poke, text: '{}' })).toEqual(['status 204 declares no body, got "{}"']);
    const notFound = { method: 'GET', path: '/v1/nothing', status: 404, headers: { 'x-request-id': 'r', 'content-type': 'application/json' }, text: '{"error":{"code":"not_found"}}' };
    expect(v.problems(notFound)).toEqual([]);
    expect(v.problems({ ...notFound, status: 200 })).toEqual(['GET /v1/nothing: no operation of the document serves it; expected the 404 of an unmatched request, got 200']);
    expect(v.problems({ ...notFound, method: 'DELETE', path: '/v1/things/t1', status: 405, text: '{"error":{"code":"method_not_allowed"}}' })).toEqual(['header Allow is missing on a 405']);
  });
});

describe('validatedHttp (the supertest hook of TestApp.http)', () => {
  let server: Server;
  let body = '';
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Request-Id': 'req_1', 'X-RateLimit-Limit': '600' });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fails the request whose response the document does not describe, and passes the others', async () => {
    const http = validatedHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, doc);
    body = JSON.stringify({ id: 't1', size_gb: 10, server: null });
    expect((await http.get('/v1/things/t1')).body).toEqual({ id: 't1', size_gb: 10, server: null });
    body = JSON.stringify({ id: 't1', size_gb: '10', server: null });
    await expect(http.get('/v1/things/t1')).rejects.toThrow(/body\/size_gb must be integer/);
  });
});
