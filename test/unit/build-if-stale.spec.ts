import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { staleReason } = require('../../scripts/build-if-stale.cjs') as { staleReason: (root: string) => string | null };

/** npm start's prestart: a build only when a source is newer than the last build (dist/.build-stamp). */
describe('scripts/build-if-stale.cjs', () => {
  let root: string;
  const at = (path: string, seconds: number) => utimesSync(join(root, path), seconds, seconds);
  const file = (path: string, seconds: number) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), 'x');
    at(path, seconds);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'cds-build-stale-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('stale without a build or a stamp; current when every source is older than the stamp; stale again when one is newer', () => {
    file('src/main.ts', 1_000);
    file('migrations/index.ts', 1_000);
    file('package.json', 1_000);
    expect(staleReason(root)).toBe(`${join('dist', 'src', 'main.js')} is missing`);
    file('dist/src/main.js', 2_000);
    expect(staleReason(root)).toBe(`${join('dist', '.build-stamp')} is missing (no build through npm start yet)`);
    file('dist/.build-stamp', 2_000);
    expect(staleReason(root)).toBeNull();
    file('src/modules/x/deep.ts', 3_000);
    expect(staleReason(root)).toBe(`${join(root, 'src', 'modules', 'x', 'deep.ts')} is newer than the build`);
    at('src/modules/x/deep.ts', 1_500);
    expect(staleReason(root)).toBeNull();
    at('package.json', 2_500);
    expect(staleReason(root)).toBe(`${join(root, 'package.json')} is newer than the build`);
  });
});
