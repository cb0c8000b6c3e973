#!/usr/bin/env node
/* global process */
/**
 * Builds the package: dist/esm (ES modules, the CLI too) and dist/cjs (CommonJS, for require),
 * each with its declarations, from src/ (src/generated must exist: npm run sdk:generate). Uses
 * the TypeScript of the repository around it.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SDK = resolve(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(SDK, 'src/generated/api.ts'))) {
  process.stderr.write('sdk/src/generated is missing: run npm run sdk:generate (from the repository root) first\n');
  process.exit(1);
}
const tsc = createRequire(join(SDK, '..', 'package.json')).resolve('typescript/bin/tsc');
rmSync(join(SDK, 'dist'), { recursive: true, force: true });
for (const project of ['tsconfig.esm.json', 'tsconfig.cjs.json']) {
  const r = spawnSync(process.execPath, [tsc, '-p', join(SDK, project)], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
// Node reads dist/cjs's .js files as CommonJS (the package itself is "type": "module").
writeFileSync(join(SDK, 'dist/cjs/package.json'), '{"type":"commonjs"}\n');
chmodSync(join(SDK, 'dist/esm/cli/main.js'), 0o755);
