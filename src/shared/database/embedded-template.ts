import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { projectRoot } from '../project-root';

/**
 * The template of the embedded engine: an empty data directory (PGlite's initdb, then a clean
 * start and stop) as a .tar.gz in embedded/, named after the PGlite version that made it. A new
 * database is unpacked from it instead of running initdb, which takes two more WebAssembly
 * instances and ~700 MB (README, "Embedded engine: first start from a template"). A data
 * directory belongs to the PostgreSQL build inside PGlite, so each PGlite version needs its own:
 * `npm run embedded:template` makes it (make-embedded-template.ts).
 */
export const TEMPLATE_DIR = join(projectRoot(), 'embedded');

/** The installed @electric-sql/pglite version (its package.json is not in the package's exports). */
export function installedPgliteVersion(): string {
  const pkg = join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json');
  return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
}

/** Where the template of a PGlite version is (or belongs). */
export function templatePath(version: string = installedPgliteVersion()): string {
  return join(TEMPLATE_DIR, `pgdata-pglite-${version}.tar.gz`);
}

/** The template of the installed PGlite as a Blob for PGlite's `loadDataDir` (the in-memory engine); undefined when there is none. */
export function readTemplate(): Blob | undefined {
  const path = templatePath();
  if (!existsSync(path)) return undefined;
  return new Blob([readFileSync(path)], { type: 'application/x-gzip' });
}

const BLOCK = 512;
/** The file whose presence makes a directory a database (PGlite and the server check it): written last. */
const PG_VERSION = 'PG_VERSION';

const field = (h: Buffer, at: number, length: number): string => {
  const raw = h.subarray(at, at + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? length : end).toString('utf8');
};

/**
 * Unpacks the template of the installed PGlite into `pgdata` (created if missing) and answers
 * true; false when there is no template. In plain Node, before PGlite starts: PGlite's own
 * `loadDataDir` would hold the unpacked archive (~40 MB, in several copies, ~130 MB) next to its
 * WebAssembly memory. PG_VERSION is written last, so a start that dies while unpacking leaves a
 * directory the next start unpacks again.
 */
export function unpackTemplate(pgdata: string): boolean {
  const path = templatePath();
  if (!existsSync(path)) return false;
  const gz = readFileSync(path);
  // One output buffer of the archive's size (gzip's last 4 bytes): freed whole when collected,
  // where zlib's default 16 KiB pieces would stay in the allocator's heap after unpacking.
  const tar = gunzipSync(gz, { chunkSize: Math.max(gz.readUInt32LE(gz.length - 4), 64 * 1024) });
  let version: Buffer | undefined;
  mkdirSync(pgdata, { recursive: true });
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const h = tar.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break;
    if (field(h, 257, 6) !== 'ustar') throw new Error(`${path} is not a ustar archive`);
    const name = field(h, 0, 100).replace(/\/$/, '');
    const size = parseInt(field(h, 124, 12), 8);
    const type = String.fromCharCode(h[156]);
    const data = tar.subarray(at + BLOCK, at + BLOCK + size);
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (name.startsWith('/') || name.split('/').includes('..')) throw new Error(`${path}: entry outside the data directory: ${name}`);
    if (type === '5') mkdirSync(join(pgdata, name), { recursive: true, mode: 0o700 });
    else if (type !== '0') throw new Error(`${path}: entry ${name} of unexpected type ${type}`);
    else if (name === PG_VERSION) version = Buffer.from(data);
    else writeFileSync(join(pgdata, name), data, { mode: 0o600 });
  }
  if (!version) throw new Error(`${path} holds no ${PG_VERSION}`);
  writeFileSync(join(pgdata, PG_VERSION), version, { mode: 0o600 });
  return true;
}

/** One ustar header: `name` relative, under 100 bytes; `size` 0 for a directory. */
function tarHeader(name: string, type: 'file' | 'dir', size: number, mtime: Date): Buffer {
  const h = Buffer.alloc(BLOCK);
  if (Buffer.byteLength(name) >= 100) throw new Error(`path too long for a ustar header: ${name}`);
  const octal = (value: number, width: number, at: number): void => {
    h.write(value.toString(8).padStart(width - 1, '0') + '\0', at, 'ascii');
  };
  h.write(name, 0, 'utf8');
  octal(type === 'dir' ? 0o700 : 0o600, 8, 100);
  octal(0, 8, 108);
  octal(0, 8, 116);
  octal(size, 12, 124);
  octal(Math.floor(mtime.getTime() / 1000), 12, 136);
  h.write('        ', 148, 'ascii'); // the checksum counts its own field as spaces
  h.write(type === 'dir' ? '5' : '0', 156, 'ascii');
  h.write('ustar\0' + '00', 257, 'ascii');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return h;
}

/**
 * `dir` as an uncompressed POSIX tar (what `tar` and PGlite's `loadDataDir` read): entries sorted
 * by path, each directory before its contents, PG_VERSION last.
 */
export function tarDirectory(dir: string): Buffer {
  const entries: string[] = [];
  const walk = (path: string): void => {
    for (const name of readdirSync(path).sort()) {
      const full = join(path, name);
      if (relative(dir, full) !== PG_VERSION) entries.push(full);
      if (statSync(full).isDirectory()) walk(full);
    }
  };
  walk(dir);
  entries.push(join(dir, PG_VERSION));
  const parts: Buffer[] = [];
  for (const full of entries) {
    const st = statSync(full);
    const name = relative(dir, full).split('\\').join('/');
    if (st.isDirectory()) {
      parts.push(tarHeader(`${name}/`, 'dir', 0, st.mtime));
    } else {
      const data = readFileSync(full);
      parts.push(tarHeader(name, 'file', data.length, st.mtime), data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK));
    }
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}
