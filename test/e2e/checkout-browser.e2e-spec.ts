import { existsSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo, createServer } from 'node:net';
import { Browser, chromium } from 'playwright-core';
import { bearer } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * The hosted checkout in a real browser (Chromium driven by playwright-core): a customer signs
 * up through the API, creates a top-up, opens checkout_url, reads the amount, clicks Pay (or
 * Cancel), lands on return_url, and the wallet is credited (or not); an expired session shows
 * its status and no button. Chromium: CHROMIUM_PATH, else Debian's /usr/bin/chromium (CI
 * installs it); skipped with the reason printed only when none is found.
 */
const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => !!p);
const executablePath = CANDIDATES.find((p) => existsSync(p));
if (!executablePath) console.log(`checkout-browser: skipped, no Chromium found (looked at ${CANDIDATES.join(', ')}; apt-get install chromium)`);
const describeWithBrowser = executablePath ? describe : describe.skip;

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

describeWithBrowser('the hosted checkout in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let shop: http.Server;
  let shopUrl: string;
  let token: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({ port, publicBaseUrl: base });
    await t.app.listen(port, '127.0.0.1');
    // The customer's own site, where return_url points.
    shop = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>Shop</title><p id="back">Back at the shop: ${new URL(req.url ?? '/', 'http://x').search.replace(/[<>&"]/g, '')}</p>`);
    });
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}/billing`;
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    const signup = await fetch(`${base}/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'buyer@browser.test', password: 'correct horse battery', organization_name: 'Browser Buyer' }),
    });
    expect(signup.status).toBe(201);
    token = ((await signup.json()) as { token: string }).token;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => shop?.close(r));
    await t?.close();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...bearer(token), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const usdAvailable = async () => ((await api('GET', '/v1/wallet')).body.balances as { currency: string; available: string }[]).find((b) => b.currency === 'USD')!.available;

  it('Pay: the page shows the amount; after the click the browser is back at return_url and the wallet is credited', async () => {
    expect(await usdAvailable()).toBe('0.00000');
    const created = await api('POST', '/v1/wallet/top-ups', { amount: '25.00', currency: 'USD', return_url: shopUrl });
    expect(created.status).toBe(201);
    const topUp = created.body.top_up;
    const page = await browser.newPage();
    const shown = await page.goto(topUp.checkout_url);
    expect(shown?.status()).toBe(200);
    expect(await page.textContent('#amount')).toBe('25.00000');
    expect(await page.textContent('#currency')).toBe('USD');
    expect(await page.textContent('#status')).toBe('open');
    await Promise.all([page.waitForURL((url) => url.toString().startsWith(shopUrl)), page.click('#pay')]);
    expect(page.url()).toBe(`${shopUrl}?top_up_id=${topUp.id}&checkout=paid`);
    expect(await page.textContent('#back')).toContain('checkout=paid');
    expect(await usdAvailable()).toBe('25.00000');
    expect((await api('GET', `/v1/wallet/top-ups/${topUp.id}`)).body).toMatchObject({ status: 'succeeded', checkout_url: null });
    // Back to the page: paid, no buttons.
    await page.goto(topUp.checkout_url);
    expect(await page.textContent('#status')).toBe('paid');
    expect(await page.$('#pay')).toBeNull();
    await page.close();
  }, 60_000);

  it('Cancel: back at return_url with checkout=canceled, nothing credited, the top-up canceled', async () => {
    const before = await usdAvailable();
    const created = await api('POST', '/v1/wallet/top-ups', { amount: '7.50', currency: 'USD', return_url: shopUrl });
    const topUp = created.body.top_up;
    const page = await browser.newPage();
    await page.goto(topUp.checkout_url);
    expect(await page.textContent('#amount')).toBe('7.50000');
    await Promise.all([page.waitForURL((url) => url.toString().startsWith(shopUrl)), page.click('#cancel')]);
    expect(page.url()).toBe(`${shopUrl}?top_up_id=${topUp.id}&checkout=canceled`);
    expect(await usdAvailable()).toBe(before);
    expect((await api('GET', `/v1/wallet/top-ups/${topUp.id}`)).body).toMatchObject({ status: 'canceled' });
    await page.close();
  }, 60_000);

  it('an expired session shows expired and no button', async () => {
    const created = await api('POST', '/v1/wallet/top-ups', { amount: '150000', currency: 'IDR' });
    const topUp = created.body.top_up;
    await t.sql(`UPDATE sim_checkout_sessions SET expires_at = now() - interval '1 second' WHERE top_up_id = $1`, [topUp.id]);
    const page = await browser.newPage();
    await page.goto(topUp.checkout_url);
    expect(await page.textContent('#amount')).toBe('150000');
    expect(await page.textContent('#currency')).toBe('IDR');
    expect(await page.textContent('#status')).toBe('expired');
    expect(await page.$('button')).toBeNull();
    await page.close();
  }, 60_000);
});
