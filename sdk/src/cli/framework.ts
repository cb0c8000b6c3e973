import { parseArgs } from 'node:util';
import { ApiError, CloudDiskError, ConnectionError, OperationFailedError, TimeoutError } from '../errors.js';
import type { CloudDisk } from '../client.js';
import type { Context } from './config.js';
import { FORMATS, Format, Result } from './output.js';

/** A flag of a command: `--name VALUE` (string) or `--force` (boolean). */
export interface Flag {
  name: string;
  short?: string;
  type: 'string' | 'boolean';
  description: string;
  required?: boolean;
  multiple?: boolean;
  choices?: readonly string[];
  /** What the value is, in the help (`--size GB`). */
  value?: string;
}

export interface Arg {
  name: string;
  description: string;
}

/** What a command runs with. */
export interface RunContext {
  args: string[];
  flags: Record<string, string | boolean | string[] | undefined>;
  format: Format;
  env: NodeJS.ProcessEnv;
  /** The client of the chosen context (flags and CDS_* variables override its members). */
  client(): CloudDisk;
  /** The chosen context's name and members, or undefined when none is configured. */
  context(): { name: string; context: Context } | undefined;
  /** `--wait` of an action: undefined, or how long to wait. */
  wait: { timeout: number } | undefined;
  /** Reads all of standard input (a token or a password given on stdin). */
  stdin(): Promise<string>;
  /** A line for people on standard error (progress), silent with -o json|yaml. */
  note(line: string): void;
}

export interface Command {
  /** The words that name it: ['server', 'create']. */
  path: string[];
  summary: string;
  args?: Arg[];
  flags?: Flag[];
  /** Takes --wait (an action answered with an operation). */
  action?: boolean;
  examples: string[];
  run(ctx: RunContext): Promise<Result>;
}

/** The options every command takes. */
export const GLOBAL_FLAGS: Flag[] = [
  { name: 'output', short: 'o', type: 'string', choices: FORMATS, value: 'FORMAT', description: 'table (default), json or yaml' },
  { name: 'context', type: 'string', value: 'NAME', description: 'The context to use (default: the current one; CDS_CONTEXT)' },
  { name: 'url', type: 'string', value: 'URL', description: "The service's address, instead of the context's (CDS_URL)" },
  { name: 'token', type: 'string', value: 'TOKEN', description: "An API key or session token, instead of the context's (CDS_TOKEN)" },
  { name: 'org', type: 'string', value: 'ORG', description: 'Sessions: the organization to act on (CDS_ORG)' },
  { name: 'help', short: 'h', type: 'boolean', description: 'Show the help of the command' },
];

/** The flags of an action: wait for its operation. */
export const WAIT_FLAGS: Flag[] = [
  { name: 'wait', type: 'boolean', description: 'Wait until the operation ended (long-polls; no polling loop), then print the result' },
  { name: 'wait-timeout', type: 'string', value: 'SECONDS', description: 'How long --wait waits (default 600)' },
];

/** A mistake in the command line. */
export class UsageError extends Error {}

/**
 * Exit codes, by the class of the error (README of the package, "cds"):
 * 0 success; 1 an unexpected error; 2 usage (the command line, or 400 invalid_request);
 * 3 not authenticated (401); 4 not allowed (403); 5 not found (404); 6 conflict or wrong state
 * (409); 7 insufficient balance (402); 8 rate limited (429, after the retries); 9 the service or
 * the network unavailable (5xx or no connection, after the retries); 10 the operation failed;
 * 11 timed out.
 */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  unauthorized: 3,
  forbidden: 4,
  notFound: 5,
  conflict: 6,
  payment: 7,
  rateLimited: 8,
  unavailable: 9,
  operationFailed: 10,
  timeout: 11,
} as const;

export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof OperationFailedError) return EXIT.operationFailed;
  if (err instanceof TimeoutError) return EXIT.timeout;
  if (err instanceof ConnectionError) return EXIT.unavailable;
  if (err instanceof ApiError) {
    if (err.status === 400) return EXIT.usage;
    if (err.status === 401) return EXIT.unauthorized;
    if (err.status === 402) return EXIT.payment;
    if (err.status === 403) return EXIT.forbidden;
    if (err.status === 404) return EXIT.notFound;
    if (err.status === 409) return EXIT.conflict;
    if (err.status === 429) return EXIT.rateLimited;
    if (err.status >= 500) return EXIT.unavailable;
  }
  if (err instanceof CloudDiskError) return EXIT.error;
  return EXIT.error;
}

