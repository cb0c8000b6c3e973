import { loadSettings } from '../../src/shared/config/settings';

describe('settings (issue 9)', () => {
  describe('DEMO_SEED: the demo owner has a public password, so production starts without it unless asked', () => {
    it.each([
      [{}, true],
      [{ NODE_ENV: 'development' }, true],
      [{ NODE_ENV: 'production' }, false],
      [{ NODE_ENV: 'test' }, false],
      [{ NODE_ENV: 'production', DEMO_SEED: 'true' }, true],
      [{ NODE_ENV: 'production', DEMO_SEED: '' }, false],
      [{ DEMO_SEED: 'false' }, false],
    ])('%j → demoSeed %s', (env, expected) => {
      expect(loadSettings(env).demoSeed).toBe(expected);
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
});
