import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { Db, UNIQUE_VIOLATION, sqlState } from '../../../shared/database/transaction';
import { UnitOfWork, WorkerUnitOfWork } from '../../../shared/database/unit-of-work';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { randomBase62 } from '../../../shared/kernel/ids/ids';
import {
  ComputeProvider, ComputeUnavailable, InstancePage, ProviderAddress, ProviderAddresses, ProviderConsole, ProviderImage, ProviderInstance, ProviderNetworkAttachment,
} from '../application/compute-provider.port';
import { ComputeAction, ComputeCallInput, SimulatedInstance, checkConsole, simulateComputeCall, simulatedConsoleUrl, userDataBytes } from '../domain/simulated-instance';

interface InstanceRow {
  instance_id: string;
  server_id: string;
  zone_id: string;
  vcpus: number | null;
  memory_gb: number | null;
  disk_gb: number | null;
  image: string | null;
  ipv4: string;
  power: 'running' | 'stopped';
  ssh_key_count: number;
  user_data_bytes: number;
  ignores_acpi: boolean;
  deleted_at: Date | null;
}

const INSTANCE_COLUMNS =
  'instance_id, server_id, zone_id, vcpus, memory_gb, disk_gb, image, ipv4, power, ssh_key_count, user_data_bytes, ignores_acpi, deleted_at';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

const toSimulated = (r: InstanceRow): SimulatedInstance => ({
  instanceId: r.instance_id,
  serverId: r.server_id,
  zoneId: r.zone_id,
  vcpus: r.vcpus,
  memoryGb: r.memory_gb,
  diskGb: r.disk_gb,
  image: r.image,
  ipv4: r.ipv4,
  power: r.power,
  sshKeyCount: r.ssh_key_count,
  userDataBytes: r.user_data_bytes,
  ignoresAcpi: r.ignores_acpi,
  deleted: r.deleted_at !== null,
});

/** The port's view of a simulated instance (also the in-memory adapter's). */
export const toProviderInstance = (i: SimulatedInstance): ProviderInstance => ({
  instanceId: i.instanceId,
  serverId: i.serverId,
  zoneId: i.zoneId,
  vcpus: i.vcpus,
  memoryGb: i.memoryGb,
  diskGb: i.diskGb,
  image: i.image,
  ipv4: i.ipv4,
  power: i.power,
});

type Step = { serverId: string; step: string };

interface ImageRow {
  image_id: string;
  provider_id: string;
  server_id: string;
  zone_id: string;
  disk_gb: number | null;
  source_image: string | null;
  deleted_at: Date | null;
}

const IMAGE_COLUMNS = 'image_id, provider_id, server_id, zone_id, disk_gb, source_image, deleted_at';

const toProviderImage = (r: ImageRow): ProviderImage => ({
  providerId: r.provider_id, imageId: r.image_id, serverId: r.server_id, zoneId: r.zone_id, diskGb: r.disk_gb, sourceImage: r.source_image,
});

/**
 * The shipped compute provider: a simulation that keeps its instances in its own table
 * (provider_instances), so they survive restarts like a real provider's. Each call is idempotent
 * by (server id, step): the first call that takes effect is recorded with its answer in
 * provider_compute_calls, in the same short transaction (on the worker's pool) as the instance's
 * change; the same call again answers that, and two racing ones are decided by the primary key
 * (the loser's transaction rolls back and it reads the winner's answer).
 *
 * Settings, shared with the simulated storage provider: PROVIDER_LATENCY_MS delays every call;
 * PROVIDER_DOWN fails every call (ping included) with ComputeUnavailable; PROVIDER_FAULTS fails
 * that share of calls at random, half before the call takes effect and half after it (the answer
 * lost). ping is exempt from random faults. SIMULATED_ACPI_IGNORED_IMAGES: instances created from
 * those images ignore an ACPI shutdown (provider_instances.ignores_acpi, which a test may also set).
 *
 * Addresses: next_server_ipv4() (100.64.0.0/10, the sequence seeded servers take theirs from,
 * never reused), unique among live instances by a partial unique index. Nothing secret is kept:
 * the SSH keys' count and user_data's byte count only.
 */
@Injectable()
export class SimulatedComputeProvider extends ComputeProvider {
  constructor(
    private readonly db: Db,
    @Inject(WorkerUnitOfWork) private readonly uow: UnitOfWork,
    private readonly settings: Settings,
  ) {
    super();
  }

