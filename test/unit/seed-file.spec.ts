import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSeedFile } from '../../src/modules/operator/seed-file';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';

const EXAMPLE = JSON.parse(readFileSync(join(__dirname, '../fixtures/seed-example.json'), 'utf8')) as {
  organizations: { wallet: Record<string, unknown>; name: string }[];
};

/** The example of seed-format.md with one change. */
function exampleWith(change: (seed: typeof EXAMPLE) => void): string {
  const seed = structuredClone(EXAMPLE);
  change(seed);
  return JSON.stringify(seed);
}

function refusal(text: string): { code: string; message: string; details: unknown } {
  try {
    parseSeedFile(text);
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code, message: err.message, details: err.details };
    throw err;
  }
  throw new Error('the seed file was accepted');
}

describe('parseSeedFile (seed-format.md)', () => {
  it('accepts the example of seed-format.md', () => {
    const seed = parseSeedFile(JSON.stringify(EXAMPLE));
    expect(seed.organizations[0].wallet).toEqual({ USD: '100.00000', IDR: '1500000' });
  });

  it('refuses a wallet amount given as a JSON number: money is a decimal string, never a float', () => {
    expect(refusal(exampleWith((s) => (s.organizations[0].wallet.USD = 100)))).toEqual({
      code: 'invalid_request',
      message: 'Seed file: organizations[0].wallet.USD must be a decimal string such as "100.00000"',
      details: { field: 'organizations[0].wallet.USD' },
    });
    expect(refusal(exampleWith((s) => (s.organizations[0].wallet.IDR = 1500000)))).toEqual({
      code: 'invalid_request',
      message: 'Seed file: organizations[0].wallet.IDR must be a whole number of rupiah as a string such as "1500000"',
      details: { field: 'organizations[0].wallet.IDR' },
    });
  });

  it('refuses a NUL character in any string, naming where (PostgreSQL text cannot hold it)', () => {
    expect(refusal(exampleWith((s) => (s.organizations[0].name = 'Ac\u0000me')))).toEqual({
      code: 'invalid_request',
      message: 'Seed file: organizations[0].name must not contain NUL (\\u0000) characters',
      details: { field: 'organizations[0].name' },
    });
  });
});
