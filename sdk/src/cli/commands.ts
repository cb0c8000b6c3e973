import { readFileSync } from 'node:fs';
import { CloudDisk } from '../client.js';
import { SDK_VERSION } from '../generated/version.js';
import type { FirewallRule, Operation, Server, SshKey, TopUp, Volume, WalletTransaction } from '../generated/schema.js';
import type { ActionOptions } from '../area.js';
import { configPath, readConfig, writeConfig } from './config.js';
import { Command, EXIT, Flag, RunContext, UsageError, completionScript } from './framework.js';
import type { Column, Result } from './output.js';

/** The groups of commands, as `cds --help` and completion describe them. */
export const GROUPS: Record<string, string> = {
  context: 'Services and credentials to use',
  server: 'Virtual servers',
  volume: 'Block disks (volumes)',
  'ssh-key': 'SSH public keys given to new servers',
  'firewall-rule': 'Allow rules for servers\' traffic',
  wallet: 'Prepaid credit: balance, history, top-ups',
  operation: 'Actions that take time',
  completion: 'Shell completion scripts',
  version: 'The version of cds and of the API it speaks',
};

type Row = Record<string, unknown>;
const col = (header: string, read: (item: Row) => unknown): Column => ({ header, value: read });
const get = (member: string) => (item: Row) => item[member];

const SERVER_COLUMNS: Column[] = [
  col('ID', get('id')),
  col('NAME', get('name')),
  col('STATUS', get('status')),
  col('PLAN', get('plan')),
  col('REGION', get('region')),
  col('ZONE', get('zone')),
  col('IPV4', get('ipv4')),
  col('EXPIRES', get('expires_at')),
  col('LABELS', get('labels')),
];
const VOLUME_COLUMNS: Column[] = [
  col('ID', get('id')),
  col('NAME', get('name')),
  col('STATUS', get('status')),
  col('TYPE', get('type')),
  col('SIZE_GB', get('size_gb')),
  col('REGION', get('region')),
  col('ZONE', get('zone')),
  col('SERVER', (v) => (v.server as { id?: string } | null)?.id),
  col('EXPIRES', get('expires_at')),
];
const SSH_KEY_COLUMNS: Column[] = [col('ID', get('id')), col('NAME', get('name')), col('FINGERPRINT', get('fingerprint')), col('CREATED', get('created_at'))];
const FIREWALL_COLUMNS: Column[] = [
  col('ID', get('id')),
  col('DIRECTION', get('direction')),
  col('PROTOCOL', get('protocol')),
  col('PORT', get('port')),
  col('SOURCES', get('sources')),
  col('DESTINATIONS', get('destinations')),
  col('SERVER', get('server_id')),
  col('DESCRIPTION', get('description')),
];
const OPERATION_COLUMNS: Column[] = [
  col('ID', get('id')),
  col('TYPE', get('type')),
  col('STATUS', get('status')),
  col('SERVER', get('vm_id')),
  col('VOLUME', get('volume_id')),
  col('CREATED', get('created_at')),
  col('FINISHED', get('finished_at')),
  col('ERROR', (o) => (o.error as { code?: string } | null)?.code),
];
const TRANSACTION_COLUMNS: Column[] = [
  col('ID', get('id')),
  col('TYPE', get('type')),
  col('AMOUNT', get('amount')),
  col('CURRENCY', get('currency')),
  col('AVAILABLE_AFTER', get('available_after')),
  col('SOURCE', get('source')),
  col('OPERATION', get('operation_id')),
  col('CREATED', get('created_at')),
];
const TOP_UP_COLUMNS: Column[] = [
  col('ID', get('id')),
  col('STATUS', get('status')),
  col('AMOUNT', get('amount')),
  col('CURRENCY', get('currency')),
  col('CHECKOUT_URL', get('checkout_url')),
  col('EXPIRES', get('expires_at')),
];

const TERMS = ['1', '3', '12'];
const CURRENCIES = ['USD', 'IDR'];
const term: Flag = { name: 'term', type: 'string', value: 'MONTHS', choices: TERMS, description: 'Months paid ahead', required: true };
const currency: Flag = { name: 'currency', type: 'string', value: 'CODE', choices: CURRENCIES, description: 'The wallet currency to pay from (default USD)' };
const labelFlag: Flag = { name: 'label', type: 'string', multiple: true, value: 'KEY=VALUE', description: 'A label' };

