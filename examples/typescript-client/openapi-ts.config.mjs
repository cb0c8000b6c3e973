// @hey-api/openapi-ts: the typed client of the Cloud Disk Service API, generated from its OpenAPI
// document (written by `npm run openapi:document`, or fetched from a running service).
export default {
  input: process.env.OPENAPI_INPUT ?? 'examples/typescript-client/openapi.json',
  output: { path: 'examples/typescript-client/src/generated' },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
};
