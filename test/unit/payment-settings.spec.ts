import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../../src/shared/config/settings';
import { scaled } from '../support/deadlines';
import { ROOT } from '../support/processes';

/** Server secrets a production process is given here (other settings' rules, not these tests' subject). */
const SERVER_SECRETS = { IDEMPOTENCY_SECRET: 'i'.repeat(32), WEBHOOK_SECRETS_KEY: 'w'.repeat(32), DEPLOYMENT_SECRETS_KEY: 'd'.repeat(32) };
const KEY = 'sk_live_51AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
const WHSEC = 'whsec_AbCdEfGhIjKlMnOpQrStUvWxYz012345';
const STRIPE = { PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: KEY, STRIPE_WEBHOOK_SECRET: WHSEC };
const PRODUCTION = { NODE_ENV: 'production', ...SERVER_SECRETS, PUBLIC_BASE_URL: 'https://cloud.example.com' };

const refusal = (env: NodeJS.ProcessEnv): string => {
  try {
    loadSettings(env);
  } catch (err) {
    return (err as Error).message;
  }
  return '';
};

describe('payment provider settings', () => {
  it('PAYMENT_PROVIDER: simulated by default, off by default in production; stripe with its secrets anywhere; simulated refused in production', () => {
    expect(loadSettings({}).paymentProvider).toBe('simulated');
    expect(loadSettings({ ...PRODUCTION }).paymentProvider).toBe('off');
    expect(loadSettings({ ...PRODUCTION, PAYMENT_PROVIDER: 'off' }).paymentProvider).toBe('off');
    const s = loadSettings({ ...PRODUCTION, ...STRIPE, STRIPE_API_URL: 'http://127.0.0.1:12111/', STRIPE_TIMEOUT_MS: '2000' });
    expect([s.paymentProvider, s.stripeSecretKey, s.stripeWebhookSecret, s.stripeApiUrl, s.stripeTimeoutMs]).toEqual(['stripe', KEY, WHSEC, 'http://127.0.0.1:12111', 2000]);
    expect(loadSettings({ NODE_ENV: 'test', ...STRIPE }).paymentProvider).toBe('stripe');
    expect(loadSettings({}).stripeTimeoutMs).toBe(10_000);
    expect(refusal({ ...PRODUCTION, PAYMENT_PROVIDER: 'simulated' })).toMatch(/^Setting PAYMENT_PROVIDER=simulated is refused under NODE_ENV=production: its checkout page credits any wallet without a payment/);
    expect(refusal({ PAYMENT_PROVIDER: 'paypal' })).toBe('Setting PAYMENT_PROVIDER must be simulated, stripe or off, got "paypal"');
  });

  it('stripe names each secret missing (never a value), refuses keys of the wrong kind, and in production wants PUBLIC_BASE_URL', () => {
    expect(refusal({ PAYMENT_PROVIDER: 'stripe' })).toBe(
      'PAYMENT_PROVIDER=stripe requires these settings: STRIPE_SECRET_KEY (the secret API key of the Stripe account, sk_live_… (or sk_test_… in test mode, or a restricted rk_… key)); ' +
        'STRIPE_WEBHOOK_SECRET (the signing secret of the webhook endpoint registered at Stripe, whsec_…)',
    );
    const noWebhook = refusal({ ...PRODUCTION, ...STRIPE, STRIPE_WEBHOOK_SECRET: '' });
    expect(noWebhook).toMatch(/^PAYMENT_PROVIDER=stripe requires these settings: STRIPE_WEBHOOK_SECRET \(/);
    expect(noWebhook).not.toContain('STRIPE_SECRET_KEY');
    expect(noWebhook).not.toContain(KEY);
    const publishable = refusal({ ...STRIPE, STRIPE_SECRET_KEY: 'pk_live_51AbCdEf' });
    expect(publishable).toBe('Setting STRIPE_SECRET_KEY must be a Stripe secret key: sk_live_…, sk_test_…, rk_live_… or rk_test_…');
    expect(refusal({ ...STRIPE, STRIPE_WEBHOOK_SECRET: KEY })).toBe('Setting STRIPE_WEBHOOK_SECRET must be the webhook signing secret Stripe shows for the endpoint: whsec_…');
    expect(refusal({ ...PRODUCTION, ...STRIPE, PUBLIC_BASE_URL: '' })).toMatch(/^PAYMENT_PROVIDER=stripe requires PUBLIC_BASE_URL under NODE_ENV=production/);
    expect(refusal({ ...STRIPE, STRIPE_API_URL: 'http://127.0.0.1:12111/v1' })).toBe('Setting STRIPE_API_URL must be an absolute http(s) URL such as http://127.0.0.1:12111, got "http://127.0.0.1:12111/v1"');
    // The other providers leave the Stripe settings unread.
    expect(loadSettings({ STRIPE_SECRET_KEY: 'anything' }).paymentProvider).toBe('simulated');
  });

  it('a production start exits 1 naming what is wrong, before it opens a database or a port: stripe without its keys, simulated, and without the server secrets', async () => {
    const built = join(ROOT, 'dist/src/main.js');
    if (!existsSync(built)) spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT });
    const dir = mkdtempSync(join(tmpdir(), 'cds-payment-settings-'));
    // Both starts at once (each loads the whole application before it reads its settings).
    const start = (name: string, env: Record<string, string>) =>
      new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [built], { cwd: dir, env: { PATH: process.env.PATH, ...PRODUCTION, DATA_DIR: join(dir, name), PORT: '0', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
        // A server that started anyway is killed outright.
        // (Three starts at once load the whole application each: on a loaded machine that takes
        // more than 30 s, so the bound stretches with the load.)
        const kill = setTimeout(() => child.kill('SIGKILL'), scaled(30_000));
        child.on('close', (status) => {
          clearTimeout(kill);
          resolve({ status, stderr });
        });
      });
    try {
      const [stripe, simulated, unsealed] = await Promise.all([
        start('stripe', { PAYMENT_PROVIDER: 'stripe' }),
        start('simulated', { PAYMENT_PROVIDER: 'simulated' }),
        // Without the server secrets, whose public fallbacks would let a database dump open what they seal.
        start('unsealed', { PAYMENT_PROVIDER: 'off', WEBHOOK_SECRETS_KEY: '', DEPLOYMENT_SECRETS_KEY: '', IDEMPOTENCY_SECRET: '' }),
      ]);
      expect(stripe.status).toBe(1);
      expect(stripe.stderr).toMatch(/^Failed to start: PAYMENT_PROVIDER=stripe requires these settings: STRIPE_SECRET_KEY \(.*\); STRIPE_WEBHOOK_SECRET \(/);
      expect(simulated.status).toBe(1);
      expect(simulated.stderr).toMatch(/^Failed to start: Setting PAYMENT_PROVIDER=simulated is refused under NODE_ENV=production/);
      expect(unsealed.status).toBe(1);
      expect(unsealed.stderr).toMatch(/^Failed to start: NODE_ENV=production requires these settings \(.*\): WEBHOOK_SECRETS_KEY \(.*\); DEPLOYMENT_SECRETS_KEY \(.*\); IDEMPOTENCY_SECRET \(/);
      expect([existsSync(join(dir, 'stripe')), existsSync(join(dir, 'simulated')), existsSync(join(dir, 'unsealed'))]).toEqual([false, false, false]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