  async createInstance(input: {
    serverId: string;
    step: string;
    hostname?: string;
    zoneId: string;
    vcpus: number;
    memoryGb: number;
    diskGb: number;
    image: string;
    sshPublicKeys: string[];
    userData: string | null;
  }): Promise<ProviderInstance> {
    return this.instance(
      await this.call(input.step, {
        action: 'create',
        serverId: input.serverId,
        instanceId: `ins_${randomBase62(20)}`,
        zoneId: input.zoneId,
        vcpus: input.vcpus,
        memoryGb: input.memoryGb,
        diskGb: input.diskGb,
        image: input.image,
        ipv4: '', // allocated in the call's transaction, only when an instance is made
        sshKeyCount: input.sshPublicKeys.length,
        userDataBytes: userDataBytes(input.userData),
        ignoresAcpi: this.settings.simulatedAcpiIgnoredImages.includes(input.image),
      }),
    );
  }

  async awaitBoot(input: Step): Promise<ProviderInstance> {
    return this.instance(await this.call(input.step, { action: 'await_boot', serverId: input.serverId }));
  }
  async powerOn(input: Step): Promise<ProviderInstance> {
    return this.instance(await this.call(input.step, { action: 'power_on', serverId: input.serverId }));
  }
  async shutdown(input: Step): Promise<ProviderInstance> {
    return this.instance(await this.call(input.step, { action: 'shutdown', serverId: input.serverId }));
  }
  async powerOff(input: Step): Promise<ProviderInstance> {
    return this.instance(await this.call(input.step, { action: 'power_off', serverId: input.serverId }));
  }
  async reboot(input: Step): Promise<ProviderInstance> {
    return this.instance(await this.call(input.step, { action: 'reboot', serverId: input.serverId }));
  }
  async reset(input: Step): Promise<ProviderInstance> {
    return this.instance(await this.call(input.step, { action: 'reset', serverId: input.serverId }));
  }
  async resizeInstance(input: { serverId: string; step: string; vcpus: number; memoryGb: number; diskGb: number }): Promise<ProviderInstance> {
    return this.instance(await this.call(input.step, { action: 'resize', serverId: input.serverId, vcpus: input.vcpus, memoryGb: input.memoryGb, diskGb: input.diskGb }));
  }
  async rebuildInstance(input: { serverId: string; step: string; image: string; sshPublicKeys: string[]; userData: string | null }): Promise<ProviderInstance> {
    return this.instance(
      await this.call(input.step, {
        action: 'rebuild', serverId: input.serverId, image: input.image, sshKeyCount: input.sshPublicKeys.length, userDataBytes: userDataBytes(input.userData),
      }),
    );
  }
  async deleteInstance(input: Step): Promise<void> {
    await this.call(input.step, { action: 'delete', serverId: input.serverId });
  }

  /**
   * A console credential: a one-time token (32 base62) in the URL and a 24-character base62
   * password, of which provider_consoles keeps the SHA-256 only. With a step, the step's earlier
   * credential is replaced (its hashes overwritten). Faults as every call's (an answer lost: a
   * credential nobody received, which expires unused).
   */
  async createConsole(input: { serverId: string; step?: string; expiresAt: Date }): Promise<ProviderConsole> {
    const fault = await this.before();
    const token = randomBase62(32);
    const password = randomBase62(24);
    const instanceId = await this.uow.run(async () => {
      const row = await this.db.one<InstanceRow>(
        `SELECT ${INSTANCE_COLUMNS} FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL FOR SHARE`,
        [input.serverId],
        'provider_instances_console',
      );
      const instance = checkConsole(row && toSimulated(row), input.serverId);
      await this.db.query(
        `INSERT INTO provider_consoles (console_id, server_id, instance_id, step, token_hash, password_hash, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (server_id, step) WHERE step IS NOT NULL
         DO UPDATE SET instance_id = EXCLUDED.instance_id, token_hash = EXCLUDED.token_hash, password_hash = EXCLUDED.password_hash,
                       expires_at = EXCLUDED.expires_at, created_at = now()`,
        [`vnc_${randomBase62(20)}`, input.serverId, instance.instanceId, input.step ?? null, sha256(token), sha256(password), input.expiresAt],
      );
      return instance.instanceId;
    });
    if (fault === 'after') throw new ComputeUnavailable('The compute provider took the call but its answer was lost (PROVIDER_FAULTS)');
    return { type: 'vnc', url: simulatedConsoleUrl(instanceId, token), password, expiresAt: input.expiresAt };
  }