export function flagsOf(command: Command): Flag[] {
  return [...(command.flags ?? []), ...(command.action ? WAIT_FLAGS : []), ...GLOBAL_FLAGS];
}

/** The command named by the first words of argv, and the rest. */
export function findCommand(commands: Command[], argv: string[]): { command?: Command; rest: string[]; prefix: string[] } {
  const words: string[] = [];
  for (const a of argv) {
    if (a.startsWith('-')) break;
    words.push(a);
  }
  for (let n = Math.min(words.length, 3); n > 0; n--) {
    const command = commands.find((c) => c.path.length === n && c.path.every((w, i) => w === words[i]));
    if (command) {
      const at = argv.indexOf(words[n - 1]);
      return { command, rest: [...argv.slice(0, at + 1).filter((a) => a.startsWith('-')), ...argv.slice(at + 1)], prefix: command.path };
    }
  }
  const prefix = words.filter((_, i) => commands.some((c) => words.slice(0, i + 1).every((w, j) => c.path[j] === w)));
  return { rest: argv, prefix };
}

export function parse(command: Command, argv: string[]): { args: string[]; flags: Record<string, string | boolean | string[] | undefined> } {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const f of flagsOf(command)) options[f.name] = { type: f.type, ...(f.short ? { short: f.short } : {}), ...(f.multiple ? { multiple: true } : {}) };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/^TypeError \[\w+\]: /, ''));
  }
  const flags = { ...parsed.values } as Record<string, string | boolean | string[] | undefined>;
  if (flags.help) return { args: parsed.positionals, flags };
  for (const f of flagsOf(command)) {
    const value = flags[f.name];
    if (f.required && (value === undefined || value === '')) throw new UsageError(`--${f.name} is required`);
    for (const v of value === undefined || typeof value === 'boolean' ? [] : Array.isArray(value) ? value : [value]) {
      if (f.choices && !f.choices.includes(v)) throw new UsageError(`--${f.name} must be one of ${f.choices.join(', ')} (got ${JSON.stringify(v)})`);
    }
  }
  const expected = command.args ?? [];
  if (parsed.positionals.length < expected.length) throw new UsageError(`missing ${expected.slice(parsed.positionals.length).map((a) => a.name).join(' ')}`);
  if (parsed.positionals.length > expected.length) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[expected.length])}`);
  return { args: parsed.positionals, flags };
}

function flagLine(f: Flag): [string, string] {
  const name = `${f.short ? `-${f.short}, ` : '    '}--${f.name}${f.type === 'string' ? ` ${f.value ?? 'VALUE'}` : ''}`;
  const notes = [f.required ? 'required' : '', f.multiple ? 'repeatable' : '', f.choices && f.name !== 'output' ? f.choices.join('|') : ''].filter(Boolean);
  return [name, `${f.description}${notes.length ? ` (${notes.join('; ')})` : ''}`];
}

function columns(rows: [string, string][]): string {
  const width = Math.max(...rows.map(([a]) => a.length));
  return rows.map(([a, b]) => `  ${a.padEnd(width)}   ${b}`).join('\n');
}

export function commandHelp(command: Command): string {
  const usage = ['cds', ...command.path, ...(command.args ?? []).map((a) => a.name.toUpperCase()), '[flags]'].join(' ');
  const own = [...(command.flags ?? []), ...(command.action ? WAIT_FLAGS : [])];
  return [
    command.summary,
    '',
    `Usage: ${usage}`,
    ...(command.args?.length ? ['', 'Arguments:', columns(command.args.map((a) => [a.name.toUpperCase(), a.description]))] : []),
    ...(own.length ? ['', 'Flags:', columns(own.map(flagLine))] : []),
    '',
    'Global flags:',
    columns(GLOBAL_FLAGS.map(flagLine)),
    '',
    'Examples:',
    ...command.examples.map((e) => `  ${e}`),
    '',
  ].join('\n');
}

/** The help of `cds` or of a group (`cds server`): its commands. */
export function groupHelp(commands: Command[], prefix: string[], groupSummaries: Record<string, string>): string {
  const under = commands.filter((c) => prefix.every((w, i) => c.path[i] === w) && !c.path[0].startsWith('__'));
  const title = prefix.length ? `cds ${prefix.join(' ')}: its commands` : 'cds: the Cloud Disk Service command line, on @cloud-disk/sdk';
  return [
    title,
    '',
    `Usage: cds ${prefix.length ? prefix.join(' ') : '<group>'} <command> [flags]`,
    '',
    'Commands:',
    prefix.length
      ? columns(under.map((c) => [c.path.join(' '), c.summary]))
      : columns([...new Set(under.map((c) => c.path[0]))].map((g) => [g, groupSummaries[g] ?? ''])),
    '',
    'Global flags:',
    columns(GLOBAL_FLAGS.map(flagLine)),
    '',
    'Examples:',
    ...(prefix.length ? under : under.filter((c) => ['context create', 'server create', 'wallet balance', 'operation wait'].includes(c.path.join(' ')))).slice(0, 4).map((c) => `  ${c.examples[0]}`),
    '',
    'Run `cds <command> --help` for a command\'s flags and examples. Exit codes: 0 success, 1 unexpected error, 2 usage or',
    'invalid request, 3 unauthorized, 4 forbidden, 5 not found, 6 conflict or invalid state, 7 insufficient balance,',
    '8 rate limited, 9 service or network unavailable, 10 operation failed, 11 timed out.',
    '',
  ].join('\n');
}

/** Shell completion: bash, and zsh (native, with descriptions), from the command table; no process is started per key press. */
export function completionScript(commands: Command[], shell: 'bash' | 'zsh', groupSummaries: Record<string, string>): string {
  const visible = commands.filter((c) => !c.path[0].startsWith('__'));
  const groups = [...new Set(visible.map((c) => c.path[0]))];
  const subcommands = (group: string) => visible.filter((c) => c.path[0] === group && c.path.length > 1).map((c) => c.path[1]);
  const flagWords = (c: Command) => flagsOf(c).flatMap((f) => [`--${f.name}`, ...(f.short ? [`-${f.short}`] : [])]);
  const choiceCases = (c: Command) =>
    flagsOf(c)
      .filter((f) => f.choices)
      .map((f) => `${[`--${f.name}`, ...(f.short ? [`-${f.short}`] : [])].join('|')}) echo ${quote(f.choices!.join(' '))}; return;;`);
  // The command of the words typed so far (their first one or two words that are not flags), and what may follow.
  const body = [
    '  local words=() w',
    '  for w in "$@"; do case "$w" in -*) ;; *) words+=("$w");; esac; done',
    '  case "${words[*]:0:2}" in',
    ...visible
      .filter((c) => c.path.length === 2)
      .map((c) => `    ${quote(c.path.join(' '))}) case "$prev" in ${choiceCases(c).join(' ')} esac; echo ${quote(flagWords(c).join(' '))}; return;;`),
    '  esac',
    '  case "${words[*]:0:1}" in',
    ...visible.filter((c) => c.path.length === 1).map((c) => `    ${quote(c.path[0])}) echo ${quote(flagWords(c).join(' '))}; return;;`),
    ...groups.filter((g) => subcommands(g).length).map((g) => `    ${quote(g)}) echo ${quote(subcommands(g).join(' '))}; return;;`),
    '  esac',
    `  echo ${quote(groups.join(' '))}`,
  ];
  if (shell === 'bash') {
    return [
      '# bash completion for cds: `source <(cds completion bash)`, or save it to /etc/bash_completion.d/cds',
      '__cds_candidates() {',
      ...body,
      '}',
      '_cds() {',
      '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
      '  COMPREPLY=( $(compgen -W "$(__cds_candidates "${COMP_WORDS[@]:1:COMP_CWORD-1}")" -- "$cur") )',
      '}',
      'complete -F _cds cds',
      '',
    ].join('\n');
  }
  const described = (pairs: [string, string][]) => pairs.map(([w, d]) => quote(`${w.replace(/:/g, '\\:')}:${d.replace(/'/g, '')}`)).join(' ');
  return [
    '#compdef cds',
    '# zsh completion for cds: `source <(cds completion zsh)`, or save it as _cds in a directory of $fpath',
    '__cds_candidates() {',
    ...body,
    '}',
    '_cds() {',
    '  local prev="${words[CURRENT-1]}"',
    '  local -a candidates described',
    '  candidates=(${(z)"$(__cds_candidates "${(@)words[2,CURRENT-1]}")"})',
    '  case "${words[2]}" in',
    ...groups.map((g) => {
      const entries: [string, string][] = visible.filter((c) => c.path[0] === g && c.path.length > 1).map((c) => [c.path[1], c.summary]);
      return `    ${quote(g)}) described=(${described(entries)});;`;
    }),
    '  esac',
    `  if (( CURRENT == 2 )); then described=(${described(groups.map((g) => [g, groupSummaries[g] ?? g]))}); fi`,
    '  if (( CURRENT <= 3 )) && [[ ${words[CURRENT]} != -* ]] && (( ${#described} )); then _describe command described; else compadd -- $candidates; fi',
    '}',
    'compdef _cds cds',
    '',
  ].join('\n');
}

function quote(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}
