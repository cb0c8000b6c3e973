// @hey-api/openapi-ts: the typed client of the admin API, generated from its OpenAPI document
// (`npm run admin:client` writes test/support/admin-client/openapi.json, then this). The admin
// e2e tests call the admin listener through it, so a route or member that the document and the
// service disagree on fails them. ADMIN_CLIENT_OUTPUT writes elsewhere (the up-to-date check).
/* global process */
export default {
  input: 'test/support/admin-client/openapi.json',
  output: { path: process.env.ADMIN_CLIENT_OUTPUT ?? 'test/support/admin-client/generated' },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
};