  async getInstance(serverId: string): Promise<ProviderInstance | null> {
    await this.before();
    const rows = await this.uow.run(() =>
      this.db.query<InstanceRow>(`SELECT ${INSTANCE_COLUMNS} FROM provider_instances WHERE deleted_at IS NULL AND server_id = $1`, [serverId]),
    );
    return rows.length === 0 ? null : toProviderInstance(toSimulated(rows[0]));
  }

  async listInstances(page?: InstancePage): Promise<ProviderInstance[]> {
    await this.before();
    // LIMIT NULL: no limit (every live instance, when no page is asked for).
    const rows = await this.uow.run(() =>
      this.db.query<InstanceRow>(
        `SELECT ${INSTANCE_COLUMNS} FROM provider_instances WHERE deleted_at IS NULL AND server_id > $1 ORDER BY server_id LIMIT $2`,
        [page?.after ?? '', page?.limit ?? null],
      ),
    );
    return rows.map((r) => toProviderInstance(toSimulated(r)));
  }

  async ping(): Promise<void> {
    if (this.settings.providerDown) throw new ComputeUnavailable('The compute provider is down (PROVIDER_DOWN)');
  }

  /**
   * Copies the server's live instance's boot disk into provider_images (its size and source image
   * with it); idempotent by the image id (the primary key: the same call again, or a racing one,
   * answers the copy made). Faults as every call's.
   */
  async createImage(input: { imageId: string; step: string; serverId: string }): Promise<ProviderImage> {
    const fault = await this.before();
    const made = await this.uow.run(async () => {
      const prior = await this.imageRow(input.imageId);
      if (prior) {
        if (prior.deleted_at) throw invalidState(`Image ${input.imageId} was deleted at the compute provider; it cannot be made again`);
        return prior;
      }
      const instance = await this.db.one<{ instance_id: string }>(
        'SELECT instance_id FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL FOR SHARE',
        [input.serverId],
        'provider_image_instance',
      );
      if (!instance) throw invalidState(`The compute provider has no instance for server ${input.serverId}`);
      await this.db.query(
        `INSERT INTO provider_images (image_id, provider_id, server_id, zone_id, disk_gb, source_image)
         SELECT $1, $2, server_id, zone_id, disk_gb, image FROM provider_instances WHERE instance_id = $3
         ON CONFLICT (image_id) DO NOTHING`,
        [input.imageId, `pimg_${randomBase62(20)}`, instance.instance_id],
        'provider_image_create',
      );
      return (await this.imageRow(input.imageId))!;
    });
    if (fault === 'after') throw new ComputeUnavailable('The compute provider took the call but its answer was lost (PROVIDER_FAULTS)');
    return toProviderImage(made);
  }

  async deleteImage(input: { imageId: string; step: string }): Promise<void> {
    const fault = await this.before();
    await this.uow.run(() =>
      this.db.query('UPDATE provider_images SET deleted_at = COALESCE(deleted_at, now()) WHERE image_id = $1', [input.imageId], 'provider_image_delete'),
    );
    if (fault === 'after') throw new ComputeUnavailable('The compute provider took the call but its answer was lost (PROVIDER_FAULTS)');
  }

  async getImage(imageId: string): Promise<ProviderImage | null> {
    await this.before();
    const row = await this.uow.run(() => this.imageRow(imageId));
    return row && !row.deleted_at ? toProviderImage(row) : null;
  }

  async listServerImages(page?: { after?: string; limit: number }): Promise<ProviderImage[]> {
    await this.before();
    // LIMIT NULL: every live image, when no page is asked for.
    const rows = await this.uow.run(() =>
      this.db.query<ImageRow>(`SELECT ${IMAGE_COLUMNS} FROM provider_images WHERE deleted_at IS NULL AND image_id > $1 ORDER BY image_id LIMIT $2`, [
        page?.after ?? '',
        page?.limit ?? null,
      ]),
    );
    return rows.map(toProviderImage);
  }

