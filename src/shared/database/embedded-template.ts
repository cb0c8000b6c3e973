import { closeSync, createReadStream, existsSync, mkdirSync, openSync, readFileSync, readdirSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createGunzip } from 'node:zlib';
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

/** A ustar header's fields that unpacking reads. */
function parseHeader(h: Buffer, path: string): { name: string; size: number; type: string } {
  if (field(h, 257, 6) !== 'ustar') throw new Error(`${path} is not a ustar archive`);
  const name = field(h, 0, 100).replace(/\/$/, '');
  if (!name || name.startsWith('/') || name.split('/').includes('..')) throw new Error(`${path}: entry outside the data directory: ${name}`);
  return { name, size: parseInt(field(h, 124, 12), 8), type: String.fromCharCode(h[156]) };
}

/**
 * Unpacks the template of the installed PGlite into `pgdata` (created if missing) and answers
 * true; false when there is no template. In plain Node, before PGlite starts, as a stream (16 KiB
 * at a time): PGlite's own `loadDataDir`, or unpacking the whole archive at once, would keep
 * the unpacked archive (~40 MB, in copies) in memory next to PGlite's. PG_VERSION is written
 * last, so a start that dies while unpacking leaves a directory the next start unpacks again.
 */
export async function unpackTemplate(pgdata: string): Promise<boolean> {
  const path = templatePath();
  if (!existsSync(path)) return false;
  mkdirSync(pgdata, { recursive: true });
  const header = Buffer.alloc(BLOCK);
  let headerBytes = 0;
  let ended = false;
  // The file being written: its descriptor (none for PG_VERSION, kept in memory until the end), bytes and padding left.
  let file: { fd: number | undefined; left: number; pad: number } | undefined;
  const versionParts: Buffer[] = [];
  let version: Buffer | undefined;
  const finishFile = (): void => {
    if (file?.fd !== undefined) closeSync(file.fd);
    else version = Buffer.concat(versionParts);
    file = undefined;
  };
  try {
    for await (const chunk of createReadStream(path).pipe(createGunzip()) as AsyncIterable<Buffer>) {
      let at = 0;
      while (at < chunk.length && !ended) {
        if (file) {
          const n = Math.min(file.left, chunk.length - at);
          if (file.fd === undefined) versionParts.push(Buffer.from(chunk.subarray(at, at + n)));
          else writeSync(file.fd, chunk, at, n);
          const skip = Math.min(file.pad, chunk.length - at - n);
          file.left -= n;
          file.pad -= skip;
          at += n + skip;
          if (file.left === 0 && file.pad === 0) finishFile();
          continue;
        }
        const n = Math.min(BLOCK - headerBytes, chunk.length - at);
        chunk.copy(header, headerBytes, at, at + n);
        headerBytes += n;
        at += n;
        if (headerBytes < BLOCK) continue;
        headerBytes = 0;
        if (header.every((b) => b === 0)) {
          ended = true;
          continue;
        }
        const entry = parseHeader(header, path);
        if (entry.type === '5') {
          mkdirSync(join(pgdata, entry.name), { recursive: true, mode: 0o700 });
        } else if (entry.type === '0') {
          const fd = entry.name === PG_VERSION ? undefined : openSync(join(pgdata, entry.name), 'w', 0o600);
          file = { fd, left: entry.size, pad: (BLOCK - (entry.size % BLOCK)) % BLOCK };
          if (entry.size === 0) finishFile();
        } else {
          throw new Error(`${path}: entry ${entry.name} of unexpected type ${entry.type}`);
        }
      }
    }
  } finally {
    if (file?.fd !== undefined) closeSync(file.fd);
  }
  if (!ended || file) throw new Error(`${path} ends early`);
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
