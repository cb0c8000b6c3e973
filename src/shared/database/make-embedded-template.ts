/**
 * `npm run embedded:template`: makes the template of the embedded engine for the installed PGlite,
 * embedded/pgdata-pglite-<version>.tar.gz (embedded-template.ts), and removes the templates of
 * other versions. Run it after upgrading @electric-sql/pglite and commit the file: without it a
 * first start falls back to initdb in a child process (~700 MB for a few seconds), and the unit
 * test embedded-template.spec.ts fails.
 *
 * In its own process (PGlite's initdb peaks near 700 MB, given back when it exits): initdb into a
 * temporary directory, a clean start and stop (so a database from the template starts with no
 * recovery), the directory packed as a POSIX tar (tarDirectory: PG_VERSION last) and gzipped.
 * Then a database from the file, unpacked into a directory and loaded in memory, must answer a
 * query, or the file is removed. Nothing in it is secret: trust authentication, no password,
 * no rows of ours. Every installation shares its system identifier, which only replication and
 * backup tools read.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { embeddedOptions } from './embedded-postgres';
import { TEMPLATE_DIR, installedPgliteVersion, readTemplate, tarDirectory, templatePath, unpackTemplate } from './embedded-template';

/** A database from the template answers, through both ways of loading it: unpacked into a directory, and PGlite's loadDataDir. */
async function check(work: string): Promise<void> {
  const dir = join(work, 'check');
  await unpackTemplate(dir);
  for (const open of [() => PGlite.create(dir, embeddedOptions()), () => PGlite.create({ ...embeddedOptions(), loadDataDir: readTemplate() })]) {
    const db = await open();
    const { rows } = await db.query<{ encoding: string }>("SELECT current_setting('server_encoding') AS encoding");
    await db.close();
    if (rows[0]?.encoding !== 'UTF8') throw new Error(`a database from the template answered server_encoding ${rows[0]?.encoding}`);
  }
}

async function main(): Promise<void> {
  const version = installedPgliteVersion();
  const out = templatePath(version);
  const work = mkdtempSync(join(tmpdir(), 'cds-embedded-template-'));
  try {
    const pgdata = join(work, 'pgdata');
    const db = await PGlite.create(pgdata, embeddedOptions());
    await db.close();
    const template = gzipSync(tarDirectory(pgdata), { level: 9 });
    mkdirSync(TEMPLATE_DIR, { recursive: true });
    writeFileSync(out, template);
    try {
      await check(work);
    } catch (err) {
      rmSync(out);
      throw err;
    }
    for (const name of readdirSync(TEMPLATE_DIR)) {
      if (/^pgdata-pglite-.*\.tar\.gz$/.test(name) && join(TEMPLATE_DIR, name) !== out) {
        rmSync(join(TEMPLATE_DIR, name));
        process.stdout.write(`removed ${join(TEMPLATE_DIR, name)}\n`);
      }
    }
    process.stdout.write(`wrote ${out} (${template.length} bytes) for PGlite ${version}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
