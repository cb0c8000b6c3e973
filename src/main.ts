import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createApp } from './app.factory';
import { seedDemoIfEmpty } from './demo/demo-seed';
import { loadDotEnv } from './shared/config/dot-env';
import { loadSettings } from './shared/config/settings';
import { handleShutdownSignals } from './shared/lifecycle/graceful-shutdown';

async function bootstrap(): Promise<void> {
  loadDotEnv();
  const settings = loadSettings();
  const app = await createApp(settings);
  const logger = new Logger('Bootstrap');
  const demo = settings.demoSeed ? await seedDemoIfEmpty(app.get(DataSource), app) : undefined;
  await app.listen(settings.port, settings.host);
  handleShutdownSignals(app, settings.shutdownTimeoutMs);
  const address = app.getHttpServer().address();
  const url = `http://localhost:${typeof address === 'object' && address ? address.port : settings.port}`;
  logger.log(`Cloud Disk Service listening on ${url} (database: ${settings.databaseUrl ? 'PostgreSQL server' : `embedded, ${settings.dataDir}`})`);
  if (demo) {
    // The demo key is printed once, at the first start, like any new API key.
    process.stdout.write(
      `\nDemo data loaded (organization ${demo.orgId}). Try:\n\n` +
        `  curl -s ${url}/v1/volumes -H "Authorization: Bearer ${demo.token}"\n\n`,
    );
  }
}

bootstrap().catch((err: unknown) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