  private async imageRow(imageId: string): Promise<ImageRow | undefined> {
    return this.db.one<ImageRow>(`SELECT ${IMAGE_COLUMNS} FROM provider_images WHERE image_id = $1`, [imageId], 'provider_image_find');
  }

  /**
   * Routes the server's /64 (provider_server_ipv6: one address per server, unique); the same
   * address again changes nothing. Recorded in provider_network_calls by (server, step). Two
   * statements: the recorded call, the instance (locked) and the address it has, read together;
   * then the address and the call's record written together.
   */
  async assignIpv6(input: { serverId: string; step: string; ipv6: string }): Promise<void> {
    const fault = await this.before();
    for (let attempt = 1; ; attempt++) {
      try {
        await this.uow.run(async () => {
          const found = await this.db.one<{ called: boolean; live: boolean; held: string | null }>(
            `SELECT EXISTS (SELECT 1 FROM provider_network_calls WHERE server_id = $1 AND step = $2) AS called,
                    i.instance_id IS NOT NULL AS live, (SELECT ipv6 FROM provider_server_ipv6 WHERE server_id = $1) AS held
               FROM (SELECT 1) AS one
               LEFT JOIN LATERAL (SELECT instance_id FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL FOR UPDATE) i ON true`,
            [input.serverId, input.step],
            'provider_ipv6_find_locking',
          );
          if (found!.called) return;
          if (!found!.live) throw invalidState(`The compute provider has no instance for server ${input.serverId}`);
          if (found!.held !== null && found!.held !== input.ipv6) throw invalidState(`Server ${input.serverId} has ${found!.held} routed already`);
          await this.db.query(
            `WITH routed AS (INSERT INTO provider_server_ipv6 (server_id, ipv6) SELECT $1, $3 WHERE NOT $4::boolean)
             INSERT INTO provider_network_calls (server_id, step, action, answer) VALUES ($1, $2, 'assign_ipv6', NULL)`,
            [input.serverId, input.step, input.ipv6, found!.held !== null],
            'provider_ipv6_assign_recorded',
          );
        });
        break;
      } catch (err) {
        // The same call raced with this one and won: read its answer.
        if (sqlState(err) === UNIQUE_VIOLATION && attempt < 3) continue;
        throw err;
      }
    }
    if (fault === 'after') throw new ComputeUnavailable('The compute provider took the call but its answer was lost (PROVIDER_FAULTS)');
  }

  /** provider_network_attachments: one address per (network, ip); the instance's row locked while it is judged. */
  async attachNetwork(input: { serverId: string; step: string; networkId: string; ipRange: string; ip: string }): Promise<ProviderNetworkAttachment> {
    return (await this.addressCall(input.serverId, input.step, 'attach_network', async () => {
      await this.liveInstance(input.serverId);
      const held = await this.db.one<{ ip: string }>(
        'SELECT ip FROM provider_network_attachments WHERE server_id = $1 AND network_id = $2',
        [input.serverId, input.networkId],
        'provider_attachment_find',
      );
      if (held && held.ip !== input.ip) throw invalidState(`Server ${input.serverId} is in network ${input.networkId} with ${held.ip} already`);
      if (!held) {
        const taken = await this.db.one<{ server_id: string }>(
          'SELECT server_id FROM provider_network_attachments WHERE network_id = $1 AND ip = $2',
          [input.networkId, input.ip],
          'provider_attachment_ip_taken',
        );
        if (taken) throw invalidState(`${input.ip} is another server's in network ${input.networkId}`);
        await this.db.query(
          'INSERT INTO provider_network_attachments (server_id, network_id, ip_range, ip) VALUES ($1, $2, $3, $4)',
          [input.serverId, input.networkId, input.ipRange, input.ip],
          'provider_attachment_insert',
        );
      }
      return { networkId: input.networkId, ip: input.ip };
    })) as ProviderNetworkAttachment;
  }

  async detachNetwork(input: { serverId: string; step: string; networkId: string }): Promise<void> {
    await this.addressCall(input.serverId, input.step, 'detach_network', async () => {
      await this.db.query('DELETE FROM provider_network_attachments WHERE server_id = $1 AND network_id = $2', [input.serverId, input.networkId], 'provider_attachment_delete');
      return null;
    });
  }

  async getAddresses(serverId: string): Promise<ProviderAddresses | null> {
    await this.before();
    const rows = await this.uow.run(() => this.addressRows(serverId));
    return rows[0] ?? null;
  }

