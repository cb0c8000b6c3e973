import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { invalidRequest, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { Money } from '../../../shared/kernel/money/money';
import { InjectedKey, ServerAccess } from '../../access/application/server-access';
import { Principal } from '../../auth/domain/principal';
import { ServerCatalogQueries } from '../../options/application/server-catalog-queries.port';
import { proratedCharge } from '../../prepaid/domain/term';
import { SERVER_STATUSES, Server, ServerStatus, instanceMissing, instanceMissingError } from '../domain/server';
import { assertStatus, checkImageUsable, checkUserData, serverBusy } from '../domain/server-actions';
import { ServableImages } from './compute-provider.port';
import { OrganizationImages } from './organization-images.port';
import { isOrganizationImage } from './purchase-server.use-case';
import { rebuildServerParams, resizeServerParams } from './server-change-params';
import { ServerLifecycle } from './server-lifecycle.port';
import { ActionPlan, ServerActionResult, ServerActionRunner } from './server-power.use-cases';
import { ServerReads } from './servers.port';

/** Every status a plan change is judged in (suspended and deleted are refused by assertStatus; the rest must be stopped). */
const ANY_LIVE: readonly ServerStatus[] = SERVER_STATUSES.filter((s) => s !== 'suspended' && s !== 'deleted');

/**
 * POST /v1/servers/{id}/resize {plan, dry_run?} (Hetzner's change_type): vm.resize, steps
 * payment_reserved and resizing. The server must be stopped ("stop the server first"), bought
 * here (a seeded server has no term: 409 invalid_state); the plan sold in its region with a boot
 * disk at least the server's (400 naming plan). Charge: (the plan's current price − the server's
 * frozen price) × r in the billing currency, rounded up, when positive (no refund); the vCPUs it
 * adds reserved at acceptance (409 out_of_stock), those it frees given back at success, when the
 * plan's price becomes the frozen price. A dry run answers the price and changes nothing.
 */
@Injectable()
export class ResizeServer {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly runner: ServerActionRunner,
    private readonly reads: ServerReads,
    private readonly lifecycle: ServerLifecycle,
    private readonly offers: ServerCatalogQueries,
    private readonly clock: Clock,
  ) {}

  quote(principal: Principal, input: { serverId: string; planId: string }): Promise<Money> {
    return this.uow.run(async () => {
      const server = await this.reads.findInOrg(principal.orgId, input.serverId);
      if (!server) throw notFound(`Server ${input.serverId} not found`);
      if (!server.deletedAt) {
        const busy = await this.lifecycle.unfinishedOperation(server.id);
        if (busy) throw serverBusy(server.id, busy);
      }
      assertStatus(server, 'vm.resize', ANY_LIVE);
      if (instanceMissing(server)) throw instanceMissingError(server);
      return (await this.plan(server, input.planId)).hold!;
    });
  }

  execute(principal: Principal, input: { serverId: string; planId: string }, ip: string | null): Promise<ServerActionResult> {
    let addedVcpus = 0;
    return this.runner.run(principal, input.serverId, ip, {
      type: 'vm.resize',
      from: ANY_LIVE,
      callsProvider: true,
      plan: async (server) => {
        const plan = await this.plan(server, input.planId);
        addedVcpus = resizeServerParams.read(plan.params).addedVcpus;
        return plan;
      },
      reserve: async (server) => {
        if (addedVcpus > 0) await this.lifecycle.reserveVcpus(server.id, server.regionId, addedVcpus);
      },
    });
  }

  private async plan(server: Server, planId: string): Promise<ActionPlan> {
    if (server.status !== 'stopped') throw invalidState(`Server ${server.id} is ${server.status}; stop the server first`);
    if (!server.price || !server.billing || !server.expiresAt || server.vcpus === null || server.diskGb === null) {
      throw invalidState(`Server ${server.id} was not bought here (a seeded server, no term) and cannot change its plan`);
    }
    const offer = await this.offers.offerSnapshot(server.regionId);
    const plan = offer?.terms ? offer.plans.find((p) => p.id === planId) : undefined;
    if (!plan) throw invalidRequest(`plan ${planId} is not sold in ${server.regionId}`, { field: 'plan' });
    if (plan.id === server.plan) throw invalidRequest(`Server ${server.id} is on plan ${plan.id} already`, { field: 'plan' });
    if (plan.diskGb < server.diskGb) {
      throw invalidRequest(`plan ${plan.id} has a ${plan.diskGb} GB boot disk, smaller than the server's ${server.diskGb} GB: boot disks do not shrink`, { field: 'plan' });
    }
    const currency = server.billing.currency;
    const amount = proratedCharge(plan.price[currency].minus(server.price[currency]), server.expiresAt, this.clock.now());
    const addedVcpus = Math.max(0, plan.vcpus - server.vcpus);
    return {
      steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'resizing', status: 'pending' }],
      params: resizeServerParams.write({
        planId: plan.id, vcpus: plan.vcpus, memoryGb: plan.memoryGb, diskGb: plan.diskGb, price: { USD: plan.price.USD, IDR: plan.price.IDR }, addedVcpus, amount,
      }),
      audit: { plan_before: server.plan, plan: plan.id, currency, amount: amount.format() },
      hold: amount,
    };
  }
}

