import fc from 'fast-check';
import { StaffAccounts } from '../../src/modules/admin/application/staff.use-cases';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { openAdminListener } from '../support/admin-client';
import { scaled } from '../support/deadlines';
import { apiToken, organization } from '../support/fixtures';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';
import { BodySpec, DocOperation, OpenApiDoc, RequestSpec as BaseRequestSpec, bodyBytes, bodySpec, encodeParam, hugeOrText, nastyString, operationsOf, paramText, validValue } from './openapi-arbitraries';
import { envelopeProblem } from './envelope';
import { RawRequest, RawResponse, sendRaw } from './raw-http';

/**
 * Fuzz suite of the admin API: requests generated from the admin listener's own OpenAPI document
 * (GET /admin/v1/openapi.json, every admin route whatever was added since), valid and broken, sent
 * with the staff token of any role (or none, or a customer's), with or without X-Justification and
 * Idempotency-Key. Every answer must be the error envelope or a documented success, never a 5xx,
 * within 1 s (stretched by the machine's load); and afterwards the money and capacity invariants
 * still hold (`cli verify`'s checks). The staff members whose tokens send the requests are not in
 * the pool of ids the requests name, so a generated DELETE of a staff member never mutes the run.
 *
 * ADMIN_FUZZ_RUNS requests (default 3,000, 5 at a time), FUZZ_SEED (default fixed, so CI replays
 * the same requests). A failure prints the request to replay it.
 */
const RUNS = Number(process.env.ADMIN_FUZZ_RUNS ?? 3000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261128);
const BATCH = 5;
const LIMIT_MS = scaled(1000);
const ROLES = ['superadmin', 'support', 'billing', 'operator'] as const;

type AuthKind = (typeof ROLES)[number] | 'none' | 'customer' | 'garbage';

type RequestSpec = BaseRequestSpec<AuthKind>;
const text = paramText;
const encode = (v: string): string => encodeParam(v);

