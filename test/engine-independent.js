/* global module */
/**
 * Test files whose subject does not depend on the database engine: the HTTP surface (schemas,
 * errors, limits, the fuzz suite), documents and generated clients, logs and metrics, the browser
 * page, process start and stop. They run on the embedded engine (which is PostgreSQL too, compiled
 * to WebAssembly) in `npm test`. CI's second pass on a PostgreSQL server
 * (`npm run test:postgres`) leaves them out and runs everything else: money, idempotency,
 * concurrency, the worker and its providers, several processes, long-polls, verify.
 * A new file runs on both unless it is named here.
 */
module.exports = [
  'test/fuzz/openapi.fuzz.e2e-spec.ts',
  'test/e2e/access.e2e-spec.ts',
  'test/e2e/admin-openapi.e2e-spec.ts',
  'test/e2e/accounts.e2e-spec.ts',
  'test/e2e/audit-auth.e2e-spec.ts',
  'test/e2e/audit-log.e2e-spec.ts',
  'test/e2e/auth-logs.e2e-spec.ts',
  'test/e2e/auth.e2e-spec.ts',
  'test/e2e/body-limits.e2e-spec.ts',
  'test/e2e/checkout-browser.e2e-spec.ts',
  'test/e2e/cli.e2e-spec.ts',
  'test/e2e/contract.e2e-spec.ts',
  'test/e2e/docs.e2e-spec.ts',
  'test/e2e/errors.e2e-spec.ts',
  'test/e2e/example-client.e2e-spec.ts',
  'test/e2e/failed-authentication.e2e-spec.ts',
  'test/e2e/first-run.e2e-spec.ts',
  'test/e2e/fuzz-findings.e2e-spec.ts',
  'test/e2e/health.e2e-spec.ts',
  'test/e2e/logging.e2e-spec.ts',
  'test/e2e/low-findings.e2e-spec.ts',
  'test/e2e/metrics-binding.e2e-spec.ts',
  'test/e2e/metrics.e2e-spec.ts',
  'test/e2e/openapi.e2e-spec.ts',
  'test/e2e/organizations-invitations.e2e-spec.ts',
  'test/e2e/rate-limit.e2e-spec.ts',
  'test/e2e/regions.e2e-spec.ts',
  'test/e2e/request-bodies.e2e-spec.ts',
  'test/e2e/sdk.e2e-spec.ts',
  'test/e2e/server-catalog.e2e-spec.ts',
  'test/e2e/server-console.e2e-spec.ts',
  'test/e2e/servers-schema.e2e-spec.ts',
  'test/e2e/session-purge.e2e-spec.ts',
  'test/e2e/shutdown.e2e-spec.ts',
  'test/e2e/templates-secrets.e2e-spec.ts',
  'test/e2e/trust-proxy.e2e-spec.ts',
  'test/e2e/volume-filters.e2e-spec.ts',
  'test/e2e/volume-options.e2e-spec.ts',
  'test/e2e/volume-schema.e2e-spec.ts',
  'test/e2e/webhooks-urls.e2e-spec.ts',
];
