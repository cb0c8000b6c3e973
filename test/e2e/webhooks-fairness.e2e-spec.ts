import { WebhookDeliveriesOnScheduleCheck } from '../../src/modules/verification/infrastructure/webhook-deliveries-check';
import { WebhooksWorker } from '../../src/modules/webhooks/interface/worker/webhooks.worker';
import { Db } from '../../src/shared/database/transaction';
import { scaled } from '../support/deadlines';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { waitFor } from '../support/renewals';
import { TestApp, startTestApp } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';

const TIMEOUT_MS = 1000;
const SHARE = 8;

/**
 * Webhook delivery slots shared between organizations (webhooks.md "Delivery"): one
 * organization's 16 endpoints point at a receiver that accepts and never answers, with 128
 * pings queued; another organization's ping, sent after them, is claimed at once and delivered
 * within the timeout + 2 s, long before the hanging organization's backlog drains (claimed
 * oldest first it waited for 128 ÷ 16 timeouts). `cli verify`'s webhooks.deliveries_on_schedule
 * names a delivery starved that way, and not one waiting behind its own organization.
 * The in-process worker is woken by the test (WORKER_ENABLED=false keeps its timer off).
 */
describe('webhook delivery slots shared between organizations', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const hog = bearer(apiToken('wfh', 'hooks'));
  const other = bearer(apiToken('wfo', 'hooks'));
  const hogEndpoints: string[] = [];
  let otherEndpoint = '';

  const ping = async (key: { Authorization: string }, id: string): Promise<string> => {
    const res = await t.http.post(`/v1/webhook-endpoints/${id}/test`).set(key);
    expect(res.status).toBe(202);
    return res.body.delivery.id as string;
  };
  const queueHogPings = async (perEndpoint: number): Promise<void> => {
    for (let round = 0; round < perEndpoint; round++) await Promise.all(hogEndpoints.map((id) => ping(hog, id)));
  };
  const inFlight = async (org: string): Promise<number> =>
    (await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE e.org_id = $1 AND d.status = 'pending' AND d.locked_until >= now()`,
      [org],
    ))[0].n;
  const neverAttempted = async (org: string): Promise<number> =>
    (await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.org_id = $1 AND d.status = 'pending' AND d.attempts = 0`,
      [org],
    ))[0].n;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startTestApp({ webhookAllowPrivateUrls: true, webhookTimeoutMs: TIMEOUT_MS, webhookRetryScheduleS: [0, 3600], webhookConcurrency: 16, webhookConcurrencyPerOrganization: SHARE });
    const withHooks = (suffix: string) => {
      const org = organization(suffix, { servers: [], volumes: [] });
      return { ...org, api_keys: [{ name: 'hooks', scopes: ['webhooks:write'], token: apiToken(suffix, 'hooks') }] };
    };
    await t.seed({ regions: [region()], organizations: [withHooks('wfh'), withHooks('wfo')] });
    const created = await Promise.all(
      Array.from({ length: 16 }, (_, i) => {
        receiver.on(`/hang/${i}`, () => 'hang');
        return t.http.post('/v1/webhook-endpoints').set(hog).send({ url: receiver.url(`/hang/${i}`), events: ['*'] });
      }),
    );
    for (const res of created) {
      expect(res.status).toBe(201);
      hogEndpoints.push(res.body.webhook_endpoint.id);
    }
    const res = await t.http.post('/v1/webhook-endpoints').set(other).send({ url: receiver.url('/ok'), events: ['*'] });
    expect(res.status).toBe(201);
    otherEndpoint = res.body.webhook_endpoint.id;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('verify names a delivery due long while its organization held less than its share (starved), not one behind its own organization', async () => {
    await queueHogPings(1);
    const starved = await ping(other, otherEndpoint);
    // Another process holds the share of the hogging organization; every pending delivery has been due for a minute.
    await t.sql(
      `UPDATE webhook_deliveries SET locked_by = 'other-process', locked_until = now() + interval '1 minute'
        WHERE id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = ANY($1) ORDER BY id LIMIT ${SHARE})`,
      [hogEndpoints],
    );
    await t.sql(`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '60 seconds' WHERE status = 'pending'`);
    const check = new WebhookDeliveriesOnScheduleCheck(t.app.get(Db), t.settings);
    expect(check.dueWaitMs()).toBe(2 * TIMEOUT_MS + t.settings.workerIntervalMs + 5000);
    const findings = await check.findViolations();
    expect(findings).toEqual([
      {
        subject: starved,
        message: expect.stringMatching(
          new RegExp(`^delivery due since \\d{4}-.*Z has waited (59|60|61) s for a slot while its organization held 0 of its ${SHARE} and its endpoint 0 of 4: starved by other organizations' deliveries$`),
        ),
        details: { org_id: 'org_wfo', endpoint_id: otherEndpoint, attempts: 0, next_attempt_at: expect.any(String), waited_s: expect.any(Number) },
      },
    ]);
    // Once its organization holds its share, the hogging organization's own wait is on schedule; a delivery due a moment ago is too.
    await t.sql(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1`, [starved]);
    expect(await check.findViolations()).toEqual([]);
    await t.sql(`DELETE FROM webhook_deliveries`);
  });

  it("a hanging organization holds only its share: another organization's ping is delivered within the timeout + 2 s, before the backlog drains", async () => {
    await queueHogPings(8);
    expect(await neverAttempted('org_wfh')).toBe(128);
    const worker = t.app.get(WebhooksWorker);
    worker.wake();
    // The hanging organization takes its share of the 16 slots, and no more.
    await waitFor('the hanging organization to hold its share', async () => receiver.received.filter((r) => r.path.startsWith('/hang/')).length >= SHARE, 5000);
    expect(await inFlight('org_wfh')).toBe(SHARE);

    const sentAt = Date.now();
    const delivery = await ping(other, otherEndpoint);
    worker.wake();
    await waitFor('the other organization to get its ping', async () => receiver.at('/ok').length === 1, TIMEOUT_MS + 2000);
    const elapsed = Date.now() - sentAt;
    expect(elapsed).toBeLessThan(scaled(TIMEOUT_MS + 2000));
    // Claimed before the hanging organization's backlog drained: most of its pings have not been tried yet.
    expect(await neverAttempted('org_wfh')).toBeGreaterThan(128 - 3 * SHARE);
    expect(JSON.parse(receiver.at('/ok')[0].body)).toMatchObject({ type: 'ping', data: { endpoint_id: otherEndpoint } });
    await waitFor('the delivery to be recorded', async () => {
      const [row] = await t.sql<{ status: string; attempts: number }>(`SELECT status, attempts FROM webhook_deliveries WHERE id = $1`, [delivery]);
      return row.status === 'succeeded' && row.attempts === 1;
    }, 2000);
    expect(await inFlight('org_wfh')).toBeLessThanOrEqual(SHARE);
  });
});