/**
 * POST /v1/servers/{id}/rebuild {image, ssh_key_ids?, user_data?}: vm.rebuild, steps rebuilding
 * and booting; running or stopped; an image sold in the region (404 otherwise, as at purchase).
 * The boot disk is reinstalled (its data lost); id, address, disks, term and labels stay. The
 * SSH keys named replace the server's (absent: its keys that still exist are injected again);
 * user_data as at purchase (kept only until the rebuilding step, never audited). No charge.
 */
@Injectable()
export class RebuildServer {
  constructor(
    private readonly runner: ServerActionRunner,
    private readonly offers: ServerCatalogQueries,
    private readonly access: ServerAccess,
    private readonly images: ServableImages,
    private readonly orgImages: OrganizationImages,
  ) {}

  async execute(principal: Principal, input: { serverId: string; image: string; sshKeyIds?: unknown; userData?: string }, ip: string | null): Promise<ServerActionResult> {
    const userData = checkUserData(input.userData);
    const named = input.sshKeyIds === undefined ? undefined : await this.access.resolveSshKeys(principal.orgId, input.sshKeyIds);
    return this.runner.run(principal, input.serverId, ip, {
      type: 'vm.rebuild',
      from: ['running', 'stopped'],
      callsProvider: true,
      plan: async (server) => {
        if (isOrganizationImage(input.image)) {
          // The organization's own image: in the server's region, available, no larger than its boot disk.
          const image = await this.orgImages.lockForUse(principal.orgId, input.image);
          checkImageUsable(input.image, image, { regionId: server.regionId, diskGb: server.diskGb ?? 0, planId: server.plan });
        } else {
          const offer = await this.offers.offerSnapshot(server.regionId);
          if (!offer?.images.some((i) => i.id === input.image)) throw notFound(`Image ${input.image} not found`);
          const servable = this.images.servableImages();
          if (servable !== null && !servable.includes(input.image)) throw notFound(`Image ${input.image} is not offered: no host can serve it now (see GET /v1/server-options)`);
        }
        const keys = named ?? (await this.stillExisting(principal.orgId, server.sshKeyIds));
        return {
          steps: [{ name: 'rebuilding', status: 'pending' }, { name: 'booting', status: 'pending' }],
          params: rebuildServerParams.write({ image: input.image, sshKeys: keys.map((k) => ({ id: k.id, publicKey: k.publicKey })), userData }),
          audit: { image: input.image, image_before: server.image, ssh_key_ids: keys.map((k) => k.id), user_data_bytes: userData === null ? 0 : Buffer.byteLength(userData, 'utf8') },
        };
      },
    });
  }

  /** The server's keys that still exist (a key deleted since is left out). */
  private async stillExisting(orgId: string, ids: readonly string[]): Promise<InjectedKey[]> {
    const keys: InjectedKey[] = [];
    for (const id of ids) {
      try {
        keys.push(...(await this.access.resolveSshKeys(orgId, [id])));
      } catch {
        // deleted since
      }
    }
    return keys;
  }
}
