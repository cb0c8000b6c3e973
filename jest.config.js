/** Jest 30 with Nest 12 (ESM-only packages) and PGlite: swc transforms TypeScript and the ESM
 * packages under node_modules to CommonJS. swc does not type-check: `npm test` runs tsc first.
 *
 * Files run in parallel workers, one more than the cores (3 on a 2-core machine: a file often waits
 * on a child process, a timer or the database, and the third worker fills that time; measured on
 * the embedded engine, 528 s against 595 s with 2, both cores busy), at most 4 (an embedded-engine
 * app holds hundreds of MB); `--runInBand` or `--maxWorkers=N` on the command line overrides. Every file is
 * independent: its own in-memory PGlite, or on PostgreSQL its own schema in its worker's own
 * database (test/support/worker-databases.ts), free ports, its own temporary DATA_DIR. The last
 * reporter prints the ten slowest files. The longest files start first (duration-sequencer.js):
 * a long file started last would run alone at the end while the other workers idle. */
const { availableParallelism } = require('node:os');

/** `TEST_SUBSET=postgres` (npm run test:postgres): every file but the engine-independent ones. */
const ignored = ['/node_modules/'];
if (process.env.TEST_SUBSET === 'postgres') ignored.push(...require('./test/engine-independent.js').map((f) => `<rootDir>/${f}$`));

module.exports = {
  maxWorkers: Math.min(4, Math.max(2, availableParallelism() + 1)),
  // A worker whose heap stays above this after a file is replaced by a fresh one (leaks of one file cannot pile up).
  workerIdleMemoryLimit: '1500MB',
  globalSetup: '<rootDir>/test/support/jest-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/jest-global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/jest-setup-file.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/jest-test-timeout.ts'],
  reporters: ['default', '<rootDir>/test/support/slowest-files-reporter.js'],
  // The longest files first (their last known durations, test/support/durations.json on a clean clone).
  testSequencer: '<rootDir>/test/support/duration-sequencer.js',
  testEnvironment: 'node',
  // sdk/src imports its siblings as `./x.js` (ESM): resolved to `./x.ts` when no such .js exists.
  resolver: '<rootDir>/test/support/jest-resolver.js',
  roots: ['<rootDir>/test'],
  testPathIgnorePatterns: ignored,
  testRegex: '\\.(spec|e2e-spec)\\.ts$',
  moduleFileExtensions: ['ts', 'js', 'cjs', 'mjs', 'json'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', {
      jsc: { parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true }, target: 'es2022' },
      module: { type: 'commonjs' },
    }],
    '^.+\\.(c|m)?js$': ['@swc/jest', {
      jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|@electric-sql|file-type|strtok3|token-types|@tokenizer|uint8array-extras)/)'],
};
