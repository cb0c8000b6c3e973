import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { INestApplicationContext } from '@nestjs/common';
import { Command, CommanderError } from 'commander';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { CreateApiKey, OPERATOR, RevokeApiKey } from '../modules/auth/application/api-keys.use-cases';
import { CreditWallet } from '../modules/operator/credit-wallet.use-case';
import { AdjustWallet } from '../modules/operator/adjust-wallet.use-case';
import { presentAdjustment } from '../modules/admin/interface/http/money.controller';
import { LoadSeed } from '../modules/operator/load-seed.use-case';
import { SetPurchasesPaused, SetRegionCapacity, SetRegionVcpus, SetZoneAvailability } from '../modules/options/application/catalog-admin.use-cases';
import { parseSeedFile } from '../modules/operator/seed-file';
import { Settings } from '../shared/config/settings';
import { invalidRequest } from '../shared/kernel/errors/domain-error';
import { VerifyInvariants } from '../modules/verification/application/verify-invariants.use-case';
import { CliModule } from './cli.module';
import { StaffAccounts } from '../modules/admin/application/staff.use-cases';
import { presentStaff, presentStaffToken } from '../modules/admin/domain/staff';

/**
 * A command that ran and found something wrong (verify): its report still goes to stdout,
 * the error object to stderr, and the exit code is 1.
 */
export class CommandFailed extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly output: unknown,
  ) {
    super(message);
    this.name = 'CommandFailed';
  }
}

type Options = Record<string, string | undefined>;

function required(opts: Options, name: string): string {
  const value = opts[name];
  if (value === undefined || value === '') throw invalidRequest(`--${name} is required`, { field: name });
  return value;
}

/** Where a command runs: its own application context, or (forwarded by the CLI) the running server's. */
export interface CommandHost {
  /** The running server's application: the command uses its database connection instead of opening one. */
  context?: INestApplicationContext;
  /** The directory relative file arguments are read from (the CLI's, when forwarded). */
  cwd?: string;
}

async function withContext<T>(settings: Settings, work: (ctx: INestApplicationContext) => Promise<T>, host: CommandHost = {}): Promise<T> {
  if (host.context) return work(host.context);
  const ctx = await NestFactory.createApplicationContext(CliModule.forRoot(settings), { logger: false, abortOnError: false });
  try {
    return await work(ctx);
  } finally {
    await ctx.close();
  }
}

/**
 * One operator command: its name, what it does, its argument and options (for parsing and for
 * `--help`), and what it runs. Adding a command is one entry of COMMANDS.
 */
export interface CommandSpec {
  name: string;
  summary: string;
  /** A positional argument, e.g. `<file>`. */
  argument?: { name: string; description: string };
  /** `[flag, value name, description]`; every option takes a value and is required unless `optional`. */
  options: { flag: string; value: string; description: string; optional?: boolean }[];
  /** Lines shown under the command's --help. */
  examples?: string[];
  /** Returns the JSON object printed on stdout; throws DomainError (exit 1) or CommandFailed. */
  run(input: { argument?: string; opts: Options }, settings: Settings, host: CommandHost): Promise<unknown>;
}

