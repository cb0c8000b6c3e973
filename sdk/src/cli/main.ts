#!/usr/bin/env node
/**
 * cds: the customer command line of Cloud Disk Service, on @cloud-disk/sdk (`cds --help`).
 * Contexts (a service and a token) are kept in the user's config directory, 0600.
 */
import { CloudDisk } from '../client.js';
import { ApiError, OperationFailedError, TimeoutError } from '../errors.js';
import { SDK_VERSION } from '../generated/version.js';
import { COMMANDS, GROUPS } from './commands.js';
import { readConfig } from './config.js';
import { EXIT, RunContext, UsageError, commandHelp, exitCodeOf, findCommand, groupHelp, parse } from './framework.js';
import { Format, render, yaml } from './output.js';

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stdin: () => Promise<string>;
  env: NodeJS.ProcessEnv;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The error as the chosen format prints it: the API's envelope members, or the message. */
function describeError(err: unknown): Record<string, unknown> {
  if (err instanceof ApiError) return { error: { status: err.status, code: err.code, message: err.message, request_id: err.requestId, details: err.details } };
  if (err instanceof OperationFailedError) return { error: { code: err.code, message: err.message, operation: err.operation } };
  if (err instanceof TimeoutError) return { error: { code: 'timeout', message: err.message, ...(err.operation ? { operation: err.operation } : {}) } };
  return { error: { code: err instanceof UsageError ? 'usage' : 'error', message: err instanceof Error ? err.message : String(err) } };
}

/** Runs one command line; resolves with the exit code. */
export async function run(argv: string[], io: Io): Promise<number> {
  const { command, rest, prefix } = findCommand(COMMANDS, argv);
  if (argv[0] === '--version' || argv[0] === '-v') {
    io.stdout(`${SDK_VERSION}\n`);
    return EXIT.ok;
  }
  if (!command) {
    const asked = argv.length === 0 || argv.includes('--help') || argv.includes('-h') || (prefix.length > 0 && rest.length === prefix.length);
    io[asked ? 'stdout' : 'stderr'](groupHelp(COMMANDS, prefix, GROUPS));
    if (!asked) io.stderr(`\nUnknown command: cds ${argv.filter((a) => !a.startsWith('-')).join(' ')}\n`);
    return asked ? EXIT.ok : EXIT.usage;
  }
  let format: Format = 'table';
  try {
    const { args, flags } = parse(command, rest);
    if (flags.help) {
      io.stdout(commandHelp(command));
      return EXIT.ok;
    }
    format = (flags.output as Format | undefined) ?? 'table';
    const env = io.env;
    const chosen = (): { name: string; context: { url: string; token: string; org?: string } } | undefined => {
      const config = readConfig(env);
      const name = (flags.context as string | undefined) ?? env.CDS_CONTEXT ?? config.current;
      if (name === undefined) return undefined;
      const context = config.contexts[name];
      if (!context) throw new UsageError(`no context ${name} (cds context list)`);
      return { name, context };
    };
    const waitTimeout = flags['wait-timeout'] === undefined ? 600 : Number(flags['wait-timeout']);
    if (!Number.isInteger(waitTimeout) || waitTimeout < 1) throw new UsageError('--wait-timeout must be a whole number of seconds');
    const ctx: RunContext = {
      args,
      flags,
      format,
      env,
      context: chosen,
      wait: flags.wait ? { timeout: waitTimeout * 1000 } : undefined,
      stdin: io.stdin,
      note: (line) => {
        if (format === 'table') io.stderr(`${line}\n`);
      },
      client() {
        const found = chosen()?.context;
        const baseUrl = (flags.url as string | undefined) ?? env.CDS_URL ?? found?.url;
        const token = (flags.token as string | undefined) ?? env.CDS_TOKEN ?? found?.token;
        if (!baseUrl || !token) throw new UsageError('no service to talk to: cds context create NAME --url URL --token-stdin (or --url and --token, or CDS_URL and CDS_TOKEN)');
        const orgId = (flags.org as string | undefined) ?? env.CDS_ORG ?? found?.org;
        return new CloudDisk({ baseUrl, token, ...(orgId ? { orgId } : {}), userAgent: `cds/${SDK_VERSION}` });
      },
    };
    const result = await command.run(ctx);
    const text = render(result, format);
    if (text) io.stdout(`${text}\n`);
    return result.exitCode ?? EXIT.ok;
  } catch (err) {
    const code = exitCodeOf(err);
    if (format === 'json') io.stderr(`${JSON.stringify(describeError(err), null, 2)}\n`);
    else if (format === 'yaml') io.stderr(`${yaml(describeError(err))}\n`);
    else {
      io.stderr(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
      if (err instanceof UsageError) io.stderr(`Run: cds ${command.path.join(' ')} --help\n`);
    }
    if (code === EXIT.error && !(err instanceof Error && 'retryable' in err) && !(err instanceof UsageError)) io.stderr(`${(err as Error)?.stack ?? ''}\n`);
    return code;
  }
}

// Run as the program (not when imported by a test).
const self = process.argv[1] ?? '';
if (/(^|[\\/])(cds|main\.js)$/.test(self)) {
  run(process.argv.slice(2), {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    stdin: readStdin,
    env: process.env,
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = EXIT.error;
    },
  );
}
