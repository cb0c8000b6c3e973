import 'reflect-metadata';
import { loadDotEnv } from '../shared/config/dot-env';
import { loadSettings } from '../shared/config/settings';
import { DomainError } from '../shared/kernel/errors/domain-error';
import { CommandFailed, HelpRequested, runCommand } from './commands';

/**
 * `npm run cli -- <command>`: one JSON object on stdout and exit 0, or an error object on stderr
 * and exit 1; `--help` (or no command) prints the help as text and exits 0.
 */
async function main(): Promise<void> {
  try {
    loadDotEnv();
    const result = await runCommand(process.argv.slice(2), { ...loadSettings(), demoSeed: false });
    process.stdout.write(JSON.stringify(result) + '\n');
    process.exitCode = 0;
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(err.text.endsWith('\n') ? err.text : `${err.text}\n`);
      process.exitCode = 0;
      return;
    }
    if (err instanceof CommandFailed) process.stdout.write(JSON.stringify(err.output) + '\n');
    const error =
      err instanceof CommandFailed
        ? { code: err.code, message: err.message }
        : err instanceof DomainError
        ? { code: err.code, message: err.message }
        : { code: 'internal', message: err instanceof Error ? err.message : String(err) };
    process.stderr.write(JSON.stringify({ error }) + '\n');
    process.exitCode = 1;
  }
}

void main();
