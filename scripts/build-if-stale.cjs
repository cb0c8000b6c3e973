#!/usr/bin/env node
/**
 * `npm start`'s prestart: builds (npm run build) only when a source is newer than the last
 * successful build, so a restart with nothing changed starts at once. The sources are what
 * tsconfig.build.json compiles (src, migrations, bench, agent) and the files that change the
 * output (package.json, package-lock.json, tsconfig*.json); the build's time is dist/.build-stamp,
 * written after a build that succeeded. A missing dist/src/main.js or stamp: build.
 */
const { spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const SOURCE_DIRS = ['src', 'migrations', 'bench', 'agent'];
const SOURCE_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
const STAMP = join('dist', '.build-stamp');
const ENTRY = join('dist', 'src', 'main.js');

/** The newest modification time (ms) among the sources under `root`, and the file that has it. */
function newestSource(root) {
  let newest = { path: null, mtimeMs: 0 };
  const visit = (path) => {
    const s = statSync(path);
    if (s.isDirectory()) {
      for (const name of readdirSync(path)) if (name !== 'node_modules') visit(join(path, name));
    } else if (s.mtimeMs > newest.mtimeMs) {
      newest = { path, mtimeMs: s.mtimeMs };
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(join(root, dir))) visit(join(root, dir));
  for (const file of SOURCE_FILES) {
    const path = join(root, file);
    if (existsSync(path) && statSync(path).mtimeMs > newest.mtimeMs) newest = { path, mtimeMs: statSync(path).mtimeMs };
  }
  return newest;
}

/** Why the build under `root` is stale (a sentence), or null when it is current. */
function staleReason(root) {
  if (!existsSync(join(root, ENTRY))) return `${ENTRY} is missing`;
  if (!existsSync(join(root, STAMP))) return `${STAMP} is missing (no build through npm start yet)`;
  const built = statSync(join(root, STAMP)).mtimeMs;
  const newest = newestSource(root);
  return newest.mtimeMs > built ? `${newest.path} is newer than the build` : null;
}

/** Builds when stale; the exit code of the build (0 when nothing was to do). */
function buildIfStale(root) {
  const reason = staleReason(root);
  if (reason === null) {
    process.stderr.write('build: up to date (no source newer than dist/.build-stamp)\n');
    return 0;
  }
  process.stderr.write(`build: ${reason}; running npm run build\n`);
  const started = Date.now();
  const run = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) return run.status ?? 1;
  mkdirSync(join(root, 'dist'), { recursive: true });
  // The stamp's time is the build's start: a source saved during the build makes the next start build again.
  writeFileSync(join(root, STAMP), `${new Date(started).toISOString()}\n`);
  utimesSync(join(root, STAMP), started / 1000, started / 1000);
  return 0;
}

module.exports = { newestSource, staleReason, buildIfStale, STAMP, ENTRY };

if (require.main === module) process.exit(buildIfStale(join(__dirname, '..')));
