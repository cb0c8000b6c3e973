import { execFile, spawn } from 'node:child_process';

/** A host command that failed: its exit code and what it printed (never shown to the service beyond a short message). */
export class CommandFailed extends Error {
  constructor(
    readonly command: string,
    readonly code: number | string | null,
    readonly output: string,
  ) {
    super(`${command} failed (${code}): ${output.trim().split('\n').slice(-3).join(' | ').slice(0, 400)}`);
    this.name = 'CommandFailed';
  }
}

/**
 * Runs a host command without a shell (arguments are never interpolated into one), with a
 * deadline; resolves with its standard output, rejects with CommandFailed. `input` is written to
 * its standard input.
 */
export function run(file: string, args: string[], options: { timeoutMs?: number; input?: string; allowFail?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err && !options.allowFail) {
        reject(new CommandFailed([file, ...args].join(' ').slice(0, 200), (err as NodeJS.ErrnoException).code ?? null, `${stdout}${stderr}`));
        return;
      }
      resolve(stdout);
    });
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}

/** Whether a command succeeds (exit 0). */
export async function succeeds(file: string, args: string[], timeoutMs = 30_000): Promise<boolean> {
  try {
    await run(file, args, { timeoutMs });
    return true;
  } catch {
    return false;
  }
}

/** A long command (debootstrap) whose output goes to a log callback line by line. */
export function runLogged(file: string, args: string[], log: (line: string) => void, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    let tail = '';
    const onData = (b: Buffer) => {
      tail = (tail + b.toString()).slice(-4000);
      for (const line of b.toString().split('\n')) if (line.trim()) log(line.trim());
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new CommandFailed(file, code ?? signal, tail));
    });
  });
}
