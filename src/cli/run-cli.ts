import { loadSettings } from '../shared/config/settings';
import { CliOutcome, forwardCommand, outcomeOf, runningServerSocket } from './cli-socket';
import { runCommand } from './commands';

/** What one CLI invocation prints, and its exit code. */
export interface CliOutput {
  status: 0 | 1;
  stdout: string;
  stderr: string;
}

/**
 * One CLI invocation with these arguments, environment and working directory: forwarded to the
 * server that holds DATA_DIR (embedded database), or run on its own application context.
 * main.ts runs it with the process's own; the tests call it in-process too.
 */
export async function cliOutcome(argv: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CliOutcome> {
  try {
    const settings = { ...loadSettings(env), demoSeed: false };
    const socket = runningServerSocket(settings);
    return socket ? await forwardCommand(socket, argv, cwd) : await outcomeOf(() => runCommand(argv, settings, { cwd }));
  } catch (err) {
    return { error: { code: 'internal', message: err instanceof Error ? err.message : String(err) } };
  }
}

/** What the CLI prints for an outcome: help text or one JSON object on stdout (exit 0), or the error object on stderr (exit 1). */
export function printedOutcome(outcome: CliOutcome): CliOutput {
  if ('help' in outcome) return { status: 0, stdout: outcome.help.endsWith('\n') ? outcome.help : `${outcome.help}\n`, stderr: '' };
  if ('result' in outcome) return { status: 0, stdout: `${JSON.stringify(outcome.result)}\n`, stderr: '' };
  return {
    status: 1,
    stdout: outcome.output === undefined ? '' : `${JSON.stringify(outcome.output)}\n`,
    stderr: `${JSON.stringify({ error: outcome.error })}\n`,
  };
}
