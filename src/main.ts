import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { adminServerOf, createApp } from './app.factory';
import { StaffAccounts } from './modules/admin/application/staff.use-cases';
import { seedDemoIfEmpty } from './demo/demo-seed';
import { serveCli } from './cli/cli-socket';
import { loadDotEnv } from './shared/config/dot-env';
import { MEMORY_DATA_DIR } from './shared/database/embedded-postgres';
import { loadSettings } from './shared/config/settings';
import { handleShutdownSignals } from './shared/lifecycle/graceful-shutdown';

async function bootstrap(): Promise<void> {
  loadDotEnv();
  const settings = loadSettings();
  const app = await createApp(settings);
  const logger = new Logger('Bootstrap');
  const demo = settings.demoSeed ? await seedDemoIfEmpty(app.get(DataSource), app) : undefined;
  await app.listen(settings.port, settings.host);
  const admin = adminServerOf(app);
  if (admin) await new Promise<void>((resolve, reject) => admin.once('error', reject).listen(settings.adminPort, settings.adminHost, () => resolve()));
  // The demo's staff token, printed once beside the demo API key (a superadmin of the admin API).
  const demoStaff = demo && admin ? await app.get(StaffAccounts).create({ email: 'admin@staff.demo.test', name: 'Demo staff', role: 'superadmin' }) : undefined;
  // The embedded database takes one process: the operator CLI runs its commands here meanwhile.
  if (!settings.databaseUrl && settings.dataDir !== MEMORY_DATA_DIR) {
    await serveCli(app, settings, (close) => app.getHttpServer().once('close', close));
  }
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
    if (demoStaff) {
      process.stdout.write(
        `Admin API on http://${settings.adminHost}:${settings.adminPort} (demo staff token, superadmin):\n\n` +
          `  curl -s "http://${settings.adminHost}:${settings.adminPort}/admin/v1/organizations?q=${demo.orgId}" -H "Authorization: Bearer ${demoStaff.token}"\n\n`,
      );
    }
  }
}

bootstrap().catch((err: unknown) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