  async listAddresses(): Promise<ProviderAddresses[]> {
    await this.before();
    return (await this.uow.run(() => this.addressRows(null))).filter((a) => a.ipv6 !== null || a.networks.length > 0);
  }

  /** The addresses of one server's live instance (or of every live instance), ordered by server id. */
  private async addressRows(serverId: string | null): Promise<ProviderAddresses[]> {
    const rows = await this.db.query<{ server_id: string; ipv6: string | null; networks: { network_id: string; ip: string }[] }>(
      `SELECT i.server_id, v.ipv6,
              COALESCE((SELECT json_agg(json_build_object('network_id', a.network_id, 'ip', a.ip) ORDER BY a.network_id COLLATE "C")
                          FROM provider_network_attachments a WHERE a.server_id = i.server_id), '[]'::json) AS networks
         FROM provider_instances i LEFT JOIN provider_server_ipv6 v ON v.server_id = i.server_id
        WHERE i.deleted_at IS NULL AND ($1::text IS NULL OR i.server_id = $1)
        ORDER BY i.server_id COLLATE "C"`,
      [serverId],
      'provider_addresses',
    );
    return rows.map((r) => ({ serverId: r.server_id, ipv6: r.ipv6, networks: r.networks.map((n) => ({ networkId: n.network_id, ip: n.ip })) }));
  }

  /** The server's live instance, locked until the call's transaction ends; none: a final refusal. */
  private async liveInstance(serverId: string): Promise<void> {
    const row = await this.db.one('SELECT instance_id FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL FOR UPDATE', [serverId], 'provider_instance_lock_live');
    if (!row) throw invalidState(`The compute provider has no instance for server ${serverId}`);
  }

  /**
   * An address call's effect and its record (provider_network_calls), in one short transaction of
   * the provider's own, or the answer recorded already; faults as every call's.
   */
  private async addressCall(serverId: string, step: string, action: 'assign_ipv6' | 'attach_network' | 'detach_network', work: () => Promise<unknown>): Promise<unknown> {
    const fault = await this.before();
    let answer: unknown;
    for (let attempt = 1; ; attempt++) {
      try {
        answer = await this.uow.run(async () => {
          const prior = await this.db.one<{ answer: unknown }>(
            'SELECT answer FROM provider_network_calls WHERE server_id = $1 AND step = $2',
            [serverId, step],
            'provider_network_calls_find',
          );
          if (prior) return prior.answer;
          const made = await work();
          await this.db.query(
            'INSERT INTO provider_network_calls (server_id, step, action, answer) VALUES ($1, $2, $3, $4)',
            [serverId, step, action, made === null ? null : JSON.stringify(made)],
            'provider_network_calls_insert',
          );
          return made;
        });
        break;
      } catch (err) {
        // The same call raced with this one and won: read its answer.
        if (sqlState(err) === UNIQUE_VIOLATION && attempt < 3) continue;
        throw err;
      }
    }
    if (fault === 'after') throw new ComputeUnavailable('The compute provider took the call but its answer was lost (PROVIDER_FAULTS)');
    return answer;
  }

  /**
   * Routes a reserved address to the server's live instance (provider_addresses), recorded with
   * its answer in provider_address_calls in the same short transaction: the same (address, step)
   * again answers that. Faults as every call's.
   */
  async assignAddress(input: { addressId: string; step: string; ip: string; serverId: string }): Promise<ProviderAddress> {
    return this.reservedAddressCall(input.addressId, input.step, async () => {
      const instance = await this.db.one<{ instance_id: string }>(
        'SELECT instance_id FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL FOR SHARE',
        [input.serverId],
        'provider_address_instance',
      );
      if (!instance) throw invalidState(`The compute provider has no instance for server ${input.serverId}`);
      return input.serverId;
    }, input.ip);
  }

  async unassignAddress(input: { addressId: string; step: string; ip: string }): Promise<ProviderAddress> {
    return this.reservedAddressCall(input.addressId, input.step, async () => null, input.ip);
  }

  async getAddress(addressId: string): Promise<ProviderAddress | null> {
    await this.before();
    const rows = await this.uow.run(() =>
      this.db.query<{ address_id: string; ip: string; server_id: string | null }>(
        'SELECT address_id, host(ip) AS ip, server_id FROM provider_addresses WHERE address_id = $1', [addressId], 'provider_address_find'),
    );
    return rows.length === 0 ? null : { addressId: rows[0].address_id, ip: rows[0].ip, serverId: rows[0].server_id };
  }

