import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { createApp } from './app.factory';
import { loadSettings } from './shared/config/settings';
import { MEMORY_DATA_DIR } from './shared/database/embedded-postgres';
import { AdminOpenApiDocument } from './modules/admin/interface/http/admin-openapi';
import { OpenApiDocument } from './shared/http/openapi';

/**
 * Writes the OpenAPI document GET /v1/openapi.json serves, without a database server or data
 * directory (the application is built on an empty in-memory embedded database and never listens):
 * `node dist/src/openapi-document.js [file]` (stdout without a file). The example client is
 * generated from it (examples/typescript-client). With `--admin` first, the admin API's document
 * (GET /admin/v1/openapi.json on the admin listener), which the admin client is generated from
 * (test/support/admin-client, `npm run admin:client`).
 */
async function main(): Promise<void> {
  const settings = {
    ...loadSettings({ NODE_ENV: 'test' }),
    databaseUrl: undefined,
    dataDir: MEMORY_DATA_DIR,
    workerEnabled: false,
    demoSeed: false,
    migrationsRun: false,
    logLevel: 'silent' as const,
    metricsPort: 0,
    host: '127.0.0.1',
  };
  const args = process.argv.slice(2);
  const admin = args[0] === '--admin';
  if (admin) args.shift();
  const app = await createApp(settings, { logger: false });
  const document = admin ? app.get(AdminOpenApiDocument).get() : app.get(OpenApiDocument).get();
  const json = `${JSON.stringify(document, null, 2)}\n`;
  await app.close();
  const file = args[0];
  if (file) writeFileSync(file, json);
  else process.stdout.write(json);
}

main().catch((err: unknown) => {
  process.stderr.write(`Failed to build the OpenAPI document: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
