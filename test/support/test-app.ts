import { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.factory';
import { LoadSeed, SeedResult } from '../../src/modules/operator/load-seed.use-case';
import { parseSeedFile } from '../../src/modules/operator/seed-file';
import { Settings, loadSettings } from '../../src/shared/config/settings';
import { scaled } from './deadlines';
import { MEMORY_DATA_DIR } from '../../src/shared/database/embedded-postgres';
import { Clock } from '../../src/shared/kernel/clock/clock';
import { TestDatabase, createTestDatabase } from './database';
import { cachedOpenApiDocument, migratedImage } from './test-run-cache';
import { OpenApiDoc, validatedHttp } from './openapi-validation';

export interface TestApp {
  app: INestApplication;
  /** supertest on the app; every response is validated against the app's OpenAPI document (openapi-validation.ts). */
  http: ReturnType<typeof request>;
  /** The OpenAPI document GET /v1/openapi.json serves (as JSON). */
  document: OpenApiDoc;
  settings: Settings;
  /** SQL against the app's database, for asserting the state a request left behind. */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  seed(file: object): Promise<SeedResult>;
  close(): Promise<void>;
}

/**
 * The real application on a real database (embedded in memory, or a fresh PostgreSQL schema
 * when DATABASE_URL is set). One per test file: an embedded engine costs ~2 s to start.
 */
export async function startTestApp(overrides: Partial<Settings> = {}, clock?: Clock): Promise<TestApp> {
  const db: TestDatabase = await createTestDatabase();
  const settings: Settings = {
    ...loadSettings({ NODE_ENV: 'test' }),
    databaseUrl: db.url,
    ...(db.directUrl ? { dbPoolMode: 'transaction' as const, databaseDirectUrl: db.directUrl } : {}),
    dataDir: MEMORY_DATA_DIR,
    memoryImage: db.url ? undefined : migratedImage(),
    workerEnabled: false,
    demoSeed: false,
    logLevel: 'silent',
    // A free port for each app's metrics endpoint (MetricsServer.port() tells which), on loopback only.
    metricsPort: 0,
    host: '127.0.0.1',
    // A burst of a test's requests queues for the pool's connections; on a busy machine that wait is
    // longer (the production default, 5 s, stretched by the load like every deadline of the tests).
    dbConnectTimeoutMs: scaled(5_000),
    ...overrides,
  };
  // A start that fails (or finishes after its file's timeout tore the file down) throws here:
  // Nest's default ends the process, which under --runInBand ends every file after this one.
  const app = await createApp(settings, { clock, logger: false, abortOnError: false });
  await app.init();
  const dataSource = app.get(DataSource);
  // What GET /v1/openapi.json sends, through JSON (read here rather than requested, so that no test
  // sees an extra request in its metrics or logs); built once per run for a set of routes.
  const document = cachedOpenApiDocument(app) as OpenApiDoc;
  return {
    app,
    http: validatedHttp(app.getHttpServer(), document),
    document,
    settings,
    sql: (text, params = []) => dataSource.query(text, params),
    seed: (file) => app.get(LoadSeed).execute(parseSeedFile(JSON.stringify(file))),
    async close() {
      await app.close();
      await db.drop();
    },
  };
}
