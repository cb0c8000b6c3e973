/**
 * What every test file would otherwise make again, made once per Jest run in a temporary
 * directory (CDS_TEST_RUN_CACHE, set by globalSetup and inherited by the workers, removed by
 * globalTeardown):
 *
 * - on the embedded engine, the database with every migration applied, as a gzipped data
 *   directory: each in-memory app starts from it (Settings.memoryImage) and finds no migration to
 *   run, instead of applying all of them again (about 0.3 to 0.7 s per app);
 * - the OpenAPI document of an app, by its set of routes: built once (Swagger's scan of every
 *   controller and DTO, about 0.3 s), read by every later app with the same routes.
 *
 * Without the variable (a file run outside Jest's globalSetup) nothing is cached: every app
 * migrates and builds its document as in production.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../src/shared/database/embedded-postgres';
import { OpenApiDocument } from '../../src/shared/http/openapi';

const VARIABLE = 'CDS_TEST_RUN_CACHE';
const IMAGE = 'embedded-migrated.tar.gz';

const cacheDir = (): string | undefined => {
  const dir = process.env[VARIABLE];
  return dir && existsSync(dir) ? dir : undefined;
};

/** Written whole or not at all: a reader in another worker never sees half a file. */
function writeAtomically(path: string, data: string | Uint8Array): void {
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, data);
  renameSync(partial, path);
}

/** globalSetup: the directory, and on the embedded engine the migrated image. */
export async function prepareTestRunCache(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cds-test-run-'));
  process.env[VARIABLE] = dir;
  if (process.env.DATABASE_URL) return;
  const engine = await startEmbeddedPostgres(MEMORY_DATA_DIR, 1);
  const dataSource = new DataSource({ type: 'postgres', url: engine.url, migrations: MIGRATIONS, migrationsTableName: 'schema_migrations', logging: false });
  try {
    await dataSource.initialize();
    await dataSource.runMigrations({ transaction: 'all' });
    await dataSource.destroy();
    writeAtomically(join(dir, IMAGE), new Uint8Array(await (await engine.dump()).arrayBuffer()));
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await engine.stop();
  }
}

/** globalTeardown. */
export function removeTestRunCache(): void {
  const dir = cacheDir();
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** The migrated image of this run (embedded engine), if there is one. */
export function migratedImage(): string | undefined {
  const dir = cacheDir();
  const path = dir && join(dir, IMAGE);
  return path && existsSync(path) ? path : undefined;
}

/**
 * The app's OpenAPI document as JSON, built by the first app of the run with the same routes and
 * read from the cache by the others; the app is given it, so that it serves the same document.
 */
export function cachedOpenApiDocument(app: INestApplication): unknown {
  const holder = app.get(OpenApiDocument);
  const dir = cacheDir();
  if (!dir) return JSON.parse(JSON.stringify(holder.get()));
  const router = (app.getHttpAdapter().getInstance() as { router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] } }).router;
  const routes = router.stack
    .flatMap((layer) => (layer.route ? [`${Object.keys(layer.route.methods).sort().join(',')} ${layer.route.path}`] : []))
    .join('\n');
  const path = join(dir, `openapi-${createHash('sha256').update(routes).digest('hex').slice(0, 16)}.json`);
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8');
    holder.buildWith(() => JSON.parse(text));
    return JSON.parse(text);
  }
  const text = JSON.stringify(holder.get());
  writeAtomically(path, text);
  return JSON.parse(text);
}
