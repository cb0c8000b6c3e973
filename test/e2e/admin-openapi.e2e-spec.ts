import SwaggerParser from '@apidevtools/swagger-parser';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { adminServerOf } from '../../src/app.factory';
import { servedRoutes } from '../../src/shared/http/route-methods';
import { TestApp, startTestApp } from '../support/test-app';

type Operation = { operationId: string; security?: Record<string, string[]>[]; parameters?: { name: string; in: string; required?: boolean }[] };
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, unknown> } };

const ROOT = join(__dirname, '..', '..');
const REFERENCE = 'docs/reference/admin-api.md';

function docPages(dir = join(ROOT, 'docs')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? docPages(path) : name.endsWith('.md') ? [relative(ROOT, path)] : [];
  });
}

/** The admin routes a page names ("PATCH /admin/v1/regions/{id}"): method and path, the query and trailing punctuation dropped. */
function adminRoutesNamed(text: string): { method: string; path: string }[] {
  return [...text.matchAll(/\b(GET|POST|PUT|PATCH|DELETE) `?(\/admin\/v1\/[A-Za-z0-9_{}/.-]*)/g)].map((m) => ({ method: m[1], path: m[2].replace(/[.,:;]+$/, '').replace(/\/$/, '') }));
}

/** A named path is the document's when each segment is equal, a `{param}` matching a `{param}` of any name. */
const samePath = (named: string, documented: string): boolean => {
  const a = named.split('/');
  const b = documented.split('/');
  return a.length === b.length && b.every((seg, i) => (seg.startsWith('{') ? a[i].startsWith('{') : seg === a[i]));
};

const toOpenApiPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Every file under dir (relative paths) with its text. */
const filesOf = (dir: string): Record<string, string> =>
  Object.fromEntries(
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => statSync(join(dir, f)).isFile())
      .sort()
      .map((f) => [f, readFileSync(join(dir, f), 'utf8')]),
  );

/**
 * The admin API's OpenAPI document (GET /admin/v1/openapi.json on the admin listener) against
 * what the listener serves and what docs/ says: a valid document, every admin route in it and
 * nothing else, every route of it named by the reference page and every admin route a page names
 * in it, the staff token required everywhere.
 */
describe('admin OpenAPI document and docs', () => {
  let t: TestApp;
  let doc: Doc;

  beforeAll(async () => {
    t = await startTestApp({ adminPort: 1 });
    const res = await request(adminServerOf(t.app)!).get('/admin/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.body as Doc;
  });
  afterAll(async () => t?.close());

  const documented = () => Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op })));

  it('is a valid OpenAPI 3 document with a unique operationId per operation', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
    const ids = documented().map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('holds every admin route the listener serves, and nothing else (its own document and page aside)', () => {
    const routes = servedRoutes(t.app.getHttpAdapter().getInstance() as Express).filter((r) => r.path.startsWith('/admin/v1/'));
    const served = routes
      .flatMap((r) => r.methods.map((m) => `${m} ${toOpenApiPath(r.path)}`))
      .filter((r) => r !== 'GET /admin/v1/openapi.json' && r !== 'GET /admin/v1/docs')
      .sort();
    const inDocument = documented().filter((o) => o.method !== 'HEAD').map((o) => `${o.method} ${o.path}`).sort();
    expect(inDocument).toEqual(served);
    expect(served).toEqual(expect.arrayContaining(['GET /admin/v1/regions', 'PATCH /admin/v1/regions/{id}', 'PATCH /admin/v1/zones/{id}', 'PATCH /admin/v1/regions/{id}/prices',
      'POST /admin/v1/servers/{id}/extend-retention', 'POST /admin/v1/volumes/{id}/extend-retention']));
  });

  it('requires the staff token on every operation; the routes about one organization or its resources declare X-Justification, the catalog routes do not', () => {
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['staff-token']);
    for (const { method, path, op } of documented()) {
      expect([`${method} ${path}`, op.security]).toEqual([`${method} ${path}`, [{ 'staff-token': [] }]]);
      const justified = op.parameters?.some((p) => p.in === 'header' && p.name === 'X-Justification' && p.required === true) ?? false;
      const aboutOne = path.startsWith('/admin/v1/organizations/{id}') || /^\/admin\/v1\/(servers|volumes)\/\{id\}\//.test(path);
      if (aboutOne) expect([`${method} ${path}`, justified]).toEqual([`${method} ${path}`, true]);
      if (path === '/admin/v1/regions' || path.startsWith('/admin/v1/regions/') || path.startsWith('/admin/v1/zones/')) expect([`${method} ${path}`, justified]).toEqual([`${method} ${path}`, false]);
    }
  });

  it(`${REFERENCE} names every route of the document, and every admin route a page names is in it (the document and its page aside)`, () => {
    const named = adminRoutesNamed(readFileSync(join(ROOT, REFERENCE), 'utf8'));
    const unnamed = documented()
      .filter((d) => d.method !== 'HEAD')
      .filter((d) => !named.some((r) => r.method === d.method && samePath(r.path, d.path)))
      .map((d) => `${d.method} ${d.path}`);
    expect(unnamed).toEqual([]);
    const unknown = docPages().flatMap((page) =>
      adminRoutesNamed(readFileSync(join(ROOT, page), 'utf8'))
        .filter((r) => !(r.method === 'GET' && ['/admin/v1/openapi.json', '/admin/v1/docs'].includes(r.path)))
        .filter((r) => !documented().some((d) => d.method === r.method && samePath(r.path, d.path)))
        .map((r) => `${page}: ${r.method} ${r.path}`),
    );
    expect(unknown).toEqual([]);
  });

  it('is the document the generated admin client (test/support/admin-client) was made from, and the client is what the generator makes of it today (npm run admin:client)', () => {
    const CLIENT = join(ROOT, 'test/support/admin-client');
    expect(JSON.parse(readFileSync(join(CLIENT, 'openapi.json'), 'utf8'))).toEqual(doc);
    const out = mkdtempSync(join(tmpdir(), 'cds-admin-client-'));
    try {
      const run = spawnSync(process.execPath, ['node_modules/@hey-api/openapi-ts/bin/run.js', '-f', 'test/support/admin-client/openapi-ts.config.mjs'], {
        cwd: ROOT,
        env: { ...process.env, ADMIN_CLIENT_OUTPUT: out },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect([run.status, run.stderr]).toEqual([0, '']);
      expect(filesOf(out)).toEqual(filesOf(join(CLIENT, 'generated')));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
