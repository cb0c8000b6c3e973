/**
 * What an integrator writes with the generated client: log in, list the volumes, renew one with
 * an Idempotency-Key, poll the operation until it ends, read the wallet; add an SSH key, let SSH
 * in to the disk's server from one network and ask the firewall whether a packet passes; buy a
 * server (the region's smallest plan, its first image), buy a disk attached to it, delete the
 * server (the disk is detached and kept) and then the disk.
 *
 * With RECEIVE_WEBHOOKS=1 it also receives the renewal's end as a webhook: it listens on
 * 127.0.0.1, subscribes an endpoint there to operation.succeeded (the service must allow such an
 * address: WEBHOOK_ALLOW_PRIVATE_URLS=true), checks the event's signature with the
 * standardwebhooks package and the secret shown once at creation, and deletes the endpoint.
 *
 *   BASE_URL=http://localhost:3000 EMAIL=owner@demo.test PASSWORD='demo password 123' \
 *     node examples/typescript-client/dist/main.js
 *
 * Prints one JSON line per step; exits 1 with the error envelope on a failure.
 */
import { randomUUID } from 'node:crypto';
import { createServer, IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createClient } from './generated/client';
import {
  createFirewallRule, createSshKey, createWebhookEndpoint, deleteServer, deleteVolume, deleteWebhookEndpoint, getOperation, getServerOptions, purchaseServer,
  purchaseVolume, getServerFirewall, getWallet, listVolumes, login, renewVolume } from './generated/sdk.gen';
import type { ErrorEnvelope, Operation, VolumeRenewResult } from './generated/types.gen';

const baseUrl = process.env.BASE_URL ?? 'http://localhost:3000';
const email = process.env.EMAIL ?? 'owner@demo.test';
const password = process.env.PASSWORD ?? 'demo password 123';
const termMonths = Number(process.env.TERM_MONTHS ?? '1') as 1 | 3 | 12;
const publicKey = process.env.SSH_PUBLIC_KEY ?? 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g x@y';

function print(step: string, data: unknown): void {
  process.stdout.write(`${JSON.stringify({ step, ...(data as object) })}\n`);
}

/** An error answer of the API, as the document describes it. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly envelope: ErrorEnvelope,
  ) {
    super(`${status} ${envelope.error.code}: ${envelope.error.message} (request ${envelope.error.request_id})`);
  }
}

/** The data of a 2xx, or the error envelope of a 4xx/5xx as an ApiError. */
function orThrow<T>(r: { data?: T; error?: ErrorEnvelope; response?: Response }): T {
  if (r.error !== undefined || r.data === undefined) throw new ApiError(r.response?.status ?? 0, r.error ?? unexpected(r.response));
  return r.data;
}

function unexpected(response: Response | undefined): ErrorEnvelope {
  return { error: { code: 'internal', message: `No body (status ${response?.status})`, request_id: response?.headers.get('X-Request-Id') ?? '', details: {} } };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Received {
  body: string;
  headers: IncomingHttpHeaders;
}

/** A receiver on 127.0.0.1 that answers 204 at once (process later: answer fast) and keeps what it got. */
async function startReceiver(): Promise<{ url: string; received: Received[]; close: () => void }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received, close: () => server.close() };
}

