import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INestApplicationContext, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LoadSeed } from '../modules/operator/load-seed.use-case';
import { parseSeedFile } from '../modules/operator/seed-file';
import { DomainError } from '../shared/kernel/errors/domain-error';
import { projectRoot } from '../shared/project-root';

export const DEMO_SEED_PATH = join(projectRoot(), 'seeds', 'demo.json');

/**
 * First run: on an empty database (no region, no organization) load the demo seed and return
 * its API key. A database with any data is never seeded.
 */
export async function seedDemoIfEmpty(dataSource: DataSource, app: INestApplicationContext): Promise<{ orgId: string; token: string } | undefined> {
  const [{ empty }] = (await dataSource.query(
    'SELECT NOT (EXISTS (SELECT 1 FROM organizations) OR EXISTS (SELECT 1 FROM regions)) AS empty',
  )) as { empty: boolean }[];
  if (!empty) return undefined;
  try {
    const result = await app.get(LoadSeed).execute(parseSeedFile(readFileSync(DEMO_SEED_PATH, 'utf8')));
    const org = result.organizations[0];
    return { orgId: org.id, token: org.api_keys[0].token };
  } catch (err) {
    // Another process seeded the same empty database at the same moment: its data stands.
    if (err instanceof DomainError && err.code === 'conflict') {
      new Logger('DemoSeed').log('Demo data was loaded by another process');
      return undefined;
    }
    throw err;
  }
}