export const COMMANDS: CommandSpec[] = [
  {
    name: 'migrate',
    summary: 'Apply pending migrations',
    options: [],
    run: (_input, settings, host) =>
      withContext({ ...settings, migrationsRun: false }, async (ctx) => {
        const applied = await ctx.get(DataSource).runMigrations({ transaction: 'all' });
        return { applied: applied.map((m) => m.name) };
      }, host),
  },
  {
    name: 'seed',
    summary: 'Load a seed file (docs/reference/seed-format.md) in one transaction',
    argument: { name: 'file', description: 'the seed file (JSON)' },
    options: [],
    examples: ['seed seeds/demo.json'],
    run: async ({ argument: file }, settings, host) => {
      let text: string;
      try {
        text = readFileSync(resolve(host.cwd ?? '.', file!), 'utf8');
      } catch {
        throw invalidRequest(`Cannot read the seed file ${file}`);
      }
      const seed = parseSeedFile(text);
      return withContext(settings, (ctx) => ctx.get(LoadSeed).execute(seed), host);
    },
  },
  {
    name: 'wallet:credit',
    summary: "Credit an organization's wallet (audited)",
    options: [
      { flag: 'org', value: 'id', description: 'organization id (org_…)' },
      { flag: 'currency', value: 'currency', description: 'USD or IDR' },
      { flag: 'amount', value: 'decimal', description: 'amount, e.g. 25.5 (USD: at most 5 decimals; IDR: whole rupiah)' },
    ],
    examples: ['wallet:credit --org org_demo --currency USD --amount 25.5'],
    run: ({ opts }, settings, host) => {
      const input = { orgId: required(opts, 'org'), currency: required(opts, 'currency'), amount: required(opts, 'amount') };
      return withContext(settings, async (ctx) => {
        const balance = await ctx.get(CreditWallet).execute(input);
        return { org_id: input.orgId, currency: balance.currency, available: balance.available.format(), reserved: balance.reserved.format() };
      }, host);
    },
  },
  {
    name: 'apikey:create',
    summary: 'Create an API key; its token is printed once',
    options: [
      { flag: 'org', value: 'id', description: 'organization id (org_…)' },
      { flag: 'name', value: 'name', description: 'a name to recognise the key by' },
      { flag: 'scopes', value: 'list', description: 'comma-separated scopes, e.g. vm:read,vm:write' },
    ],
    examples: ['apikey:create --org org_demo --name ci --scopes vm:read,vm:write'],
    run: ({ opts }, settings, host) => {
      const input = { orgId: required(opts, 'org'), name: required(opts, 'name'), scopes: required(opts, 'scopes').split(',').map((s) => s.trim()) };
      return withContext(settings, async (ctx) => {
        const { key, token } = await ctx.get(CreateApiKey).execute(input, OPERATOR);
        return { id: key.id, org_id: key.orgId, name: key.name, scopes: key.scopes, token, created_at: key.createdAt.toISOString() };
      }, host);
    },
  },
  {
    name: 'apikey:revoke',
    summary: 'Revoke an API key (refused by every server process within 1 s)',
    options: [{ flag: 'id', value: 'id', description: 'API key id (key_…)' }],
    run: ({ opts }, settings, host) => {
      const id = required(opts, 'id');
      return withContext(settings, async (ctx) => {
        const key = await ctx.get(RevokeApiKey).execute({ id }, OPERATOR);
        return { id: key.id, org_id: key.orgId, revoked_at: key.revokedAt?.toISOString() ?? null };
      }, host);
    },
  },
  {
    name: 'zone:set',
    summary: 'Open or close a zone to new disks (audited)',
    options: [
      { flag: 'zone', value: 'id', description: 'zone id, e.g. id-jkt-b' },
      { flag: 'available', value: 'bool', description: 'true or false' },
    ],
    examples: ['zone:set --zone id-jkt-b --available false'],
    run: ({ opts }, settings, host) => {
      const input = { zoneId: required(opts, 'zone'), available: required(opts, 'available') };
      return withContext(settings, async (ctx) => {
        const zone = await ctx.get(SetZoneAvailability).execute(input);
        return { id: zone.id, region: zone.regionId, available: zone.available };
      }, host);
    },
  },
  {
    name: 'region:capacity',
    summary: "Set a region's disk capacity, shared by premium and ssd (audited; never below what is used)",
    options: [
      { flag: 'region', value: 'id', description: 'region id, e.g. id-jkt' },
      { flag: 'gb', value: 'n', description: 'capacity in GB' },
    ],
    examples: ['region:capacity --region id-jkt --gb 20000'],
    run: ({ opts }, settings, host) => {
      const input = { regionId: required(opts, 'region'), gb: required(opts, 'gb') };
      return withContext(settings, async (ctx) => {
        const region = await ctx.get(SetRegionCapacity).execute(input);
        return { id: region.id, name: region.name, capacity_gb: region.capacityGb };
      }, host);
    },
  },
  {
    name: 'region:vcpus',
    summary: "Set a region's vCPU capacity for servers (audited; never below what is used)",
    options: [
      { flag: 'region', value: 'id', description: 'region id, e.g. id-jkt' },
      { flag: 'vcpus', value: 'n', description: 'capacity in vCPUs' },
    ],
    examples: ['region:vcpus --region id-jkt --vcpus 256'],
    run: ({ opts }, settings, host) => {
      const input = { regionId: required(opts, 'region'), vcpus: required(opts, 'vcpus') };
      return withContext(settings, async (ctx) => {
        const region = await ctx.get(SetRegionVcpus).execute(input);
        return { id: region.id, name: region.name, vcpu_capacity: region.vcpuCapacity, vcpus_used: region.vcpusUsed };
      }, host);
    },
  },
  ...(['pause', 'resume'] as const).map((verb): CommandSpec => ({
    name: `purchases:${verb}`,
    summary: verb === 'pause'
      ? 'Refuse new server purchases, globally or in one region (audited); disks are unaffected'
      : 'Accept new server purchases again, globally or in one region (audited)',
    options: [{ flag: 'region', value: 'id', description: 'a region id; without it, the global switch', optional: true }],
    examples: [`purchases:${verb}`, `purchases:${verb} --region id-jkt`],
    run: ({ opts }, settings, host) => {
      if (opts.region === '') throw invalidRequest('--region must name a region', { field: 'region' });
      const input = { regionId: opts.region ?? null, paused: verb === 'pause' };
      return withContext(settings, (ctx) => ctx.get(SetPurchasesPaused).execute(input), host);
    },
  })),
  {
    name: 'wallet:adjust',
    summary: "Adjust an organization's wallet (credit or debit) with a reason shown to the customer (audited; the admin API's use case)",
    options: [
      { flag: 'org', value: 'id', description: 'organization id (org_…)' },
      { flag: 'currency', value: 'currency', description: 'USD or IDR' },
      { flag: 'amount', value: 'decimal', description: 'amount, e.g. 25.5' },
      { flag: 'direction', value: 'direction', description: 'credit or debit (a debit above available is refused)' },
      { flag: 'reason', value: 'text', description: 'why (1-500 characters), shown in the wallet history' },
      { flag: 'reference', value: 'text', description: 'your reference (ticket, invoice)', optional: true },
    ],
    examples: ['wallet:adjust --org org_demo --currency USD --amount 5 --direction credit --reason "Goodwill credit"'],
    run: ({ opts }, settings, host) => {
      const input = {
        orgId: required(opts, 'org'), currency: required(opts, 'currency'), amount: required(opts, 'amount'), direction: required(opts, 'direction'),
        reason: required(opts, 'reason'), reference: opts.reference,
      };
      return withContext(settings, async (ctx) => presentAdjustment(await ctx.get(AdjustWallet).execute(input, { type: 'system' })), host);
    },
  },
  {
    name: 'staff:create',
    summary: 'Create a staff member of the admin API (the first superadmin, typically) and print its token once',
    options: [
      { flag: 'email', value: 'email', description: "the staff member's email" },
      { flag: 'name', value: 'name', description: "the staff member's name" },
      { flag: 'role', value: 'role', description: 'support, billing, operator or superadmin' },
      { flag: 'expires-at', value: 'timestamp', description: 'when the token stops working (ISO 8601, at most 90 days away; default 90 days)', optional: true },
    ],
    examples: ['staff:create --email ana@support.example --name Ana --role superadmin'],
    run: ({ opts }, settings, host) => {
      const input = { email: required(opts, 'email'), name: required(opts, 'name'), role: required(opts, 'role'), expiresAt: opts.expiresAt };
      return withContext(settings, async (ctx) => {
        const { staff, token, tokenRecord } = await ctx.get(StaffAccounts).create(input);
        return { staff: presentStaff(staff), token, staff_token: presentStaffToken(tokenRecord) };
      }, host);
    },
  },
  {
    name: 'verify',
    summary: 'Check every invariant, read-only, in one snapshot; exit 1 naming each violation',
    options: [],
    run: (_input, settings, host) =>
      // Read-only: never applies migrations (a database not migrated fails with the missing table).
      withContext({ ...settings, migrationsRun: false }, async (ctx) => {
        const report = await ctx.get(VerifyInvariants).execute();
        if (report.ok) return report;
        const names = [...new Set(report.violations.map((v) => v.check))];
        throw new CommandFailed('invariant_violated', `${report.violations.length} violation(s) of ${names.join(', ')}`, report);
      }, host),
  },
];

