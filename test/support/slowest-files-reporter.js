/* global module, process, require, __dirname */
/* eslint-disable @typescript-eslint/no-require-imports -- Jest loads this file as CommonJS, without its transform */
/**
 * A Jest reporter that prints, at the end of a run, the tests that were skipped and why (the line
 * each file prints when its subject needs what this machine lacks: PostgreSQL, Redis, Chromium,
 * root), then the ten slowest test files (wall time of each file in its worker, from Jest's
 * perfStats), so that what a run left out and the suite's cost stay visible as it grows.
 * Listed in jest.config.js after the default reporter. SLOWEST_FILES=n prints n instead of ten.
 * UPDATE_TEST_DURATIONS=1 also writes every file's seconds into test/support/durations.json under
 * this run's engine (`postgres` with DATABASE_URL, `embedded` otherwise), which
 * duration-sequencer.js reads to start the longest files first on a clean clone.
 * Plain JavaScript: Jest loads reporters without its transform.
 */
class SlowestFilesReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    /** Test file -> the line it printed saying why it skips (Jest drops each file's console after this hook). */
    this.reasons = new Map();
  }

  onTestResult(_test, result) {
    const said = (result.console || []).map((c) => String(c.message)).find((m) => /skipped/.test(m));
    if (said) this.reasons.set(result.testFilePath, said);
  }

  onRunComplete(_contexts, results) {
    this.printSkipped(results);
    this.printSlowest(results);
    if (process.env.UPDATE_TEST_DURATIONS === '1') this.writeDurations(results);
  }

  writeDurations(results) {
    const { readFileSync, writeFileSync } = require('node:fs');
    const { join } = require('node:path');
    const path = join(__dirname, 'durations.json');
    let all = {};
    try {
      all = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      all = {};
    }
    const engine = process.env.DATABASE_URL ? 'postgres' : 'embedded';
    const prefix = `${this.rootDir}/`;
    const mine = { ...(all[engine] || {}) };
    for (const r of results.testResults) {
      const ms = r.perfStats.end - r.perfStats.start;
      if (!Number.isFinite(ms) || ms <= 0) continue;
      const file = r.testFilePath.startsWith(prefix) ? r.testFilePath.slice(prefix.length) : r.testFilePath;
      mine[file] = Math.round(ms / 100) / 10;
    }
    all[engine] = Object.fromEntries(Object.entries(mine).sort(([, a], [, b]) => b - a));
    writeFileSync(path, `${JSON.stringify(all, null, 2)}\n`);
    process.stderr.write(`Test durations (${engine}) written to test/support/durations.json\n`);
  }

  printSkipped(results) {
    const prefix = `${this.rootDir}/`;
    const skipped = results.testResults
      .filter((r) => r.numPendingTests > 0)
      .map((r) => {
        const file = r.testFilePath.startsWith(prefix) ? r.testFilePath.slice(prefix.length) : r.testFilePath;
        const said = this.reasons.get(r.testFilePath);
        const reason = said ? said.replace(/^[\w.-]+(\.e2e-spec)?:\s*/, '') : 'skipped by the file (no reason printed)';
        const all = r.numPendingTests === r.numPassingTests + r.numFailingTests + r.numPendingTests;
        return `  ${file}: ${all ? 'all' : r.numPendingTests} of ${r.numPassingTests + r.numFailingTests + r.numPendingTests} tests; ${reason}`;
      });
    if (skipped.length === 0) return;
    const total = results.numPendingTests;
    process.stderr.write(
      `\nSkipped: ${total} test(s) in ${skipped.length} file(s) did not run on this machine (set DATABASE_URL for PostgreSQL and TEST_REDIS_URL for Redis; README "Tests"):\n${skipped.join('\n')}\n`,
    );
  }

  printSlowest(results) {
    const prefix = `${this.rootDir}/`;
    const files = results.testResults
      .map((r) => ({
        file: r.testFilePath.startsWith(prefix) ? r.testFilePath.slice(prefix.length) : r.testFilePath,
        ms: r.perfStats.end - r.perfStats.start,
        failed: r.numFailingTests > 0 || Boolean(r.testExecError),
      }))
      .filter((f) => Number.isFinite(f.ms) && f.ms > 0)
      .sort((a, b) => b.ms - a.ms);
    if (files.length === 0) return;
    const n = Number(process.env.SLOWEST_FILES ?? 10) || 10;
    const sum = files.reduce((total, f) => total + f.ms, 0);
    const wall = Date.now() - results.startTime;
    const lines = files.slice(0, n).map((f) => `  ${(f.ms / 1000).toFixed(1).padStart(7)} s  ${f.file}${f.failed ? '  (failed)' : ''}`);
    process.stderr.write(
      `\nSlowest ${Math.min(n, files.length)} of ${files.length} test files (sum of all files ${(sum / 1000).toFixed(1)} s, wall ${(wall / 1000).toFixed(1)} s):\n${lines.join('\n')}\n`,
    );
  }
}

module.exports = SlowestFilesReporter;
