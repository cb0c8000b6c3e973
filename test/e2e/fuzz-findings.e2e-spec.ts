import { AddressInfo } from 'node:net';
import { sendRaw } from '../fuzz/raw-http';
import { apiToken, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/** Defects the fuzz suite found, one test each, as raw HTTP (clients that Node's own client would not be). */
describe('fuzz findings', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ regions: [region()], organizations: [organization('fz')] });
    await new Promise<void>((resolve) => t.app.getHttpServer().listen(0, '127.0.0.1', resolve));
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(async () => t?.close());

  it('an Expect header other than 100-continue: 417 with the error envelope and X-Request-Id (was a bare 417 from Node)', async () => {
    const res = await sendRaw(port, {
      method: 'POST',
      target: '/v1/volumes/vol_fzdata1/renew',
      headers: [['Authorization', `Bearer ${apiToken('fz', 'rw')}`], ['Content-Type', 'application/json'], ['Expect', 'something-else']],
      body: Buffer.from('{"term_months":1}'),
    });
    expect(res.status).toBe(417);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers.connection).toBe('close');
    expect(res.headers['x-request-id']).toMatch(/^req_[A-Za-z0-9]{20,}$/);
    expect(JSON.parse(res.body.toString())).toEqual({
      error: {
        code: 'invalid_request',
        message: 'Unsupported Expect header: only 100-continue is supported',
        request_id: res.headers['x-request-id'],
        details: { field: 'Expect' },
      },
    });
    // Nothing ran: no operation.
    expect(await t.sql(`SELECT count(*)::int AS n FROM operations`)).toEqual([{ n: 0 }]);
  });

  it('Expect: 100-continue still works: the request runs', async () => {
    const res = await sendRaw(port, {
      method: 'GET',
      target: '/v1/wallet',
      headers: [['Authorization', `Bearer ${apiToken('fz', 'rw')}`], ['Expect', '100-continue']],
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({
      balances: [
        { currency: 'USD', available: '100.00000', reserved: '0.00000' },
        { currency: 'IDR', available: '1500000', reserved: '0' },
      ],
    });
  });
});