const str = (ctx: RunContext, name: string): string | undefined => ctx.flags[name] as string | undefined;
const list = (ctx: RunContext, name: string): string[] => (ctx.flags[name] as string[] | undefined) ?? [];
const int = (ctx: RunContext, name: string): number | undefined => {
  const v = str(ctx, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number (got ${JSON.stringify(v)})`);
  return Number(v);
};
const labels = (ctx: RunContext): Record<string, string> | undefined => {
  const given = list(ctx, 'label');
  if (!given.length) return undefined;
  return Object.fromEntries(
    given.map((l) => {
      const at = l.indexOf('=');
      if (at < 1) throw new UsageError(`--label must be KEY=VALUE (got ${JSON.stringify(l)})`);
      return [l.slice(0, at), l.slice(at + 1)];
    }),
  );
};
const defined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/** Options of an action: --wait and how long. */
function actionOptions(ctx: RunContext): ActionOptions {
  return ctx.wait ? { wait: { timeout: ctx.wait.timeout } } : {};
}

/** An action's answer: the resource (after the operation, with --wait) and its operation. */
function actionResult(ctx: RunContext, answer: { operation: Operation } & Row, member: string, columns: Column[]): Result {
  const resource = answer[member] as Row;
  const operation = answer.operation;
  ctx.note(
    ctx.wait
      ? `Operation ${operation.id} (${operation.type}) ${operation.status}.`
      : `Accepted: operation ${operation.id} (${operation.type}) is ${operation.status}; wait for it with: cds operation wait ${operation.id}`,
  );
  return { data: answer, ...tableOf(resource, columns) };
}

/** A dry run's answer: the price, nothing reserved. */
function dryRun(answer: unknown): Result {
  const { amount } = answer as unknown as { amount: { currency: string; amount: string } };
  return { data: answer, message: `It would be charged ${amount.amount} ${amount.currency} now; nothing was reserved.` };
}

/** Table mode shows this one item, a line per column. */
function tableOf(item: Row | undefined, columns: Column[]): Partial<Result> {
  return item ? { item, columns } : {};
}

async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

function deleted(ctx: RunContext, what: string, id: string): Result {
  return { data: { id, deleted: true }, message: `Deleted ${what} ${id}.` };
}

const CONTEXT: Command[] = [
  {
    path: ['context', 'create'],
    summary: 'Save a service and a credential as a context, and use it',
    args: [{ name: 'name', description: 'The context\'s name' }],
    flags: [
      { name: 'url', type: 'string', value: 'URL', description: 'The service\'s address', required: true },
      { name: 'token', type: 'string', value: 'TOKEN', description: 'An API key (cds_live_…) or a session token; prefer --token-stdin (a flag shows in the process list)' },
      { name: 'token-stdin', type: 'boolean', description: 'Read the token from standard input' },
      { name: 'email', type: 'string', value: 'EMAIL', description: 'Log in instead: the password is read from standard input (or CDS_PASSWORD); a session lasts 24 hours' },
      { name: 'org', type: 'string', value: 'ORG', description: 'Sessions: the organization to act on' },
    ],
    examples: [
      'cds context create prod --url https://api.example.com --token-stdin < key.txt',
      'echo "$CDS_PASSWORD" | cds context create me --url http://localhost:3000 --email owner@demo.test',
    ],
    async run(ctx) {
      const [name] = ctx.args;
      const url = str(ctx, 'url')!;
      let token = str(ctx, 'token') ?? (ctx.flags['token-stdin'] ? (await ctx.stdin()).trim() : undefined);
      const email = str(ctx, 'email');
      if (!token && email) {
        const password = ctx.env.CDS_PASSWORD ?? (await ctx.stdin()).replace(/\r?\n$/, '');
        token = (await new CloudDisk({ baseUrl: url, userAgent: `cds/${SDK_VERSION}` }).auth.login({ email, password })).token;
      }
      if (!token) throw new UsageError('give the credential: --token, --token-stdin, or --email with the password on standard input');
      // The credential must work before it is saved: one read of the wallet-independent region list.
      await new CloudDisk({ baseUrl: url, token, orgId: str(ctx, 'org'), userAgent: `cds/${SDK_VERSION}` }).regions.list().firstPage();
      const config = readConfig(ctx.env);
      config.contexts[name] = defined({ url, token, org: str(ctx, 'org') });
      config.current = name;
      writeConfig(config, ctx.env);
      return { data: { name, url, org: str(ctx, 'org') ?? null, current: true, file: configPath(ctx.env) }, message: `Context ${name} saved in ${configPath(ctx.env)} and in use.` };
    },
  },
  {
    path: ['context', 'list'],
    summary: 'The saved contexts (tokens are not shown)',
    examples: ['cds context list'],
    async run(ctx) {
      const config = readConfig(ctx.env);
      const rows = Object.entries(config.contexts).map(([name, c]) => ({ name, url: c.url, org: c.org ?? null, current: name === config.current }));
      return { data: rows, rows, columns: [col('NAME', get('name')), col('URL', get('url')), col('ORG', get('org')), col('CURRENT', (r) => (r.current ? '*' : ''))] };
    },
  },
  {
    path: ['context', 'use'],
    summary: 'Use another saved context',
    args: [{ name: 'name', description: 'The context\'s name' }],
    examples: ['cds context use prod'],
    async run(ctx) {
      const config = readConfig(ctx.env);
      const [name] = ctx.args;
      if (!config.contexts[name]) throw new UsageError(`no context ${name} (cds context list)`);
      config.current = name;
      writeConfig(config, ctx.env);
      return { data: { name, current: true }, message: `Using context ${name}.` };
    },
  },
  {
    path: ['context', 'delete'],
    summary: 'Forget a saved context and its token',
    args: [{ name: 'name', description: 'The context\'s name' }],
    examples: ['cds context delete old'],
    async run(ctx) {
      const config = readConfig(ctx.env);
      const [name] = ctx.args;
      if (!config.contexts[name]) throw new UsageError(`no context ${name} (cds context list)`);
      delete config.contexts[name];
      if (config.current === name) delete config.current;
      writeConfig(config, ctx.env);
      return { data: { name, deleted: true }, message: `Context ${name} deleted.` };
    },
  },
];

const SERVER: Command[] = [
  {
    path: ['server', 'list'],
    summary: 'The servers of the organization (every page)',
    flags: [
      { name: 'status', type: 'string', value: 'STATUS', description: 'Only this status (deleted ones are listed only so)' },
      { name: 'region', type: 'string', value: 'REGION', description: 'Only this region' },
      { name: 'name', type: 'string', value: 'NAME', description: 'Only this exact name' },
      labelFlag,
    ],
    examples: ['cds server list', 'cds server list --label env=prod -o json'],
    async run(ctx) {
      const rows = await all(ctx.client().servers.list(defined({ status: str(ctx, 'status') as Server['status'] | undefined, region: str(ctx, 'region'), name: str(ctx, 'name'), label: list(ctx, 'label').length ? list(ctx, 'label') : undefined })));
      return { data: rows, rows: rows as unknown as Row[], columns: SERVER_COLUMNS };
    },
  },
  {
    path: ['server', 'describe'],
    summary: 'One server',
    args: [{ name: 'id', description: 'The server\'s id (vm_…)' }],
    examples: ['cds server describe vm_demoweb1', 'cds server describe vm_demoweb1 -o yaml'],
    async run(ctx) {
      const server = await ctx.client().servers.get(ctx.args[0]);
      return { data: server, ...tableOf(server as unknown as Row, [...SERVER_COLUMNS, col('IMAGE', get('image')), col('VCPUS', get('vcpus')), col('MEMORY_GB', get('memory_gb')), col('VOLUMES', get('volume_ids'))]) };
    },
  },
  {
    path: ['server', 'create'],
    summary: 'Buy a server for a prepaid term, charged to the wallet',
    flags: [
      { name: 'name', type: 'string', value: 'NAME', description: 'Its name (unique among live servers)', required: true },
      { name: 'region', type: 'string', value: 'REGION', description: 'The region', required: true },
      { name: 'plan', type: 'string', value: 'PLAN', description: 'The plan (the plans of a region: GET /v1/server-options)', required: true },
      { name: 'image', type: 'string', value: 'IMAGE', description: 'The operating system image', required: true },
      term,
      currency,
      { name: 'zone', type: 'string', value: 'ZONE', description: 'The zone (default: one with room)' },
      { name: 'ssh-key', type: 'string', multiple: true, value: 'ID', description: 'An SSH key to put on it' },
      { name: 'user-data', type: 'string', value: 'FILE', description: 'A cloud-init file' },
      labelFlag,
    ],
    action: true,
    examples: [
      'cds server create --name web-2 --region id-jkt --plan cx1 --image ubuntu-24.04 --term 1 --wait',
      'cds server create --name web-3 --region id-jkt --plan cx2 --image debian-12 --term 3 --ssh-key ssh_… -o json',
    ],
    async run(ctx) {
      const userData = str(ctx, 'user-data');
      const answer = await ctx.client().servers.create(
        defined({
          name: str(ctx, 'name')!,
          region: str(ctx, 'region')!,
          plan: str(ctx, 'plan')!,
          image: str(ctx, 'image')!,
          term_months: Number(str(ctx, 'term')) as 1 | 3 | 12,
          currency: (str(ctx, 'currency') ?? 'USD') as 'USD' | 'IDR',
          zone: str(ctx, 'zone'),
          ssh_key_ids: list(ctx, 'ssh-key').length ? list(ctx, 'ssh-key') : undefined,
          user_data: userData === undefined ? undefined : readFileSync(userData, 'utf8'),
          labels: labels(ctx),
        }),
        actionOptions(ctx),
      );
      return actionResult(ctx, answer as unknown as { operation: Operation } & Row, 'server', SERVER_COLUMNS);
    },
  },
  ...(
    [
      ['start', 'Power a stopped server on', [], (c: CloudDisk, id: string, ctx: RunContext) => c.servers.start(id, actionOptions(ctx))],
      [
        'stop',
        'Shut a server down (ACPI; --force cuts the power)',
        [{ name: 'force', type: 'boolean', description: 'Cut the power instead of a clean shutdown' }],
        (c: CloudDisk, id: string, ctx: RunContext) => c.servers.stop(id, ctx.flags.force ? { force: true } : undefined, actionOptions(ctx)),
      ],
      [
        'reboot',
        'Restart a server (--hard resets it)',
        [{ name: 'hard', type: 'boolean', description: 'Reset instead of a clean restart' }],
        (c: CloudDisk, id: string, ctx: RunContext) => c.servers.reboot(id, ctx.flags.hard ? { hard: true } : undefined, actionOptions(ctx)),
      ],
      [
        'renew',
        'Pay a server\'s next term now',
        [term, currency],
        (c: CloudDisk, id: string, ctx: RunContext) => c.servers.renew(id, defined({ term_months: Number(str(ctx, 'term')) as 1 | 3 | 12, currency: str(ctx, 'currency') as 'USD' | 'IDR' | undefined }), actionOptions(ctx)),
      ],
      ['delete', 'Delete a server: its disks are detached and kept; its term is not refunded', [], (c: CloudDisk, id: string, ctx: RunContext) => c.servers.delete(id, actionOptions(ctx))],
    ] as [string, string, Flag[], (c: CloudDisk, id: string, ctx: RunContext) => Promise<unknown>][]
  ).map(
    ([verb, summary, flags, call]): Command => ({
      path: ['server', verb],
      summary,
      args: [{ name: 'id', description: 'The server\'s id (vm_…)' }],
      flags,
      action: true,
      examples: [`cds server ${verb} vm_demoweb1${verb === 'renew' ? ' --term 3' : ''} --wait`, `cds server ${verb} vm_demoweb1${verb === 'renew' ? ' --term 1' : ''} -o json`],
      async run(ctx) {
        const answer = await call(ctx.client(), ctx.args[0], ctx);
        return actionResult(ctx, answer as { operation: Operation } & Row, 'server', SERVER_COLUMNS);
      },
    }),
  ),
  {
    path: ['server', 'resize'],
    summary: 'Move a stopped server to another plan, paying the difference for the rest of its term',
    args: [{ name: 'id', description: 'The server\'s id (vm_…)' }],
    flags: [
      { name: 'plan', type: 'string', value: 'PLAN', description: 'The new plan (its boot disk at least the server\'s)', required: true },
      { name: 'dry-run', type: 'boolean', description: 'Only tell the price; nothing is reserved or changed' },
    ],
    action: true,
    examples: ['cds server resize vm_demoweb1 --plan cx2 --dry-run', 'cds server resize vm_demoweb1 --plan cx2 --wait'],
    async run(ctx) {
      if (ctx.flags['dry-run']) return dryRun(await ctx.client().servers.resize(ctx.args[0], { plan: str(ctx, 'plan')!, dry_run: true }));
      const answer = await ctx.client().servers.resize(ctx.args[0], { plan: str(ctx, 'plan')! }, actionOptions(ctx));
      return actionResult(ctx, answer as unknown as { operation: Operation } & Row, 'server', SERVER_COLUMNS);
    },
  },
  {
    path: ['server', 'rebuild'],
    summary: 'Reinstall a server\'s boot disk from an image: everything on it is lost',
    args: [{ name: 'id', description: 'The server\'s id (vm_…)' }],
    flags: [
      { name: 'image', type: 'string', value: 'IMAGE', description: 'The operating system image', required: true },
      { name: 'ssh-key', type: 'string', multiple: true, value: 'ID', description: 'An SSH key to put on it (default: the server\'s keys)' },
      { name: 'user-data', type: 'string', value: 'FILE', description: 'A cloud-init file' },
    ],
    action: true,
    examples: ['cds server rebuild vm_demoweb1 --image ubuntu-24.04 --ssh-key ssh_… --wait'],
    async run(ctx) {
      const userData = str(ctx, 'user-data');
      const answer = await ctx.client().servers.rebuild(
        ctx.args[0],
        defined({
          image: str(ctx, 'image')!,
          ssh_key_ids: list(ctx, 'ssh-key').length ? list(ctx, 'ssh-key') : undefined,
          user_data: userData === undefined ? undefined : readFileSync(userData, 'utf8'),
        }),
        actionOptions(ctx),
      );
      return actionResult(ctx, answer as unknown as { operation: Operation } & Row, 'server', SERVER_COLUMNS);
    },
  },
  {
    path: ['server', 'console'],
    summary: 'A console session (VNC) of a running server: its address and one-time password',
    args: [{ name: 'id', description: 'The server\'s id (vm_…)' }],
    examples: ['cds server console vm_demoweb1', 'cds server console vm_demoweb1 -o json | jq -r .url'],
    async run(ctx) {
      const console = await ctx.client().servers.createConsole(ctx.args[0]);
      return { data: console, ...tableOf(console as unknown as Row, [col('TYPE', get('type')), col('URL', get('url')), col('PASSWORD', get('password')), col('EXPIRES', get('expires_at'))]) };
    },
  },
];

const VOLUME: Command[] = [
  {
    path: ['volume', 'list'],
    summary: 'The volumes of the organization (every page)',
    flags: [
      { name: 'status', type: 'string', value: 'STATUS', description: 'Only this status' },
      { name: 'region', type: 'string', value: 'REGION', description: 'Only this region' },
      { name: 'server', type: 'string', value: 'ID', description: 'Only the volumes on this server' },
      { name: 'name', type: 'string', value: 'NAME', description: 'Only this exact name' },
      labelFlag,
    ],
    examples: ['cds volume list', 'cds volume list --server vm_demoweb1 -o json'],
    async run(ctx) {
      const rows = await all(
        ctx.client().volumes.list(
          defined({ status: str(ctx, 'status') as Volume['status'] | undefined, region: str(ctx, 'region'), server_id: str(ctx, 'server'), name: str(ctx, 'name'), label: list(ctx, 'label').length ? list(ctx, 'label') : undefined }),
        ),
      );
      return { data: rows, rows: rows as unknown as Row[], columns: VOLUME_COLUMNS };
    },
  },
  {
    path: ['volume', 'describe'],
    summary: 'One volume',
    args: [{ name: 'id', description: 'The volume\'s id (vol_…)' }],
    examples: ['cds volume describe vol_demodata1'],
    async run(ctx) {
      const volume = await ctx.client().volumes.get(ctx.args[0]);
      return { data: volume, ...tableOf(volume as unknown as Row, [...VOLUME_COLUMNS, col('MOUNT_PATH', get('mount_path')), col('LABELS', get('labels'))]) };
    },
  },
  {
    path: ['volume', 'create'],
    summary: 'Buy a volume for a prepaid term, attached to a server or not',
    flags: [
      { name: 'name', type: 'string', value: 'NAME', description: 'Its name', required: true },
      { name: 'region', type: 'string', value: 'REGION', description: 'The region', required: true },
      { name: 'size', type: 'string', value: 'GB', description: 'Size in GB', required: true },
      term,
      currency,
      { name: 'type', type: 'string', value: 'TYPE', choices: ['premium', 'ssd'], description: 'premium (default) or ssd' },
      { name: 'server', type: 'string', value: 'ID', description: 'Attach it to this server (in its zone)' },
      { name: 'zone', type: 'string', value: 'ZONE', description: 'The zone, without --server' },
      labelFlag,
    ],
    action: true,
    examples: [
      'cds volume create --name data --region id-jkt --size 50 --term 1 --server vm_demoweb1 --wait',
      'cds volume create --name scratch --region id-jkt --size 20 --type ssd --term 1 -o json',
    ],
    async run(ctx) {
      const answer = await ctx.client().volumes.create(
        defined({
          name: str(ctx, 'name')!,
          region: str(ctx, 'region')!,
          size_gb: int(ctx, 'size')!,
          term_months: Number(str(ctx, 'term')) as 1 | 3 | 12,
          currency: (str(ctx, 'currency') ?? 'USD') as 'USD' | 'IDR',
          type: str(ctx, 'type') as 'premium' | 'ssd' | undefined,
          server_id: str(ctx, 'server'),
          zone: str(ctx, 'zone'),
          labels: labels(ctx),
        }),
        actionOptions(ctx),
      );
      return actionResult(ctx, answer as unknown as { operation: Operation } & Row, 'volume', VOLUME_COLUMNS);
    },
  },
  {
    path: ['volume', 'attach'],
    summary: 'Attach a volume to a server of its zone',
    args: [{ name: 'id', description: 'The volume\'s id (vol_…)' }],
    flags: [
      { name: 'server', type: 'string', value: 'ID', description: 'The server', required: true },
      { name: 'mount-path', type: 'string', value: 'PATH', description: 'Where to mount it (default /mnt/<name>)' },
    ],
    action: true,
    examples: ['cds volume attach vol_… --server vm_demoweb1 --wait'],
    async run(ctx) {
      const answer = await ctx.client().volumes.attach(ctx.args[0], defined({ server_id: str(ctx, 'server')!, mount_path: str(ctx, 'mount-path') }), actionOptions(ctx));
      return actionResult(ctx, answer as unknown as { operation: Operation } & Row, 'volume', VOLUME_COLUMNS);
    },
  },
  {
    path: ['volume', 'detach'],
    summary: 'Detach a volume from its server (kept, with its data)',
    args: [{ name: 'id', description: 'The volume\'s id (vol_…)' }],
    action: true,
    examples: ['cds volume detach vol_… --wait'],
    async run(ctx) {
      const answer = await ctx.client().volumes.detach(ctx.args[0], actionOptions(ctx));
      return actionResult(ctx, answer as unknown as { operation: Operation } & Row, 'volume', VOLUME_COLUMNS);
    },
  },
  {
    path: ['volume', 'renew'],
    summary: 'Pay a volume\'s next term now',
    args: [{ name: 'id', description: 'The volume\'s id (vol_…)' }],
    flags: [term, currency],
    action: true,
    examples: ['cds volume renew vol_demodata1 --term 3 --wait'],
    async run(ctx) {
      const answer = await ctx.client().volumes.renew(ctx.args[0], defined({ term_months: Number(str(ctx, 'term')) as 1 | 3 | 12, currency: str(ctx, 'currency') as 'USD' | 'IDR' | undefined }), actionOptions(ctx));
      return actionResult(ctx, answer as unknown as { operation: Operation } & Row, 'volume', VOLUME_COLUMNS);
    },
  },
  {
    path: ['volume', 'resize'],
    summary: 'Grow a volume (attached or not), paying the added size for the rest of its term',
    args: [{ name: 'id', description: 'The volume\'s id (vol_…)' }],
    flags: [
      { name: 'size', type: 'string', value: 'GB', description: 'The new size in GB (larger than today\'s, by the offer\'s step)', required: true },
      { name: 'dry-run', type: 'boolean', description: 'Only tell the price; nothing is reserved or changed' },
    ],
    action: true,
    examples: ['cds volume resize vol_demodata1 --size 200 --dry-run', 'cds volume resize vol_demodata1 --size 200 --wait'],
    async run(ctx) {
      const sizeGb = int(ctx, 'size')!;
      if (ctx.flags['dry-run']) return dryRun(await ctx.client().volumes.resize(ctx.args[0], { size_gb: sizeGb, dry_run: true }));
      const answer = await ctx.client().volumes.resize(ctx.args[0], { size_gb: sizeGb }, actionOptions(ctx));
      return actionResult(ctx, answer as unknown as { operation: Operation } & Row, 'volume', VOLUME_COLUMNS);
    },
  },
  {
    path: ['volume', 'delete'],
    summary: 'Delete a volume and its data; its term is not refunded',
    args: [{ name: 'id', description: 'The volume\'s id (vol_…)' }],
    flags: [{ name: 'detach', type: 'boolean', description: 'Detach it first when it is attached' }],
    action: true,
    examples: ['cds volume delete vol_… --wait', 'cds volume delete vol_… --detach --wait'],
    async run(ctx) {
      const answer = await ctx.client().volumes.delete(ctx.args[0], ctx.flags.detach ? { detach: 'true' } : undefined, actionOptions(ctx));
      return actionResult(ctx, answer as unknown as { operation: Operation } & Row, 'volume', VOLUME_COLUMNS);
    },
  },
];

const SSH_KEY: Command[] = [
  {
    path: ['ssh-key', 'list'],
    summary: 'The SSH keys of the organization (every page)',
    examples: ['cds ssh-key list', 'cds ssh-key list -o json'],
    async run(ctx) {
      const rows = await all(ctx.client().sshKeys.list());
      return { data: rows, rows: rows as unknown as Row[], columns: SSH_KEY_COLUMNS };
    },
  },
  {
    path: ['ssh-key', 'describe'],
    summary: 'One SSH key',
    args: [{ name: 'id', description: 'The key\'s id (ssh_…)' }],
    examples: ['cds ssh-key describe ssh_…'],
    async run(ctx) {
      const key: SshKey = await ctx.client().sshKeys.get(ctx.args[0]);
      return { data: key, ...tableOf(key as unknown as Row, [...SSH_KEY_COLUMNS, col('PUBLIC_KEY', get('public_key'))]) };
    },
  },
  {
    path: ['ssh-key', 'create'],
    summary: 'Add an SSH public key (given to servers created with it)',
    flags: [
      { name: 'name', type: 'string', value: 'NAME', description: 'Its name', required: true },
      { name: 'public-key', type: 'string', value: 'KEY', description: 'The key, as in authorized_keys (ssh-ed25519 AAAA…)' },
      { name: 'public-key-file', type: 'string', value: 'FILE', description: 'Read the key from this file (~/.ssh/id_ed25519.pub)' },
    ],
    examples: ['cds ssh-key create --name laptop --public-key-file ~/.ssh/id_ed25519.pub', 'cds ssh-key create --name ci --public-key "$(cat ci.pub)" -o json'],
    async run(ctx) {
      const file = str(ctx, 'public-key-file');
      const publicKey = str(ctx, 'public-key') ?? (file ? readFileSync(file, 'utf8').trim() : undefined);
      if (!publicKey) throw new UsageError('give the key: --public-key or --public-key-file');
      const key = await ctx.client().sshKeys.create({ name: str(ctx, 'name')!, public_key: publicKey });
      return { data: key, ...tableOf(key as unknown as Row, SSH_KEY_COLUMNS) };
    },
  },
  {
    path: ['ssh-key', 'delete'],
    summary: 'Remove an SSH key (servers that have it keep it)',
    args: [{ name: 'id', description: 'The key\'s id (ssh_…)' }],
    examples: ['cds ssh-key delete ssh_…'],
    async run(ctx) {
      await ctx.client().sshKeys.delete(ctx.args[0]);
      return deleted(ctx, 'SSH key', ctx.args[0]);
    },
  },
];

const FIREWALL_RULE: Command[] = [
  {
    path: ['firewall-rule', 'list'],
    summary: 'The firewall rules of the organization (every page)',
    flags: [{ name: 'server', type: 'string', value: 'ID', description: 'Only the rules of this server' }],
    examples: ['cds firewall-rule list', 'cds firewall-rule list --server vm_demoweb1 -o yaml'],
    async run(ctx) {
      const rows: FirewallRule[] = await all(ctx.client().firewallRules.list(defined({ server_id: str(ctx, 'server') })));
      return { data: rows, rows: rows as unknown as Row[], columns: FIREWALL_COLUMNS };
    },
  },
  {
    path: ['firewall-rule', 'describe'],
    summary: 'One firewall rule',
    args: [{ name: 'id', description: 'The rule\'s id (fw_…)' }],
    examples: ['cds firewall-rule describe fw_…'],
    async run(ctx) {
      const rule = await ctx.client().firewallRules.get(ctx.args[0]);
      return { data: rule, ...tableOf(rule as unknown as Row, FIREWALL_COLUMNS) };
    },
  },
  {
    path: ['firewall-rule', 'create'],
    summary: 'Allow traffic in or out of a server (or of every server without --server)',
    flags: [
      { name: 'direction', type: 'string', value: 'DIRECTION', choices: ['in', 'out'], description: 'in or out', required: true },
      { name: 'protocol', type: 'string', value: 'PROTOCOL', choices: ['tcp', 'udp', 'icmp'], description: 'tcp, udp or icmp', required: true },
      { name: 'port', type: 'string', value: 'PORT', description: 'A port or a range (80, 8000-8080); not with icmp' },
      { name: 'source', type: 'string', multiple: true, value: 'CIDR', description: 'Inbound: where from' },
      { name: 'destination', type: 'string', multiple: true, value: 'CIDR', description: 'Outbound: where to' },
      { name: 'server', type: 'string', value: 'ID', description: 'The server it applies to' },
      { name: 'description', type: 'string', value: 'TEXT', description: 'What it is for' },
    ],
    examples: ['cds firewall-rule create --direction in --protocol tcp --port 22 --source 203.0.113.0/24 --server vm_demoweb1'],
    async run(ctx) {
      const rule = await ctx.client().firewallRules.create(
        defined({
          direction: str(ctx, 'direction') as 'in' | 'out',
          protocol: str(ctx, 'protocol') as 'tcp' | 'udp' | 'icmp',
          port: str(ctx, 'port'),
          sources: list(ctx, 'source').length ? list(ctx, 'source') : undefined,
          destinations: list(ctx, 'destination').length ? list(ctx, 'destination') : undefined,
          server_id: str(ctx, 'server'),
          description: str(ctx, 'description'),
        }),
      );
      return { data: rule, ...tableOf(rule as unknown as Row, FIREWALL_COLUMNS) };
    },
  },
  {
    path: ['firewall-rule', 'delete'],
    summary: 'Remove a firewall rule',
    args: [{ name: 'id', description: 'The rule\'s id (fw_…)' }],
    examples: ['cds firewall-rule delete fw_…'],
    async run(ctx) {
      await ctx.client().firewallRules.delete(ctx.args[0]);
      return deleted(ctx, 'firewall rule', ctx.args[0]);
    },
  },
];

const WALLET: Command[] = [
  {
    path: ['wallet', 'balance'],
    summary: 'What the wallet holds, per currency',
    examples: ['cds wallet balance', 'cds wallet balance -o json | jq -r \'.balances[] | select(.currency == "USD") | .available\''],
    async run(ctx) {
      const wallet = await ctx.client().wallet.get();
      return { data: wallet, rows: wallet.balances as unknown as Row[], columns: [col('CURRENCY', get('currency')), col('AVAILABLE', get('available')), col('RESERVED', get('reserved'))] };
    },
  },
  {
    path: ['wallet', 'history'],
    summary: 'The wallet\'s transactions, newest first (every page)',
    flags: [
      currency,
      { name: 'type', type: 'string', value: 'TYPE', choices: ['credit', 'hold', 'capture', 'release'], description: 'Only this type' },
      { name: 'limit', type: 'string', value: 'N', description: 'At most this many (default: all)' },
    ],
    examples: ['cds wallet history', 'cds wallet history --currency USD --type capture -o json'],
    async run(ctx) {
      const rows: WalletTransaction[] = await ctx
        .client()
        .wallet.listTransactions(defined({ currency: str(ctx, 'currency') as 'USD' | 'IDR' | undefined, type: str(ctx, 'type') as WalletTransaction['type'] | undefined }))
        .toArray(int(ctx, 'limit') ?? Infinity);
      return { data: rows, rows: rows as unknown as Row[], columns: TRANSACTION_COLUMNS };
    },
  },
  {
    path: ['wallet', 'top-up'],
    summary: 'Add money: opens a checkout and prints its address (pay there; the wallet is credited when the payment arrives)',
    args: [{ name: 'amount', description: 'The amount, a decimal in the currency (25.00)' }],
    flags: [{ ...currency, required: true, description: 'The currency to add' }],
    examples: ['cds wallet top-up 25.00 --currency USD', 'cds wallet top-up 400000 --currency IDR -o json | jq -r .checkout_url'],
    async run(ctx) {
      const { top_up: topUp }: { top_up: TopUp } = await ctx.client().topUps.create({ amount: ctx.args[0], currency: str(ctx, 'currency') as 'USD' | 'IDR' });
      ctx.note(`Pay at ${topUp.checkout_url} before ${topUp.expires_at}.`);
      return { data: topUp, ...tableOf(topUp as unknown as Row, TOP_UP_COLUMNS) };
    },
  },
];

const OPERATION: Command[] = [
  {
    path: ['operation', 'wait'],
    summary: 'Wait until an operation ended (long-polls, one request a minute; no polling loop); exit 10 if it failed',
    args: [{ name: 'id', description: 'The operation\'s id (op_…)' }],
    flags: [{ name: 'timeout', type: 'string', value: 'SECONDS', description: 'How long to wait (default 600)' }],
    examples: ['cds operation wait op_…', 'cds operation wait op_… --timeout 120 -o json'],
    async run(ctx) {
      const operation = await ctx.client().operations.wait(ctx.args[0], { timeout: (int(ctx, 'timeout') ?? 600) * 1000 });
      const columns = [...OPERATION_COLUMNS, col('STEPS', (o) => (o.steps as { name: string; status: string }[]).map((s) => `${s.name}:${s.status}`))];
      // A failed operation is printed, and the exit code says it failed.
      return { data: operation, ...tableOf(operation as unknown as Row, columns), ...(operation.status === 'failed' ? { exitCode: EXIT.operationFailed } : {}) };
    },
  },
  {
    path: ['operation', 'describe'],
    summary: 'One operation, as it is now',
    args: [{ name: 'id', description: 'The operation\'s id (op_…)' }],
    examples: ['cds operation describe op_…'],
    async run(ctx) {
      const operation = await ctx.client().operations.get(ctx.args[0]);
      return { data: operation, ...tableOf(operation as unknown as Row, OPERATION_COLUMNS) };
    },
  },
  {
    path: ['operation', 'list'],
    summary: 'The operations, newest first',
    flags: [
      { name: 'server', type: 'string', value: 'ID', description: 'Only those of this server (and of its disks)' },
      { name: 'volume', type: 'string', value: 'ID', description: 'Only those of this volume' },
      { name: 'status', type: 'string', value: 'STATUS', choices: ['pending', 'running', 'succeeded', 'failed'], description: 'Only this status' },
      { name: 'limit', type: 'string', value: 'N', description: 'At most this many (default 20)' },
    ],
    examples: ['cds operation list --server vm_demoweb1', 'cds operation list --status failed -o json'],
    async run(ctx) {
      const rows = await ctx
        .client()
        .operations.list(defined({ vm_id: str(ctx, 'server'), volume_id: str(ctx, 'volume'), status: str(ctx, 'status') as Operation['status'] | undefined }))
        .toArray(int(ctx, 'limit') ?? 20);
      return { data: rows, rows: rows as unknown as Row[], columns: OPERATION_COLUMNS };
    },
  },
];

/** Every command of cds but completion (which needs the table). */
const BASE: Command[] = [
  ...CONTEXT,
  ...SERVER,
  ...VOLUME,
  ...SSH_KEY,
  ...FIREWALL_RULE,
  ...WALLET,
  ...OPERATION,
  {
    path: ['version'],
    summary: 'The version of cds (of @cloud-disk/sdk) and of the API it speaks',
    examples: ['cds version', 'cds version -o json'],
    async run() {
      const { API_VERSION } = await import('../generated/version.js');
      return { data: { cds: SDK_VERSION, api: API_VERSION }, message: `cds ${SDK_VERSION} (API v${API_VERSION})` };
    },
  },
];

export const COMMANDS: Command[] = [
  ...BASE,
  ...(['bash', 'zsh'] as const).map(
    (shell): Command => ({
      path: ['completion', shell],
      summary: `The ${shell} completion script`,
      examples: shell === 'bash' ? ['source <(cds completion bash)', 'cds completion bash > /etc/bash_completion.d/cds'] : ['source <(cds completion zsh)', 'cds completion zsh > "${fpath[1]}/_cds"'],
      async run() {
        const script = completionScript(COMMANDS, shell, GROUPS);
        return { data: script, message: script.trimEnd() };
      },
    }),
  ),
];