async function main(): Promise<void> {
  const client = createClient({ baseUrl });

  const session = orThrow(await login({ client, body: { email, password } }));
  print('login', { user: session.user.email, organizations: session.organizations.map((o) => o.id) });
  const auth = createClient({ baseUrl, headers: { Authorization: `Bearer ${session.token}` } });

  const page = orThrow(await listVolumes({ client: auth, query: { limit: 100 } }));
  print('volumes', { volumes: page.volumes.map((v) => ({ id: v.id, server: v.server?.name ?? null, expires_at: v.expires_at })) });
  const volume = page.volumes[0];
  if (!volume) throw new Error('The organization has no volume to renew');

  // Optionally, told of the renewal's end by a signed webhook instead of polling for it.
  const receiver = process.env.RECEIVE_WEBHOOKS === '1' ? await startReceiver() : undefined;
  const subscription = receiver
    ? orThrow(
        await createWebhookEndpoint({ client: auth, headers: { 'Idempotency-Key': randomUUID() }, body: { url: receiver.url, events: ['operation.succeeded'] } }),
      )
    : undefined;

  // The same key on a retry returns the first answer and charges nothing again.
  const key = randomUUID();
  const renew = () =>
    renewVolume({ client: auth, path: { id: volume.id }, headers: { 'Idempotency-Key': key }, body: { term_months: termMonths } });
  const accepted = await renew();
  const renewal = orThrow(accepted);
  print('renew', { status: accepted.response?.status, location: accepted.response?.headers.get('Location'), operation: renewal.operation.id });
  const retry = await renew();
  print('renew-retry', {
    status: retry.response?.status,
    replayed: retry.response?.headers.get('Idempotent-Replayed'),
    same_operation: orThrow(retry).operation.id === renewal.operation.id,
  });

  let operation: Operation = renewal.operation;
  for (let i = 0; i < 100 && (operation.status === 'pending' || operation.status === 'running'); i++) {
    await sleep(100);
    operation = orThrow(await getOperation({ client: auth, path: { id: operation.id } }));
  }
  if (operation.status !== 'succeeded') throw new Error(`Operation ${operation.id} ended ${operation.status}: ${operation.error?.message ?? 'still running'}`);
  // Operation is a union told apart by `type`: once the type is known, `result` has that type's schema, no cast.
  const result: VolumeRenewResult | null = operation.type === 'volume.renew' ? operation.result : null;
  print('operation', { id: operation.id, status: operation.status, expires_at: result?.expires_at, charged: result?.charged });

  if (receiver && subscription) {
    // Deduplicate on webhook-id (a delivery may come more than once); trust only a verified body.
    const verifier = new Webhook(subscription.secret);
    let event: { type: string; data: { id?: string } } | undefined;
    let webhookId: string | undefined;
    for (let i = 0; i < 100 && !event; i++) {
      for (const got of receiver.received) {
        const verified = verifier.verify(got.body, got.headers as Record<string, string>) as { type: string; data: { id?: string } };
        if (verified.data.id === operation.id) [event, webhookId] = [verified, String(got.headers['webhook-id'])];
      }
      if (!event) await sleep(100);
    }
    if (!event) throw new Error(`No webhook arrived for operation ${operation.id}`);
    print('webhook', { type: event.type, webhook_id: webhookId, verified: true, operation: event.data.id });
    const deleted = await deleteWebhookEndpoint({ client: auth, path: { id: subscription.webhook_endpoint.id } });
    if (deleted.error !== undefined) throw new ApiError(deleted.response?.status ?? 0, deleted.error);
    receiver.close();
  }

  const wallet = orThrow(await getWallet({ client: auth }));
  print('wallet', { balances: wallet.balances });

  // An SSH key for the servers to come, and SSH let in from one network to the disk's server.
  const sshKey = orThrow(await createSshKey({ client: auth, headers: { 'Idempotency-Key': randomUUID() }, body: { name: 'example', public_key: publicKey } }));
  print('ssh-key', { id: sshKey.id, fingerprint: sshKey.fingerprint });
  if (!volume.server) return;
  const rule = orThrow(
    await createFirewallRule({ client: auth, body: { direction: 'in', protocol: 'tcp', port: '22-22', sources: ['203.0.113.9/24'], server_id: volume.server.id } }),
  );
  print('firewall-rule', { id: rule.id, port: rule.port, sources: rule.sources });
  const firewall = orThrow(
    await getServerFirewall({ client: auth, path: { id: volume.server.id }, query: { direction: 'in', protocol: 'tcp', address: '203.0.113.50', port: '22' } }),
  );
  print('firewall', { inbound_default: firewall.inbound_default, rules: firewall.rules.map((r) => r.id), verdict: firewall.verdict });

  // A server of its own: the smallest plan the region sells, for one month.
  const region = volume.region;
  const options = orThrow(await getServerOptions({ client: auth, query: { region } }));
  const plan = options.plans.find((p) => p.in_stock);
  const image = options.images[0];
  if (!plan || !image) throw new Error(`Region ${region} sells no server now`);
  const bought = orThrow(
    await purchaseServer({
      client: auth,
      headers: { 'Idempotency-Key': randomUUID() },
      body: { name: 'example-1', region, plan: plan.id, image: image.id, term_months: 1, currency: 'USD', ssh_key_ids: [sshKey.id] },
    }),
  );
  const created = await finished(auth, bought.operation);
  const vmCreate = created.type === 'vm.create' ? created.result : null;
  print('server', { id: bought.server.id, plan: plan.id, image: image.id, operation: created.status, ipv4: vmCreate?.ipv4, charged: vmCreate?.charged });

  // A disk attached to it, then the server deleted (the disk is detached and kept), then the disk.
  const disk = orThrow(
    await purchaseVolume({
      client: auth,
      headers: { 'Idempotency-Key': randomUUID() },
      body: { name: 'example-data', region, size_gb: 10, term_months: 1, currency: 'USD', server_id: bought.server.id },
    }),
  );
  print('disk', { id: disk.volume.id, operation: (await finished(auth, disk.operation)).status, server: bought.server.id });
  const removal = orThrow(await deleteServer({ client: auth, path: { id: bought.server.id }, headers: { 'Idempotency-Key': randomUUID() } }));
  const removed = await finished(auth, removal.operation);
  print('server-deleted', { operation: removed.status, detached_volume_ids: removed.type === 'vm.delete' ? removed.result?.detached_volume_ids : undefined });
  const diskRemoval = orThrow(await deleteVolume({ client: auth, path: { id: disk.volume.id }, headers: { 'Idempotency-Key': randomUUID() } }));
  print('disk-deleted', { operation: (await finished(auth, diskRemoval.operation)).status });
}

/** Polls the operation (long-poll, 30 s at a time) until it ends; throws unless it succeeded. */
async function finished(auth: ReturnType<typeof createClient>, accepted: Operation): Promise<Operation> {
  let operation = accepted;
  for (let i = 0; i < 10 && (operation.status === 'pending' || operation.status === 'running'); i++) {
    operation = orThrow(await getOperation({ client: auth, path: { id: operation.id }, query: { wait: 30 } }));
  }
  if (operation.status !== 'succeeded') throw new Error(`Operation ${operation.id} (${operation.type}) ended ${operation.status}: ${operation.error?.message ?? 'still running'}`);
  return operation;
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ApiError ? JSON.stringify({ status: err.status, ...err.envelope }) : String(err)}\n`);
  process.exit(1);
});
