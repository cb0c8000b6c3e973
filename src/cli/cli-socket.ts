import { chmodSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { Server, connect, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { INestApplicationContext, Logger } from '@nestjs/common';
import { Settings } from '../shared/config/settings';
import { DomainError } from '../shared/kernel/errors/domain-error';
import { CommandFailed, HelpRequested, runCommand } from './commands';

/**
 * The embedded database serves one process: while the server runs, it owns the data directory
 * (its lock file). The server therefore listens on a Unix socket in that directory, readable by
 * its user only, and runs the CLI's commands itself, on its own database connection; the CLI
 * forwards a command there when a live server holds the directory.
 */
export const CLI_SOCKET_FILE = 'cli.sock';

export const cliSocketPath = (dataDir: string): string => join(resolve(dataDir), CLI_SOCKET_FILE);

/** What a forwarded command answers: its JSON result, its help text, or its error (and the report a failed check prints). */
export type CliOutcome = { result: unknown } | { help: string } | { error: { code: string; message: string }; output?: unknown };

export async function outcomeOf(work: () => Promise<unknown>): Promise<CliOutcome> {
  try {
    return { result: await work() };
  } catch (err) {
    if (err instanceof HelpRequested) return { help: err.text };
    if (err instanceof CommandFailed) return { error: { code: err.code, message: err.message }, output: err.output };
    if (err instanceof DomainError) return { error: { code: err.code, message: err.message } };
    return { error: { code: 'internal', message: err instanceof Error ? err.message : String(err) } };
  }
}

/** Serves forwarded commands on DATA_DIR/cli.sock until the HTTP server closes. */
export async function serveCli(app: INestApplicationContext, settings: Settings, onClose: (listener: () => void) => void): Promise<string> {
  const path = cliSocketPath(settings.dataDir);
  rmSync(path, { force: true }); // left by a process that died (the data directory's lock says no other server runs)
  const logger = new Logger('Cli');
  const server: Server = createServer((socket) => {
    let input = '';
    socket.setEncoding('utf8');
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: string) => {
      input += chunk;
      const end = input.indexOf('\n');
      if (end < 0) {
        if (input.length > 1_000_000) socket.destroy();
        return;
      }
      socket.pause();
      void (async () => {
        let request: { argv?: unknown; cwd?: unknown };
        try {
          request = JSON.parse(input.slice(0, end)) as { argv?: unknown; cwd?: unknown };
        } catch {
          request = {};
        }
        const argv = Array.isArray(request.argv) && request.argv.every((a) => typeof a === 'string') ? (request.argv as string[]) : undefined;
        const outcome: CliOutcome = argv
          ? await outcomeOf(() => runCommand(argv, settings, { context: app, cwd: typeof request.cwd === 'string' ? request.cwd : undefined }))
          : { error: { code: 'invalid_request', message: 'Expected one JSON line {"argv": [...]}' } };
        logger.log(`operator command ${argv?.[0] ?? '(none)'}: ${'result' in outcome || 'help' in outcome ? 'ok' : (outcome as { error: { code: string } }).error.code}`);
        socket.end(JSON.stringify(outcome) + '\n');
      })();
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(path, () => done());
  });
  chmodSync(path, 0o600);
  onClose(() => {
    server.close();
    rmSync(path, { force: true });
  });
  return path;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The socket of the live server holding DATA_DIR, if there is one: its lock file names a running
 * process and the socket exists.
 */
export function runningServerSocket(settings: Settings): string | undefined {
  if (settings.databaseUrl) return undefined;
  const dir = resolve(settings.dataDir);
  const lock = join(dir, '.cds.lock');
  const path = cliSocketPath(dir);
  if (!existsSync(lock) || !existsSync(path)) return undefined;
  const holder = Number(readFileSync(lock, 'utf8'));
  return Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder) ? path : undefined;
}

/** Sends one command to the running server and returns its outcome. */
export function forwardCommand(path: string, argv: string[], cwd: string): Promise<CliOutcome> {
  return new Promise((done, fail) => {
    const socket = connect(path);
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(JSON.stringify({ argv, cwd }) + '\n'));
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', fail);
    socket.on('end', () => {
      try {
        done(JSON.parse(answer) as CliOutcome);
      } catch {
        fail(new Error('The running server closed the CLI connection without an answer'));
      }
    });
  });
}
