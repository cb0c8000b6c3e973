import 'reflect-metadata';
import { loadDotEnv } from '../shared/config/dot-env';
import { loadSettings } from '../shared/config/settings';
import { CliOutcome, forwardCommand, outcomeOf, runningServerSocket } from './cli-socket';
import { runCommand } from './commands';

/**
 * `npm run cli -- <command>`: one JSON object on stdout and exit 0, or an error object on stderr
 * and exit 1; `--help` (or no command) prints the help as text and exits 0. On the embedded
 * database, while a server holds DATA_DIR, the command runs in that server (cli-socket.ts).
 */
async function main(): Promise<void> {
  let outcome: CliOutcome;
  try {
    loadDotEnv();
    const settings = { ...loadSettings(), demoSeed: false };
    const argv = process.argv.slice(2);
    const socket = runningServerSocket(settings);
    outcome = socket ? await forwardCommand(socket, argv, process.cwd()) : await outcomeOf(() => runCommand(argv, settings));
  } catch (err) {
    outcome = { error: { code: 'internal', message: err instanceof Error ? err.message : String(err) } };
  }
  if ('help' in outcome) {
    process.stdout.write(outcome.help.endsWith('\n') ? outcome.help : `${outcome.help}\n`);
    process.exitCode = 0;
  } else if ('result' in outcome) {
    process.stdout.write(JSON.stringify(outcome.result) + '\n');
    process.exitCode = 0;
  } else {
    if (outcome.output !== undefined) process.stdout.write(JSON.stringify(outcome.output) + '\n');
    process.stderr.write(JSON.stringify({ error: outcome.error }) + '\n');
    process.exitCode = 1;
  }
}

void main();
