/** Seed files for tests, in the format of seed-format.md. Each call returns a fresh object. */

export const OWNER_PASSWORD = 'correct horse battery';

export function region(id = 'id-jkt', overrides: Record<string, unknown> = {}) {
  return {
    id,
    name: 'Jakarta',
    capacity_gb: 20000,
    zones: [
      { id: `${id}-a`, available: true },
      { id: `${id}-b`, available: false },
    ],
    volume_offers: [
      { type: 'premium', min_gb: 10, max_gb: 4000, step_gb: 10, terms: [1, 3, 12], per_server_limit: 8, price_per_gb_month: { USD: '0.02000', IDR: '320' } },
      { type: 'ssd', min_gb: 20, max_gb: 2000, step_gb: 10, terms: [1, 3, 12], per_server_limit: 4, price_per_gb_month: { USD: '0.01250', IDR: '200' } },
    ],
    ...overrides,
  };
}

/** An organization with an owner, a read-write key with a fixed token, a server and one attached volume. */
export function organization(suffix: string, overrides: Record<string, unknown> = {}) {
  return {
    id: `org_${suffix}`,
    name: `Org ${suffix}`,
    wallet: { USD: '100.00000', IDR: '1500000' },
    members: [{ email: `owner@${suffix}.test`, password: OWNER_PASSWORD, role: 'owner' }],
    api_keys: [{ name: 'ci', scopes: ['vm:read', 'vm:write'], token: apiToken(suffix, 'rw') }],
    servers: [{ id: `vm_${suffix}web1`, name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' }],
    volumes: [
      {
        id: `vol_${suffix}data1`, name: 'data-1', type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 100,
        term_months: 1, currency: 'USD', server: `vm_${suffix}web1`, mount_path: '/mnt/data',
        expires_at: '2026-12-21T00:00:00.000Z', note: null,
      },
    ],
    ...overrides,
  };
}

/** A deterministic API key token for tests: cds_live_ + 32+ base62 characters. */
export function apiToken(suffix: string, kind: string): string {
  const body = `test${suffix}${kind}`.replace(/[^A-Za-z0-9]/g, '');
  return `cds_live_${body.padEnd(40, '0')}`;
}

export const bearer = (token: string): { Authorization: string } => ({ Authorization: `Bearer ${token}` });

/**
 * organization(suffix) with `n` detached USD volumes vol_<suffix>v1..vn of 100 GB, premium at
 * 0.02 USD per GB-month (2.00000 USD a month each), and the given wallet.
 */
export function orgWithDetachedVolumes(
  suffix: string,
  n: number,
  wallet: Record<string, string> = { USD: '100.00000', IDR: '1500000' },
  volume: Record<string, unknown> = {},
) {
  const base = organization(suffix);
  const volumes = Array.from({ length: n }, (_, i) => ({
    ...base.volumes[0],
    id: `vol_${suffix}v${i + 1}`,
    name: `v${i + 1}`,
    server: undefined,
    mount_path: undefined,
    ...volume,
  }));
  return { ...base, wallet, volumes };
}