  async listAssignedAddresses(): Promise<ProviderAddress[]> {
    await this.before();
    const rows = await this.uow.run(() =>
      this.db.query<{ address_id: string; ip: string; server_id: string }>(
        'SELECT address_id, host(ip) AS ip, server_id FROM provider_addresses WHERE server_id IS NOT NULL ORDER BY address_id'),
    );
    return rows.map((r) => ({ addressId: r.address_id, ip: r.ip, serverId: r.server_id }));
  }

  /** One address call: its effect (the server it routes to, from `target`) and its record, or the answer recorded already. */
  private async reservedAddressCall(addressId: string, step: string, target: () => Promise<string | null>, ip: string): Promise<ProviderAddress> {
    const fault = await this.before();
    let answer: ProviderAddress | undefined;
    for (let attempt = 1; answer === undefined; attempt++) {
      try {
        answer = await this.uow.run(async () => {
          const prior = await this.db.one<{ answer: ProviderAddress }>(
            'SELECT answer FROM provider_address_calls WHERE address_id = $1 AND step = $2', [addressId, step], 'provider_address_calls_find');
          if (prior) return prior.answer;
          const serverId = await target();
          await this.db.query(
            `INSERT INTO provider_addresses (address_id, ip, server_id) VALUES ($1, $2, $3)
             ON CONFLICT (address_id) DO UPDATE SET server_id = EXCLUDED.server_id, updated_at = now()`,
            [addressId, ip, serverId],
            'provider_address_route',
          );
          const made: ProviderAddress = { addressId, ip, serverId };
          await this.db.query('INSERT INTO provider_address_calls (address_id, step, answer) VALUES ($1, $2, $3)', [addressId, step, JSON.stringify(made)]);
          return made;
        });
      } catch (err) {
        if (sqlState(err) === UNIQUE_VIOLATION && attempt < 3) continue;
        throw err;
      }
    }
    if (fault === 'after') throw new ComputeUnavailable('The compute provider took the call but its answer was lost (PROVIDER_FAULTS)');
    return answer;
  }

  /** The simulator judges packets from the rules table itself (GET /v1/servers/{id}/firewall): nothing to apply, never a failure. */
  async applyFirewall(): Promise<void> {}

  /** Every image of the catalog. */
  async listImages(): Promise<string[] | null> {
    return null;
  }

  private instance(answer: SimulatedInstance | undefined): ProviderInstance {
    if (!answer) throw new Error('The simulated compute provider answered no instance');
    return toProviderInstance(answer);
  }

  /**
   * Latency, then the outage; then whether this call is struck by a random fault (PROVIDER_FAULTS
   * of the calls), and if so whether before it takes effect or after (its answer lost), evenly.
   */
  private async before(): Promise<'none' | 'after'> {
    if (this.settings.providerLatencyMs > 0) await sleep(this.settings.providerLatencyMs);
    if (this.settings.providerDown) throw new ComputeUnavailable('The compute provider is down (PROVIDER_DOWN)');
    if (!(this.settings.providerFaults > 0 && Math.random() < this.settings.providerFaults)) return 'none';
    if (Math.random() < 0.5) throw new ComputeUnavailable('The compute provider failed the call (PROVIDER_FAULTS)');
    return 'after';
  }

  private async call(step: string, input: ComputeCallInput): Promise<SimulatedInstance | undefined> {
    const fault = await this.before();
    const answer = await this.record(step, input);
    if (fault === 'after') throw new ComputeUnavailable('The compute provider took the call but its answer was lost (PROVIDER_FAULTS)');
    return answer;
  }

