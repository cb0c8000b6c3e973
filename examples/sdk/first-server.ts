/**
 * The first-server tutorial with @cloud-disk/sdk: an SSH key, a server bought and waited for, a
 * new disk attached to it, both deleted, and what the wallet shows. The wallet must hold at
 * least 5.50 USD (step 2 of the tutorial tops it up).
 *
 *   CDS_URL=http://localhost:3000 CDS_TOKEN=cds_live_… node first-server.js
 *
 * Prints one line per step.
 */
import { CloudDisk, InsufficientBalanceError, OperationFailedError } from '@cloud-disk/sdk';

const client = new CloudDisk({ baseUrl: process.env.CDS_URL ?? 'http://localhost:3000', token: process.env.CDS_TOKEN, userAgent: 'first-server-example/1' });

async function main(): Promise<void> {
  // 1. An SSH key, given to the server at its creation.
  const key = await client.sshKeys.create({
    name: 'laptop',
    public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHvTDhEvWQ0L8QuV1iFBfBAxRYpza78MeK4T94kxGQep alice@laptop',
  });
  console.log(`ssh key ${key.id} ${key.fingerprint}`);

  // 2. The region's smallest plan in stock, bought for a month; { wait: true } returns once it runs.
  const options = await client.serverOptions.get({ region: 'id-jkt' });
  const plan = options.plans.find((p) => p.in_stock);
  if (!plan) throw new Error('id-jkt sells no server now');
  const { server, operation } = await client.servers.create(
    { name: 'app-1', region: 'id-jkt', plan: plan.id, image: 'ubuntu-24.04', term_months: 1, currency: 'USD', ssh_key_ids: [key.id] },
    { wait: true },
  );
  // Operation is a union by type: after the check, result is the vm.create result, no cast.
  const charged = operation.type === 'vm.create' ? operation.result?.charged : undefined;
  console.log(`server ${server.id} ${server.status} ${server.ipv4} charged ${charged?.amount} ${charged?.currency}`);

  // 3. A new 50 GB disk attached to it.
  const { volume } = await client.volumes.create(
    { name: 'app-data', region: 'id-jkt', size_gb: 50, term_months: 1, currency: 'USD', server_id: server.id },
    { wait: true },
  );
  console.log(`volume ${volume.id} ${volume.status} on ${volume.server?.id} at ${volume.mount_path}`);

  // 4. The server deleted (its disk is detached and kept), then the disk.
  const deletion = await client.servers.delete(server.id, { wait: true });
  const detached = deletion.operation.type === 'vm.delete' ? deletion.operation.result?.detached_volume_ids : [];
  console.log(`server ${deletion.server.status}, detached ${detached?.join(',')}`);
  const removal = await client.volumes.delete(volume.id, undefined, { wait: true });
  console.log(`volume ${removal.volume.status}`);

  // 5. What the wallet shows: a hold and its capture per purchase, every page read.
  for await (const tx of client.wallet.listTransactions({ currency: 'USD' })) console.log(`wallet ${tx.type} ${tx.amount} ${tx.currency}`);
}

main().catch((err: unknown) => {
  if (err instanceof InsufficientBalanceError) console.error(`Top up first: ${err.details.required} ${err.details.currency} needed, ${err.details.available} available`);
  else if (err instanceof OperationFailedError) console.error(`${err.operation.type} failed: ${err.code}`);
  else console.error(err);
  process.exit(1);
});