/** Asked for help (`--help`, `help [command]`, or no command): the text to print, exit 0. */
export class HelpRequested extends Error {
  constructor(readonly text: string) {
    super('help');
    this.name = 'HelpRequested';
  }
}

/**
 * The commander program over COMMANDS. Parsing never exits the process nor prints: the chosen
 * command's run is handed to `chosen`, help text and usage errors are thrown (HelpRequested,
 * DomainError invalid_request).
 */
export function buildProgram(chosen: (run: () => Promise<unknown>) => void, settings: Settings, host: CommandHost = {}): { program: Command; output: () => string } {
  let output = '';
  const program = new Command('npm run cli --')
    .usage('<command> [options]')
    .description('Operator commands of Cloud Disk Service. Each prints one JSON object on stdout and exits 0, or an error object on stderr and exits 1.')
    .configureOutput({ writeOut: (s) => (output += s), writeErr: (s) => (output += s), outputError: () => undefined })
    .exitOverride()
    .showSuggestionAfterError()
    .helpCommand('help [command]', 'Show the help of a command')
    .addHelpText('after', '\nRun `npm run cli -- <command> --help` for a command\'s options. Build once first: npm run build.');
  for (const spec of COMMANDS) {
    const command = program.command(spec.name).description(spec.summary).exitOverride().configureOutput({ writeOut: (s) => (output += s), writeErr: (s) => (output += s), outputError: () => undefined });
    if (spec.argument) command.argument(`<${spec.argument.name}>`, spec.argument.description);
    for (const o of spec.options) command.option(`--${o.flag} <${o.value}>`, `${o.description}${o.optional ? '' : ' (required)'}`);
    if (spec.examples) command.addHelpText('after', `\nExample:\n${spec.examples.map((e) => `  npm run cli -- ${e}`).join('\n')}`);
    command.action((...args: unknown[]) => {
      const argument = spec.argument ? (args[0] as string) : undefined;
      const opts = (spec.argument ? args[1] : args[0]) as Options;
      chosen(() => spec.run({ argument, opts }, settings, host));
    });
  }
  return { program, output: () => output };
}

/**
 * Runs one CLI command and returns the JSON object it prints. Throws DomainError on bad input
 * (usage errors included, as invalid_request), CommandFailed when the command found a problem,
 * HelpRequested for help.
 */
export async function runCommand(argv: string[], settings: Settings, host: CommandHost = {}): Promise<unknown> {
  let run: (() => Promise<unknown>) | undefined;
  const { program, output } = buildProgram((r) => (run = r), settings, host);
  if (argv.length === 0) {
    program.outputHelp();
    throw new HelpRequested(output());
  }
  try {
    program.parse(argv, { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version') throw new HelpRequested(output());
    throw invalidRequest(`${err.message.replace(/^error: /, '')}; npm run cli -- --help lists the commands and their options`);
  }
  if (!run) throw new HelpRequested(output());
  return run();
}
