import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { CreateApiKey, OPERATOR, RevokeApiKey } from '../modules/auth/application/api-keys.use-cases';
import { CreditWallet } from '../modules/operator/credit-wallet.use-case';
import { LoadSeed } from '../modules/operator/load-seed.use-case';
import { SetPurchasesPaused, SetRegionCapacity, SetRegionVcpus, SetZoneAvailability } from '../modules/options/application/catalog-admin.use-cases';
import { parseSeedFile } from '../modules/operator/seed-file';
import { Settings } from '../shared/config/settings';
import { DomainError, invalidRequest } from '../shared/kernel/errors/domain-error';
import { VerifyInvariants } from '../modules/verification/application/verify-invariants.use-case';
import { CliModule } from './cli.module';

export const USAGE = `Usage: npm run cli -- <command>
  migrate                                              apply pending migrations
  seed FILE                                            load a seed file (seed-format.md) in one transaction
  wallet:credit --org ID --currency USD|IDR --amount DECIMAL
  apikey:create --org ID --name NAME --scopes vm:read,vm:write
  apikey:revoke --id ID
  zone:set --zone ID --available true|false            open or close a zone to new disks
  region:capacity --region ID --gb N                   set a region's disk capacity (premium and ssd share it)
  region:vcpus --region ID --vcpus N                   set a region's vCPU capacity for servers
  purchases:pause [--region ID]                        refuse new server purchases (globally, or in one region)
  purchases:resume [--region ID]                       accept new server purchases again (globally, or in one region)
  verify                                               check every invariant (read-only, one snapshot); exit 1 naming each violation`;

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

function options(args: string[], names: string[]): Options {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])),
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > 0) throw invalidRequest(`Unexpected argument ${positionals[0]}`);
    return values as Options;
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw invalidRequest(err instanceof Error ? err.message : String(err));
  }
}

function required(opts: Options, name: string): string {
  const value = opts[name];
  if (value === undefined || value === '') throw invalidRequest(`--${name} is required`, { field: name });
  return value;
}

async function withContext<T>(settings: Settings, work: (ctx: INestApplicationContext) => Promise<T>): Promise<T> {
  const ctx = await NestFactory.createApplicationContext(CliModule.forRoot(settings), { logger: false, abortOnError: false });
  try {
    return await work(ctx);
  } finally {
    await ctx.close();
  }
}

/** Runs one CLI command and returns the JSON object it prints. Throws DomainError on bad input. */
export async function runCommand(argv: string[], settings: Settings): Promise<unknown> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'migrate': {
      options(rest, []);
      return withContext({ ...settings, migrationsRun: false }, async (ctx) => {
        const applied = await ctx.get(DataSource).runMigrations({ transaction: 'all' });
        return { applied: applied.map((m) => m.name) };
      });
    }
    case 'seed': {
      const [file, ...extra] = rest;
      if (!file || extra.length > 0) throw invalidRequest('seed takes one argument: the seed file');
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        throw invalidRequest(`Cannot read the seed file ${file}`);
      }
      const seed = parseSeedFile(text);
      return withContext(settings, (ctx) => ctx.get(LoadSeed).execute(seed));
    }
    case 'wallet:credit': {
      const opts = options(rest, ['org', 'currency', 'amount']);
      const input = { orgId: required(opts, 'org'), currency: required(opts, 'currency'), amount: required(opts, 'amount') };
      return withContext(settings, async (ctx) => {
        const balance = await ctx.get(CreditWallet).execute(input);
        return { org_id: input.orgId, currency: balance.currency, available: balance.available.format(), reserved: balance.reserved.format() };
      });
    }
    case 'apikey:create': {
      const opts = options(rest, ['org', 'name', 'scopes']);
      const input = { orgId: required(opts, 'org'), name: required(opts, 'name'), scopes: required(opts, 'scopes').split(',').map((s) => s.trim()) };
      return withContext(settings, async (ctx) => {
        const { key, token } = await ctx.get(CreateApiKey).execute(input, OPERATOR);
        return { id: key.id, org_id: key.orgId, name: key.name, scopes: key.scopes, token, created_at: key.createdAt.toISOString() };
      });
    }
    case 'apikey:revoke': {
      const opts = options(rest, ['id']);
      const id = required(opts, 'id');
      return withContext(settings, async (ctx) => {
        const key = await ctx.get(RevokeApiKey).execute({ id }, OPERATOR);
        return { id: key.id, org_id: key.orgId, revoked_at: key.revokedAt?.toISOString() ?? null };
      });
    }
    case 'zone:set': {
      const opts = options(rest, ['zone', 'available']);
      const input = { zoneId: required(opts, 'zone'), available: required(opts, 'available') };
      return withContext(settings, async (ctx) => {
        const zone = await ctx.get(SetZoneAvailability).execute(input);
        return { id: zone.id, region: zone.regionId, available: zone.available };
      });
    }
    case 'region:capacity': {
      const opts = options(rest, ['region', 'gb']);
      const input = { regionId: required(opts, 'region'), gb: required(opts, 'gb') };
      return withContext(settings, async (ctx) => {
        const region = await ctx.get(SetRegionCapacity).execute(input);
        return { id: region.id, name: region.name, capacity_gb: region.capacityGb };
      });
    }
    case 'region:vcpus': {
      const opts = options(rest, ['region', 'vcpus']);
      const input = { regionId: required(opts, 'region'), vcpus: required(opts, 'vcpus') };
      return withContext(settings, async (ctx) => {
        const region = await ctx.get(SetRegionVcpus).execute(input);
        return { id: region.id, name: region.name, vcpu_capacity: region.vcpuCapacity, vcpus_used: region.vcpusUsed };
      });
    }
    case 'purchases:pause':
    case 'purchases:resume': {
      const opts = options(rest, ['region']);
      if (opts.region === '') throw invalidRequest('--region must name a region', { field: 'region' });
      const input = { regionId: opts.region ?? null, paused: command === 'purchases:pause' };
      return withContext(settings, (ctx) => ctx.get(SetPurchasesPaused).execute(input));
    }
    case 'verify': {
      options(rest, []);
      // Read-only: never applies migrations (a database not migrated fails with the missing table).
      return withContext({ ...settings, migrationsRun: false }, async (ctx) => {
        const report = await ctx.get(VerifyInvariants).execute();
        if (report.ok) return report;
        const names = [...new Set(report.violations.map((v) => v.check))];
        throw new CommandFailed('invariant_violated', `${report.violations.length} violation(s) of ${names.join(', ')}`, report);
      });
    }
    default:
      throw invalidRequest(command ? `Unknown command ${command}\n${USAGE}` : USAGE);
  }
}
