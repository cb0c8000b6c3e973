import { loadSettings } from '../../src/shared/config/settings';
import { MetricsServer } from '../../src/shared/observability/metrics-server';
import { TestApp, startTestApp } from '../support/test-app';

/** The metrics endpoint listened on every interface the API did; it is loopback-only unless METRICS_HOST opens it. */
describe('metrics binding', () => {
  let t: TestApp;

  beforeAll(async () => {
    // The API on every interface, as a deployment would run it; the metrics setting left at its default.
    const { metricsHost } = loadSettings({ NODE_ENV: 'test' });
    t = await startTestApp({ host: '0.0.0.0', metricsHost });
  });
  afterAll(async () => t?.close());

  it('listens on 127.0.0.1 by default, whatever HOST is, and serves /metrics there', async () => {
    expect(loadSettings({ NODE_ENV: 'test' }).metricsHost).toBe('127.0.0.1');
    expect(loadSettings({ NODE_ENV: 'test', METRICS_HOST: '0.0.0.0' }).metricsHost).toBe('0.0.0.0');
    const server = t.app.get(MetricsServer);
    expect(server.boundAddress()).toBe('127.0.0.1');
    const res = await fetch(`http://127.0.0.1:${server.port()}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^# HELP /m);
  });
});
