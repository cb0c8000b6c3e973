/**
 * `node embedded-initdb.js PGDATA`: creates a new embedded database directory (PGlite's initdb)
 * and exits, so the memory initdb takes goes back to the system (embedded-postgres.ts). Used
 * only when the installed PGlite has no template (embedded-template.ts).
 */
import { PGlite } from '@electric-sql/pglite';
import { embeddedOptions } from './embedded-postgres';

async function main(): Promise<void> {
  const pgdata = process.argv[2];
  if (!pgdata) throw new Error('usage: embedded-initdb.js PGDATA');
  const db = await PGlite.create(pgdata, embeddedOptions());
  await db.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
