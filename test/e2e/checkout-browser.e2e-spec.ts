import { scaled } from '../support/deadlines';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { Browser, Page, chromium } from 'playwright-core';
import { bearer } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * The hosted checkout in a real browser (Chromium driven by playwright-core): a customer signs
 * up through the API, creates a top-up, opens checkout_url, reads the amount, clicks Pay (or
 * Cancel), lands on return_url, and the wallet is credited (or not); an expired session shows
 * its status and no button. Every state (open, paid, canceled, expired) is checked by its texts
 * and photographed at a desktop and a phone width into test-output/checkout/ (git-ignored;
 * CHECKOUT_SCREENSHOTS_DIR overrides), where nothing may be wider than the phone's screen.
 * Chromium: CHROMIUM_PATH, else Debian's /usr/bin/chromium (CI installs it); skipped with the
 * reason printed only when none is found.
 */
const SHOTS = process.env.CHECKOUT_SCREENSHOTS_DIR ?? join(__dirname, '..', '..', 'test-output', 'checkout');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 375, height: 667 };
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
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    const signup = await fetch(`${base}/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'buyer@browser.test', password: 'correct horse battery', organization_name: 'Browser Buyer' }),
    });
    expect(signup.status).toBe(201);
    token = ((await signup.json()) as { token: string }).token;
  }, scaled(60_000));
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
  /**
   * A full-page PNG of the page at the desktop and at the phone width (`<state>-desktop.png`,
   * `<state>-phone.png`); at the phone width nothing overflows the screen and the buttons and
   * links of .actions span the card.
   */
  const photograph = async (page: Page, state: string) => {
    await page.setViewportSize(DESKTOP);
    await page.screenshot({ path: join(SHOTS, `${state}-desktop.png`), fullPage: true });
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: join(SHOTS, `${state}-phone.png`), fullPage: true });
    // A string (the test's TypeScript has no DOM types); run by the browser, not subject to the page's CSP.
    const widths = (await page.evaluate(`(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
      actions: [...document.querySelectorAll('.actions button, .actions a')].map((e) => Math.round(e.getBoundingClientRect().width)),
      card: Math.round(document.querySelector('.card').getBoundingClientRect().width),
    }))()`)) as { scroll: number; client: number; actions: number[]; card: number };
    expect(widths.scroll).toBeLessThanOrEqual(widths.client);
    for (const w of widths.actions) expect(w).toBeGreaterThan(widths.card * 0.7);
    await page.setViewportSize(DESKTOP);
    for (const size of ['desktop', 'phone']) {
      const png = readFileSync(join(SHOTS, `${state}-${size}.png`));
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      expect(statSync(join(SHOTS, `${state}-${size}.png`)).size).toBeGreaterThan(5_000);
    }
  };
  const text = async (page: Page, selector: string) => (await page.textContent(selector))?.replace(/\s+/g, ' ').trim();

  const usdAvailable = async () => ((await api('GET', '/v1/wallet')).body.balances as { currency: string; available: string }[]).find((b) => b.currency === 'USD')!.available;

  it('Pay: the page names the organization, the amount ($25.00) and the reference; after the click the browser is back at return_url, the wallet credited; the paid page links back', async () => {
    expect(await usdAvailable()).toBe('0.00000');
    const created = await api('POST', '/v1/wallet/top-ups', { amount: '25.00', currency: 'USD', return_url: shopUrl });
    expect(created.status).toBe(201);
    const topUp = created.body.top_up;
    const page = await browser.newPage({ viewport: DESKTOP });
    const shown = await page.goto(topUp.checkout_url);
    expect(shown?.status()).toBe(200);
    expect(await page.title()).toBe('Wallet top-up · Cloud Disk Service');
    expect(await text(page, '.merchant')).toBe('Cloud Disk Service');
    expect(await text(page, '#title')).toBe('Top up the wallet of Browser Buyer');
    expect(await text(page, '#amount')).toBe('$25.00');
    expect(await page.getAttribute('#amount', 'data-value')).toBe('25.00000');
    expect(await text(page, '#currency')).toBe('USD');
    expect(await text(page, '#organization')).toBe('Browser Buyer');
    expect(await text(page, '#reference')).toBe(topUp.id);
    expect(await text(page, '#status')).toBe('open');
    expect(await text(page, '#expires')).toMatch(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC$/);
    expect(await text(page, '#pay')).toBe('Pay $25.00');
    expect(await text(page, '#cancel')).toBe('Cancel');
    await photograph(page, 'open');
    await Promise.all([page.waitForURL((url) => url.toString().startsWith(shopUrl)), page.click('#pay')]);
    expect(page.url()).toBe(`${shopUrl}?top_up_id=${topUp.id}&checkout=paid`);
    expect(await page.textContent('#back')).toContain('checkout=paid');
    expect(await usdAvailable()).toBe('25.00000');
    expect((await api('GET', `/v1/wallet/top-ups/${topUp.id}`)).body).toMatchObject({ status: 'succeeded', checkout_url: null });
    // Back to the page: the success page, no buttons, a link back to the shop.
    await page.goto(topUp.checkout_url);
    expect(await page.title()).toBe('Payment received · Cloud Disk Service');
    expect(await text(page, '#title')).toBe('Payment received');
    expect(await text(page, '#message')).toBe(
      'Thank you. $25.00 is being added to the wallet of Browser Buyer; it shows in the wallet within a minute. Keep the reference for your records.',
    );
    expect(await text(page, '#amount')).toBe('$25.00');
    expect(await text(page, '#reference')).toBe(topUp.id);
    expect(await text(page, '#status')).toBe('paid');
    expect(await page.$('button')).toBeNull();
    expect(await page.getAttribute('#back', 'href')).toBe(`${shopUrl}?top_up_id=${topUp.id}&checkout=paid`);
    expect(await text(page, '#back')).toBe(`Return to ${new URL(shopUrl).host}`);
    await photograph(page, 'paid');
    await Promise.all([page.waitForURL((url) => url.toString().startsWith(shopUrl)), page.click('#back')]);
    expect(page.url()).toBe(`${shopUrl}?top_up_id=${topUp.id}&checkout=paid`);
    // Pay again (a second tab, a replayed form): 409 with the paid page, nothing credited twice.
    const again = await fetch(`${topUp.checkout_url}/pay`, { method: 'POST' });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('<h1 id="title" class="ok">Payment received</h1>');
    expect(await usdAvailable()).toBe('25.00000');
    await page.close();
  }, scaled(90_000));

  it('Cancel: back at return_url with checkout=canceled, nothing credited, the top-up canceled; the canceled page says what to do', async () => {
    const before = await usdAvailable();
    const created = await api('POST', '/v1/wallet/top-ups', { amount: '1250.50', currency: 'USD', return_url: shopUrl });
    const topUp = created.body.top_up;
    const page = await browser.newPage({ viewport: DESKTOP });
    await page.goto(topUp.checkout_url);
    expect(await text(page, '#amount')).toBe('$1,250.50');
    await Promise.all([page.waitForURL((url) => url.toString().startsWith(shopUrl)), page.click('#cancel')]);
    expect(page.url()).toBe(`${shopUrl}?top_up_id=${topUp.id}&checkout=canceled`);
    expect(await usdAvailable()).toBe(before);
    expect((await api('GET', `/v1/wallet/top-ups/${topUp.id}`)).body).toMatchObject({ status: 'canceled' });
    await page.goto(topUp.checkout_url);
    expect(await text(page, '#title')).toBe('Payment canceled');
    expect(await text(page, '#message')).toBe('Nothing was charged. To add funds, start a new top-up from your account (this checkout cannot be used again).');
    expect(await text(page, '#amount')).toBe('$1,250.50');
    expect(await text(page, '#reference')).toBe(topUp.id);
    expect(await text(page, '#status')).toBe('canceled');
    expect(await page.$('button')).toBeNull();
    expect(await page.getAttribute('#back', 'href')).toBe(`${shopUrl}?top_up_id=${topUp.id}&checkout=canceled`);
    await photograph(page, 'canceled');
    await page.close();
  }, scaled(90_000));

  it('an expired session: amount in rupiah (Rp 150.000), what to do, no button, no link without return_url', async () => {
    const created = await api('POST', '/v1/wallet/top-ups', { amount: '150000', currency: 'IDR' });
    const topUp = created.body.top_up;
    await t.sql(`UPDATE sim_checkout_sessions SET expires_at = now() - interval '1 second' WHERE top_up_id = $1`, [topUp.id]);
    const page = await browser.newPage({ viewport: DESKTOP });
    await page.goto(topUp.checkout_url);
    expect(await page.title()).toBe('Checkout expired · Cloud Disk Service');
    expect(await text(page, '#title')).toBe('This checkout has expired');
    expect(await text(page, '#message')).toMatch(
      /^Nothing was charged\. The time to pay ran out at \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC; start a new top-up from your account to add funds\.$/,
    );
    expect(await text(page, '#amount')).toBe('Rp 150.000');
    expect(await page.getAttribute('#amount', 'data-value')).toBe('150000');
    expect(await text(page, '#currency')).toBe('IDR');
    expect(await text(page, '#organization')).toBe('Browser Buyer');
    expect(await text(page, '#reference')).toBe(topUp.id);
    expect(await text(page, '#status')).toBe('expired');
    expect(await page.$('button')).toBeNull();
    expect(await page.$('#back')).toBeNull();
    await photograph(page, 'expired');
    await page.close();
    const states = ['open', 'paid', 'canceled', 'expired'];
    expect(states.flatMap((s) => ['desktop', 'phone'].map((w) => existsSync(join(SHOTS, `${s}-${w}.png`))))).toEqual(Array(8).fill(true));
  }, scaled(90_000));
});
