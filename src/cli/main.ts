import 'reflect-metadata';
import { loadDotEnv } from '../shared/config/dot-env';
import { CliOutcome } from './cli-socket';
import { cliOutcome, printedOutcome } from './run-cli';

/**
 * `npm run cli -- <command>`: one JSON object on stdout and exit 0, or an error object on stderr
 * and exit 1; `--help` (or no command) prints the help as text and exits 0. On the embedded
 * database, while a server holds DATA_DIR, the command runs in that server (cli-socket.ts).
 */
async function main(): Promise<void> {
  let outcome: CliOutcome;
  try {
    loadDotEnv();
    outcome = await cliOutcome(process.argv.slice(2), process.env, process.cwd());
  } catch (err) {
    outcome = { error: { code: 'internal', message: err instanceof Error ? err.message : String(err) } };
  }
  const printed = printedOutcome(outcome);
  process.stdout.write(printed.stdout);
  process.stderr.write(printed.stderr);
  process.exitCode = printed.status;
}

void main();