describe('fuzz: admin requests generated from the admin OpenAPI document', () => {
  let t: TestApp;
  let port: number;
  let ops: DocOperation[];
  let idPool: string[];
  const tokens = {} as Record<(typeof ROLES)[number], string>;
  const counts = { requests: 0, byStatus: new Map<number, number>(), byRoute: new Map<number, number>(), retriedSlow: 0 };

  beforeAll(async () => {
    t = await startTestApp({ adminPort: 1, rateLimitPerMinute: 1_000_000, adminRateLimitPerMinute: 1_000_000 });
    const seeded = await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 64)],
      organizations: [organization('afa'), organization('afb')],
    });
    const accounts = t.app.get(StaffAccounts);
    for (const role of ROLES) tokens[role] = (await accounts.create({ email: `${role}@fuzz.test`, name: `Fuzz ${role}`, role })).token;
    // Staff members the requests may name (and disable, or revoke the tokens of): not the ones sending them.
    const victims = [];
    for (const role of ROLES) victims.push((await accounts.create({ email: `victim-${role}@fuzz.test`, name: `Victim ${role}`, role })).staff.id);
    const orgs = seeded.organizations.flatMap((o) => [o.id, ...o.servers, ...o.volumes]);
    const ops0 = (await t.sql<{ id: string }>('SELECT id FROM operations')).map((r) => r.id);
    idPool = [...victims, ...orgs, ...ops0, 'id-jkt', 'id-jkt-a', 'id-jkt-b', 'top_missing000000000000000'];
    port = await openAdminListener(t);
    const doc = JSON.parse((await sendRaw(port, { method: 'GET', target: '/admin/v1/openapi.json', headers: [] })).body.toString('utf8')) as OpenApiDoc;
    ops = operationsOf(doc);
  }, scaled(120_000));
  afterAll(async () => t?.close());

  function requestArb(): fc.Arbitrary<RequestSpec> {
    const ids = fc.constantFrom(...idPool);
    return fc.integer({ min: 0, max: ops.length - 1 }).chain((i) => {
      const op = ops[i];
      const of = (where: string) => op.parameters.filter((p) => p.in === where);
      const param = (schema: DocOperation['parameters'][number]['schema']) =>
        fc.oneof({ weight: 3, arbitrary: validValue(schema) }, { weight: 4, arbitrary: ids }, { weight: 1, arbitrary: nastyString });
      const header = (name: string, schema: DocOperation['parameters'][number]['schema']) =>
        /justification/i.test(name)
          ? fc.oneof({ weight: 4, arbitrary: fc.constant('FUZZ-1') }, { weight: 1, arbitrary: nastyString })
          : /idempotency/i.test(name)
            ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom('k1', 'k2', 'k3') }, { weight: 1, arbitrary: nastyString })
            : param(schema);
      return fc.record({
        op: fc.constant(i),
        method: fc.oneof({ weight: 12, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD') }),
        pathValues: fc.record(Object.fromEntries(of('path').map((p) => [p.name, param(p.schema).map((v) => hugeOrText(v))]))),
        pathSuffix: fc.constantFrom('', '', '', '', '', '/', '/x', '%00'),
        query: fc.subarray(of('query')).chain((qs) => fc.tuple(...qs.map((p) => fc.tuple(fc.constant(p.name), param(p.schema))))),
        // The documented headers (the justification, the Idempotency-Key) most of the time, each one sometimes left out.
        headers: fc.subarray(of('header'), { minLength: Math.max(0, of('header').length - 1) }).chain((hs) =>
          fc.tuple(...hs.map((p) => fc.tuple(fc.constant(p.name), header(p.name, p.schema).map((v) => hugeOrText(v))))),
        ),
        auth: fc.constantFrom<AuthKind>('superadmin', 'superadmin', 'support', 'billing', 'operator', 'operator', 'none', 'customer', 'garbage'),
        contentType: fc.constantFrom('application/json', 'application/json', 'application/json', 'text/plain', null),
        body: op.method === 'GET' ? fc.constant<BodySpec>({ kind: 'none' }) : fc.oneof({ weight: 2, arbitrary: validValue(op.body).map((value): BodySpec => ({ kind: 'json', value })) }, { weight: 3, arbitrary: bodySpec(op.body) }),
      });
    });
  }

  function build(spec: RequestSpec): RawRequest {
    const op = ops[spec.op];
    let path = op.path;
    for (const [name, value] of Object.entries(spec.pathValues)) path = path.replace(`{${name}}`, encode(text(value)));
    const query = spec.query.map(([k, v]) => `${encode(k)}=${encode(text(v))}`).join('&');
    const headers: [string, string][] = [];
    const auth = ROLES.includes(spec.auth as (typeof ROLES)[number])
      ? `Bearer ${tokens[spec.auth as (typeof ROLES)[number]]}`
      : spec.auth === 'customer'
        ? `Bearer ${apiToken('afa', 'rw')}`
        : spec.auth === 'garbage'
          ? 'Bearer cds_staff_'
          : undefined;
    if (auth) headers.push(['Authorization', auth]);
    if (spec.contentType && spec.body.kind !== 'none') headers.push(['Content-Type', spec.contentType]);
    if (spec.body.kind === 'compressed') headers.push(['Content-Encoding', spec.body.encoding]);
    for (const [k, v] of spec.headers) headers.push([k, text(v)]);
    return { method: spec.method, target: path + spec.pathSuffix + (query ? `?${query}` : ''), headers, body: bodyBytes(spec.body) };
  }

  function problem(spec: RequestSpec, res: RawResponse): string | undefined {
    const op = ops[spec.op];
    if (res.status >= 500) return `5xx: ${res.status} ${res.body.toString('utf8', 0, 500)}`;
    if (res.ms > LIMIT_MS) return `answered in ${Math.round(res.ms)} ms (limit ${LIMIT_MS})`;
    if (!res.headers['x-request-id']) return `${res.status} without X-Request-Id`;
    const asMethod = spec.method === 'HEAD' ? 'GET' : spec.method;
    const served = asMethod === op.method ? op : ops.find((o) => o.path === op.path && o.method === asMethod);
    if (spec.method === 'HEAD') return undefined;
    if (res.status < 400) {
      if (!served || !served.responses.includes(String(res.status))) return `undocumented success ${res.status} for ${spec.method} ${op.path}`;
      if (['none', 'customer', 'garbage'].includes(spec.auth)) return `success ${res.status} without a staff token`;
      return undefined;
    }
    return envelopeProblem(res);
  }

  it(`${RUNS} admin requests (seed ${SEED}): envelope or documented success, never a 5xx, within ${LIMIT_MS} ms; the invariants hold after`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb(), { minLength: BATCH, maxLength: BATCH }), async (specs) => {
        const answered = await Promise.all(specs.map(async (spec) => ({ spec, req: build(spec), res: await sendRaw(port, build(spec)) })));
        const problems: string[] = [];
        for (const a of answered) {
          let { res } = a;
          for (let retry = 0; retry < 3 && res.ms > LIMIT_MS && res.status < 500; retry++) {
            counts.retriedSlow += 1;
            const again = await sendRaw(port, a.req);
            res = again.ms < res.ms || again.status >= 500 ? again : res;
          }
          counts.requests += 1;
          counts.byRoute.set(a.spec.op, (counts.byRoute.get(a.spec.op) ?? 0) + 1);
          counts.byStatus.set(res.status, (counts.byStatus.get(res.status) ?? 0) + 1);
          const p = problem(a.spec, res);
          if (p) problems.push(`${p}\n  request: ${a.req.method} ${a.req.target.slice(0, 300)} headers ${JSON.stringify(a.req.headers).slice(0, 300)} body ${(a.req.body?.toString('utf8') ?? '').slice(0, 300)}`);
        }
        if (problems.length > 0) throw new Error(problems.join('\n'));
      }),
      { numRuns: Math.ceil(RUNS / BATCH), seed: SEED, endOnFailure: process.env.FUZZ_SHRINK !== '1' },
    );
    console.log(`admin fuzz: ${counts.requests} requests (seed ${SEED}); by status ${JSON.stringify(Object.fromEntries([...counts.byStatus].sort((a, b) => a[0] - b[0])))}; slow once then retried: ${counts.retriedSlow}`);
    expect(counts.requests).toBeGreaterThanOrEqual(RUNS);
    expect(ops.filter((_op, i) => !counts.byRoute.has(i)).map((op) => `${op.method} ${op.path}`)).toEqual([]);
    expect([...counts.byStatus.keys()].some((s) => s < 300)).toBe(true);
    expect([...counts.byStatus.keys()].filter((s) => s >= 400).length).toBeGreaterThanOrEqual(4);
    const report = await t.app.get(VerifyInvariants).execute();
    expect(report.violations).toEqual([]);
  }, Math.max(180_000, RUNS * 120));

  it('one unknown member in the body of every admin write route, sent by a superadmin with every header: 400 invalid_request naming it, nothing written', async () => {
    const tables = ['wallet_ledger', 'staff', 'staff_tokens', 'regions', 'zones', 'organizations'];
    const state = () => Promise.all(tables.map(async (table) => [table, (await t.sql<{ n: string }>(`SELECT md5(string_agg(x::text, ',' ORDER BY x::text)) AS n FROM ${table} x`))[0].n]));
    const before = await state();
    const bodyOps = ops.filter((op) => op.body);
    const answers: string[] = [];
    for (const op of bodyOps) {
      const target = op.path.replace(/\{[^}]+\}/g, (m) => (m === '{id}' && op.path.includes('/organizations/') ? 'org_afa' : 'x'));
      const res = await sendRaw(port, {
        method: op.method,
        target,
        headers: [['Authorization', `Bearer ${tokens.superadmin}`], ['Content-Type', 'application/json'], ['X-Justification', 'FUZZ-2'], ['Idempotency-Key', `unknown-${op.method}-${op.path}`]],
        body: Buffer.from('{"zz_unknown_member":1}'),
      });
      const field = (JSON.parse(res.body.toString('utf8')) as { error?: { details?: { field?: string } } }).error?.details?.field;
      answers.push(`${op.method} ${op.path} ${res.status} ${field}`);
    }
    expect(answers).toEqual(bodyOps.map((op) => `${op.method} ${op.path} 400 zz_unknown_member`));
    expect(answers.length).toBeGreaterThanOrEqual(10);
    expect(await state()).toEqual(before);
  });
});
