/* global module, require, process, __dirname */
/* eslint-disable @typescript-eslint/no-require-imports -- Jest loads this file as CommonJS, without its transform */
/**
 * Runs the longest test files first, so that the last minutes of a run are not one long file on
 * one worker while the others idle. Jest's own sequencer knows a file's duration only from an
 * earlier run on the same machine (its cache) and otherwise orders by file size, which on a clean
 * clone (CI) puts a short file of many cases before a small file that starts processes. Here a
 * file's duration is, in order: Jest's cached time from an earlier run on this machine, the
 * committed test/support/durations.json for the engine of this run (`postgres` when DATABASE_URL
 * is set, `embedded` otherwise; refreshed by `UPDATE_TEST_DURATIONS=1` on a full run, see
 * slowest-files-reporter.js), or an estimate from the file's size (about 1.5 s per KB).
 * Plain JavaScript: Jest loads the sequencer without its transform.
 */
const { readFileSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = join(__dirname, '../..');

function committedDurations() {
  try {
    const all = JSON.parse(readFileSync(join(__dirname, 'durations.json'), 'utf8'));
    return all[process.env.DATABASE_URL ? 'postgres' : 'embedded'] || {};
  } catch {
    return {};
  }
}

class DurationSequencer extends Sequencer {
  sort(tests) {
    const committed = committedDurations();
    const seconds = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached / 1000;
      const known = committed[relative(ROOT, test.path)];
      if (known != null) return known;
      try {
        return statSync(test.path).size / 1024 * 1.5;
      } catch {
        return 0;
      }
    };
    const keyed = tests.map((test) => ({ test, s: seconds(test), failed: this.hasFailed(test) }));
    // Files that failed last time first (quick feedback), then the longest first.
    keyed.sort((a, b) => (a.failed !== b.failed ? (a.failed ? -1 : 1) : b.s - a.s));
    return keyed.map((k) => k.test);
  }
}

module.exports = DurationSequencer;