  /**
   * The call's effect and its record, in one short transaction of the provider's own; or the
   * answer recorded already. The recorded answer is looked up with the instance's row locked, in
   * one statement; the instance's change and the call's record are written by one statement.
   */
  private async record(step: string, input: ComputeCallInput): Promise<SimulatedInstance | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.uow.run(async () => {
          // The server's live instance, else its latest deleted one (a server is never created twice).
          const found = await this.db.one<Partial<InstanceRow> & { called: boolean; answer: SimulatedInstance | null }>(
            `SELECT EXISTS (SELECT 1 FROM provider_compute_calls WHERE server_id = $1 AND step = $2) AS called,
                    (SELECT answer FROM provider_compute_calls WHERE server_id = $1 AND step = $2) AS answer, i.*
               FROM (SELECT 1) AS one
               LEFT JOIN LATERAL (SELECT ${INSTANCE_COLUMNS} FROM provider_instances WHERE server_id = $1
                                   ORDER BY deleted_at DESC NULLS FIRST, created_at DESC LIMIT 1 FOR UPDATE) i ON true`,
            [input.serverId, step],
            'provider_compute_calls_find_locking',
          );
          if (found!.called) return found!.answer ?? undefined;
          const before = found!.instance_id == null ? undefined : toSimulated(found as InstanceRow);
          let call = input;
          if (call.action === 'create' && !(before && !before.deleted)) {
            const ip = await this.db.one<{ ipv4: string }>('SELECT next_server_ipv4() AS ipv4', [], 'provider_instances_next_ipv4');
            call = { ...call, ipv4: ip!.ipv4 };
          }
          // An organization's image (img_…) must be live here to create or rebuild from it: a final refusal otherwise.
          const fromImage = (call.action === 'create' && !(before && !before.deleted)) || call.action === 'rebuild' ? call.image : null;
          if (fromImage !== null && fromImage.startsWith('img_')) {
            const held = await this.db.one<{ image_id: string }>(
              'SELECT image_id FROM provider_images WHERE image_id = $1 AND deleted_at IS NULL FOR SHARE',
              [fromImage],
              'provider_image_source',
            );
            if (!held) throw invalidState(`The compute provider has no image ${fromImage} to install`);
          }
          const after = simulateComputeCall(before, call);
          if (after && after.deleted && before && !before.deleted) {
            // A deleted instance's reserved addresses are routed to nothing (kept).
            await this.db.query('UPDATE provider_addresses SET server_id = NULL, updated_at = now() WHERE server_id = $1', [input.serverId], 'provider_addresses_unroute');
          }
          // A deleted instance leaves every network.
          if (input.action === 'delete') await this.db.query('DELETE FROM provider_network_attachments WHERE server_id = $1', [input.serverId], 'provider_attachments_drop');
          const answer = input.action === 'delete' ? undefined : after;
          // The call's record ($1 to $4), written by the same statement as the instance's change.
          const params: unknown[] = [input.serverId, step, input.action satisfies ComputeAction, answer ? JSON.stringify(answer) : null];
          const recordCall = 'INSERT INTO provider_compute_calls (server_id, step, action, answer) VALUES ($1, $2, $3, $4)';
          if (after && call.action === 'create' && after !== before) {
            await this.db.query(
              `WITH made AS (
                 INSERT INTO provider_instances (instance_id, server_id, zone_id, vcpus, memory_gb, disk_gb, image, ipv4, power,
                                                 ssh_key_count, user_data_bytes, ignores_acpi)
                 VALUES ($5, $1, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15))
               ${recordCall}`,
              [...params, after.instanceId, after.zoneId, after.vcpus, after.memoryGb, after.diskGb, after.image, after.ipv4, after.power,
                after.sshKeyCount, after.userDataBytes, after.ignoresAcpi],
              'provider_compute_calls_record_creating',
            );
          } else if (after && before && JSON.stringify(after) !== JSON.stringify(before)) {
            await this.db.query(
              `WITH changed AS (
                 UPDATE provider_instances SET power = $6, deleted_at = CASE WHEN $7::boolean THEN COALESCE(deleted_at, now()) ELSE NULL END,
                        vcpus = $8, memory_gb = $9, disk_gb = $10, image = $11, ssh_key_count = $12, user_data_bytes = $13
                  WHERE instance_id = $5)
               ${recordCall}`,
              [...params, after.instanceId, after.power, after.deleted, after.vcpus, after.memoryGb, after.diskGb, after.image, after.sshKeyCount, after.userDataBytes],
              'provider_compute_calls_record_changing',
            );
          } else {
            await this.db.query(recordCall, params, 'provider_compute_calls_record');
          }
          return answer;
        });
      } catch (err) {
        // The same call (or the same server's instance) raced with this one and won: read its answer.
        if (sqlState(err) === UNIQUE_VIOLATION && attempt < 3) continue;
        throw err;
      }
    }
  }
}
