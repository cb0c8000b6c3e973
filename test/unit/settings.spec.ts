import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../../src/shared/config/settings';
import { ROOT } from '../support/processes';

/** A production process's server secrets (their own test below). */
const PRODUCTION = { NODE_ENV: 'production', IDEMPOTENCY_SECRET: 'i'.repeat(32), WEBHOOK_SECRETS_KEY: 'w'.repeat(32), DEPLOYMENT_SECRETS_KEY: 'd'.repeat(32) };

describe('settings (issue 9)', () => {
  describe('NODE_ENV=production requires WEBHOOK_SECRETS_KEY, DEPLOYMENT_SECRETS_KEY and IDEMPOTENCY_SECRET', () => {
    const refusal = (env: NodeJS.ProcessEnv): string => {
      try {
        loadSettings(env);
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    };
    it('names each one missing, never a value; each must be 32 characters or more; outside production none is required', () => {
      expect(refusal({ NODE_ENV: 'production' })).toBe(
        'NODE_ENV=production requires these settings (each at least 32 random characters, the same on every process): ' +
          "WEBHOOK_SECRETS_KEY (seals the webhook endpoints' signing secrets); DEPLOYMENT_SECRETS_KEY (seals the deployments' secret variables); " +
          'IDEMPOTENCY_SECRET (keys the fingerprints and seals the stored answers of idempotent requests)',
      );
      for (const name of ['WEBHOOK_SECRETS_KEY', 'DEPLOYMENT_SECRETS_KEY', 'IDEMPOTENCY_SECRET'] as const) {
        const message = refusal({ ...PRODUCTION, [name]: '' });
        expect(message).toMatch(new RegExp(`^NODE_ENV=production requires these settings \\(.*\\): ${name} \\([^)]*\\)$`));
        expect(refusal({ ...PRODUCTION, [name]: 'short-secret-value' })).toBe(`Setting ${name} must be at least 32 characters (a random string), got 18`);
      }
      expect(refusal(PRODUCTION)).toBe('');
      expect(refusal({})).toBe('');
      expect(refusal({ NODE_ENV: 'test' })).toBe('');
    });
  });

  describe('DEMO_SEED: the demo owner has a public password, so production starts without it unless asked', () => {
    it.each([
      [{}, true],
      [{ NODE_ENV: 'development' }, true],
      [{ ...PRODUCTION }, false],
      [{ NODE_ENV: 'test' }, false],
      [{ ...PRODUCTION, DEMO_SEED: 'true' }, true],
      [{ ...PRODUCTION, DEMO_SEED: '' }, false],
      [{ DEMO_SEED: 'false' }, false],
    ])('%j → demoSeed %s', (env, expected) => {
      expect(loadSettings(env).demoSeed).toBe(expected);
    });
  });

  describe('HOST: this machine only while the demo data (public password) may be loaded, every interface otherwise', () => {
    it.each([
      [{}, '127.0.0.1'],
      [{ DEMO_SEED: 'false' }, '0.0.0.0'],
      [{ ...PRODUCTION }, '0.0.0.0'],
      [{ ...PRODUCTION, DEMO_SEED: 'true' }, '127.0.0.1'],
      [{ HOST: '0.0.0.0' }, '0.0.0.0'],
      [{ HOST: '' }, '127.0.0.1'],
      [{ ...PRODUCTION, HOST: '10.0.0.5' }, '10.0.0.5'],
    ])('%j → host %s', (env, expected) => {
      expect(loadSettings(env).host).toBe(expected);
    });
  });

  describe('.env: read with Node\'s loader; the environment wins over the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cds-dotenv-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    // In a Node process of its own: jest gives each test file a copy of process.env, which Node's loader does not write.
    const run = (path: string): { loaded: boolean; fromFile?: string; both?: string } => {
      const built = join(ROOT, 'dist/src/shared/config/dot-env.js');
      if (!existsSync(built)) spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT });
      const script = `const { loadDotEnv } = require(${JSON.stringify(built)});
        const loaded = loadDotEnv(${JSON.stringify(path)});
        console.log(JSON.stringify({ loaded, fromFile: process.env.CDS_DOTENV_FROM_FILE, both: process.env.CDS_DOTENV_BOTH }));`;
      const r = spawnSync(process.execPath, ['-e', script], {
        env: { PATH: process.env.PATH, CDS_DOTENV_BOTH: 'environment' },
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(r.stderr);
      return JSON.parse(r.stdout) as { loaded: boolean; fromFile?: string; both?: string };
    };

    it('loads the file when it exists, keeping what the environment already says', () => {
      const path = join(dir, '.env');
      writeFileSync(path, 'CDS_DOTENV_FROM_FILE=file\nCDS_DOTENV_BOTH=file\n');
      expect(run(path)).toEqual({ loaded: true, fromFile: 'file', both: 'environment' });
    });

    it('does nothing without a file', () => {
      expect(run(join(dir, 'missing.env'))).toEqual({ loaded: false, both: 'environment' });
    });
  });

  describe('TRUST_PROXY: off unless set; hop count or the proxies\' addresses', () => {
    it.each([
      [{}, false],
      [{ TRUST_PROXY: '' }, false],
      [{ TRUST_PROXY: 'false' }, false],
      [{ TRUST_PROXY: '0' }, false],
      [{ TRUST_PROXY: '1' }, 1],
      [{ TRUST_PROXY: '2' }, 2],
      [{ TRUST_PROXY: 'loopback' }, ['loopback']],
      [{ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,loopback, fd00::/8' }, ['10.0.0.0/8', '192.168.1.7', 'loopback', 'fd00::/8']],
    ])('%j → %j', (env, expected) => {
      expect(loadSettings(env).trustProxy).toEqual(expected);
    });

    it.each(['true', 'yes', '-1', '11', '10.0.0.0/33', '10.0.0.300', 'loopback,,', 'example.com'])('refuses %j with a message naming the setting', (value) => {
      expect(() => loadSettings({ TRUST_PROXY: value })).toThrow(
        `Setting TRUST_PROXY must be false, a number of proxy hops from 1 to 10, or a comma-separated list of proxy addresses ` +
          `(IP, CIDR, loopback, linklocal, uniquelocal), got "${value}"`,
      );
    });
  });

  describe('IDEMPOTENCY_SECRET: unset or at least 32 characters; a refusal never repeats the value', () => {
    it('is undefined unset or empty, the value when long enough', () => {
      expect(loadSettings({}).idempotencySecret).toBeUndefined();
      expect(loadSettings({ IDEMPOTENCY_SECRET: '' }).idempotencySecret).toBeUndefined();
      expect(loadSettings({ IDEMPOTENCY_SECRET: 'x'.repeat(32) }).idempotencySecret).toBe('x'.repeat(32));
    });

    it('refuses a short one by its length only', () => {
      expect(() => loadSettings({ IDEMPOTENCY_SECRET: 'short-secret' })).toThrow('Setting IDEMPOTENCY_SECRET must be at least 32 characters (a random string), got 12');
      expect(() => loadSettings({ IDEMPOTENCY_SECRET: 'short-secret' })).not.toThrow(/short-secret/);
    });
  });
  describe('the simulated compute provider and its orphan sweep', () => {
    it('SIMULATED_ACPI_IGNORED_IMAGES: none unset, else the listed image ids (trimmed, once each)', () => {
      expect(loadSettings({}).simulatedAcpiIgnoredImages).toEqual([]);
      expect(loadSettings({ SIMULATED_ACPI_IGNORED_IMAGES: ' debian-12, ubuntu-24.04,debian-12 ' }).simulatedAcpiIgnoredImages).toEqual(['debian-12', 'ubuntu-24.04']);
      expect(() => loadSettings({ SIMULATED_ACPI_IGNORED_IMAGES: 'debian-12,,x' })).toThrow(
        'Setting SIMULATED_ACPI_IGNORED_IMAGES must be comma-separated image ids (such as ubuntu-24.04,debian-12), got "debian-12,,x"',
      );
    });

    it('ORPHAN_INSTANCE_SWEEP_INTERVAL_MS: a minute unless set, 100 ms to a day', () => {
      expect(loadSettings({}).orphanInstanceSweepIntervalMs).toBe(60_000);
      expect(loadSettings({ ORPHAN_INSTANCE_SWEEP_INTERVAL_MS: '200' }).orphanInstanceSweepIntervalMs).toBe(200);
      expect(() => loadSettings({ ORPHAN_INSTANCE_SWEEP_INTERVAL_MS: '50' })).toThrow('Setting ORPHAN_INSTANCE_SWEEP_INTERVAL_MS must be a whole number from 100 to 86400000, got "50"');
    });
  });
});
