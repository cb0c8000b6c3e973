import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock, addMonthsClamped } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidRequest, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Currency, Money, PricePair } from '../../../shared/kernel/money/money';
import { Principal } from '../../auth/domain/principal';
import { OperationAcceptance } from '../../operations/application/operation-acceptance.port';
import { Operation } from '../../operations/domain/operation';
import { unknownRegion, unknownZone } from '../../options/domain/unknown-place';
import { Catalog } from '../../options/application/catalog.port';
import { VolumeType, Zone } from '../../options/domain/catalog';
import { insufficientBalance } from '../../wallet/domain/wallet-errors';
import { OrderTerms, applyQuote, checkOrderAgainstOffer, checkQuoteMatches, orderAmount } from '../domain/quote';
import { Server } from '../domain/server';
import { Volume } from '../domain/volume';
import { RENEWAL_TERMS, TermMonths } from '../../prepaid/domain/term';
import { checkAutoRenew } from '../../prepaid/domain/auto-renew';
import { Settings } from '../../../shared/config/settings';
import { checkMountPath, defaultMountPath, purchaseSteps, serverFull } from '../domain/volume-actions';
import { checkVolumeName, nameTaken, regionFull } from '../domain/volume-attributes';
import { Labels, checkLabels } from '../../prepaid/domain/labels';
import { auditActor } from '../../audit/application/audit-actor';
import { ProviderHealth } from '../../storage-provider/application/block-storage.port';
import { QuoteRepository } from './quotes.port';
import { SnapshotSource, SnapshotSources } from './snapshot-sources.port';
import { purchaseParams } from './volume-action-params';
import { ServerRepository, VolumeRepository } from './volumes.port';

/** The members of POST /v1/volumes, their JSON types already checked (undefined: not sent). */
export interface PurchaseVolumeInput {
  name: string;
  regionId: string;
  /** Required unless restoring a snapshot (then at least, and by default, the snapshot's size). */
  sizeGb?: number;
  termMonths: TermMonths;
  currency: Currency;
  type?: VolumeType;
  zoneId?: string;
  serverId?: string;
  mountPath?: string;
  note?: string | null;
  labels?: Record<string, unknown>;
  deleteProtection?: boolean;
  quoteId?: string;
  /** `{enabled, term_months?}` as sent: checked here (400 naming auto_renew.<member>). */
  autoRenew?: unknown;
  /** A snapshot to restore: the disk is made with its data, in its region, of its type. */
  snapshotId?: string;
}

export const providerUnavailable = (): DomainError =>
  new DomainError('provider_unavailable', 'The storage provider is unavailable; nothing was reserved. Retry later');

/**
 * POST /v1/volumes (lifecycle.md "Buying"). In one transaction, errors in the order of
 * lifecycle.md (400 → 404 → 409 quote, conflict, out_of_stock, quota_exceeded → 402 → 503):
 * the offer, the places (zone, server: the server's row locked, so its slot count below holds
 * until commit) and the quote are looked up together, then every 400 they allow judging, then
 * the 404s, then the quote's 409s; then the name, the region's free capacity and its zones (one
 * read: conflict, out_of_stock), the zone's availability, the server's free slot, the quote
 * marked used, then the volume row (`creating`, price frozen, expires_at = now + term), read back
 * by its own insert: its trigger reserves the capacity in one of the region's slot rows (one no
 * other purchase holds), locked from there to the commit (the unique name index and the counter decide
 * purchases that raced past the read); then one statement (OperationAcceptance) for the hold
 * (402, nothing written), the volume.create operation and the audit row; then the provider's
 * health (while it is down the transaction is rolled back, so nothing is reserved).
 */
@Injectable()
export class PurchaseVolume {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly volumes: VolumeRepository,
    private readonly servers: ServerRepository,
    private readonly quotes: QuoteRepository,
    private readonly acceptance: OperationAcceptance,
    private readonly health: ProviderHealth,
    private readonly clock: Clock,
    private readonly settings: Settings,
    private readonly snapshots: SnapshotSources,
  ) {}

  async execute(principal: Principal, input: PurchaseVolumeInput, ip: string | null): Promise<{ volume: Volume; operation: Operation }> {
    // Body errors that need no database come first.
    const name = checkVolumeName(input.name);
    const labels: Labels = input.labels === undefined ? {} : checkLabels(input.labels);
    const autoRenew = input.autoRenew === undefined ? undefined : checkAutoRenew(input.autoRenew, RENEWAL_TERMS);
    if (input.mountPath !== undefined && input.serverId === undefined) {
      throw invalidRequest('mount_path is only allowed with server_id (the disk is mounted when it is attached)', { field: 'mount_path' });
    }
    const requestedPath = input.mountPath === undefined ? undefined : checkMountPath(input.mountPath);
    return this.uow.run(async () => {
      // A restore: the snapshot decides the type and the default size (share-locked until commit).
      const snapshot: SnapshotSource | undefined = input.snapshotId === undefined ? undefined : await this.snapshots.lockForRestore(principal.orgId, input.snapshotId);
      // No size to judge without the snapshot: an unknown one answers 404 first.
      if (input.snapshotId !== undefined && !snapshot && input.sizeGb === undefined) throw notFound(`Snapshot ${input.snapshotId} not found`);
      const order: OrderTerms = {
        regionId: input.regionId,
        type: input.type ?? (snapshot?.type as VolumeType | undefined) ?? 'premium',
        sizeGb: input.sizeGb ?? snapshot?.sizeGb ?? 0,
        termMonths: input.termMonths,
        currency: input.currency,
      };
      if (snapshot) {
        if (snapshot.regionId !== order.regionId) {
          throw invalidRequest(`snapshot ${snapshot.id} is in region ${snapshot.regionId}; a disk restored from it is bought there`, { field: 'region' });
        }
        if (snapshot.type !== order.type) throw invalidRequest(`snapshot ${snapshot.id} is of a ${snapshot.type} disk; a disk restored from it is ${snapshot.type}`, { field: 'type' });
        if (order.sizeGb < snapshot.sizeGb) throw invalidRequest(`size_gb must be at least the snapshot's ${snapshot.sizeGb} GB`, { field: 'size_gb' });
      }
      // Everything the order names is looked up first, so that every 400 that can be judged comes
      // before any 404 (lifecycle.md: 400 → 404): a server in another region is 400 even when the
      // zone named does not exist, a member differing from the quote even when the server does not.
      const offer = await this.catalog.offer(order.regionId, order.type);
      const zoneFound = input.zoneId === undefined ? undefined : await this.catalog.findZone(input.zoneId);
      // Locked until commit: the slot count below cannot be taken by another purchase or attach meanwhile.
      const server: Server | undefined = input.serverId === undefined ? undefined : await this.servers.lockInOrg(principal.orgId, input.serverId);
      const quote = input.quoteId === undefined ? undefined : await this.quotes.findInOrg(principal.orgId, input.quoteId);

      // 400.
      if (offer) checkOrderAgainstOffer(offer, order);
      if (zoneFound && zoneFound.regionId !== order.regionId) {
        throw invalidRequest(`zone ${input.zoneId} is in region ${zoneFound.regionId}, not in ${order.regionId}`, { field: 'zone' });
      }
      if (server && server.regionId !== order.regionId) {
        throw invalidRequest(`server ${server.id} is in region ${server.regionId}; the disk is bought in ${order.regionId}`, { field: 'server_id' });
      }
      if (server && zoneFound && server.zoneId !== zoneFound.id) {
        throw invalidRequest(`server ${server.id} is in zone ${server.zoneId}; the disk is bought in ${zoneFound.id}`, { field: 'server_id' });
      }
      if (quote?.kind === 'server') {
        throw invalidRequest(`quote_id ${quote.id} is a server quote; a disk purchase needs a disk quote (POST /v1/quotes with type and size_gb)`, { field: 'quote_id' });
      }
      if (quote) checkQuoteMatches(quote, order);
      // 400 last: a region or zone that does not exist, with the ids that would do (details.valid).
      if (!offer && !(await this.catalog.regionExists(order.regionId))) throw unknownRegion(order.regionId, await this.catalog.regionIds());
      if (input.zoneId !== undefined && !zoneFound) {
        throw unknownZone(input.zoneId, order.regionId, (await this.catalog.zonesOf(order.regionId)).map((z) => z.id));
      }

      // 404.
      if (!offer) throw notFound(`Region ${order.regionId} sells no ${order.type} disks`);
      if (input.serverId !== undefined && !server) throw notFound(`Server ${input.serverId} not found`);
      if (input.quoteId !== undefined && !quote) throw notFound(`Quote ${input.quoteId} not found`);
      if (input.snapshotId !== undefined && !snapshot) throw notFound(`Snapshot ${input.snapshotId} not found`);

      let zone: Zone | undefined = zoneFound && { id: zoneFound.id, available: zoneFound.available };
      if (server && !zone) {
        const found = await this.catalog.findZone(server.zoneId);
        zone = { id: server.zoneId, available: found?.available ?? false };
      }

      // 409 quote (expired, used), then the price.
      let price: PricePair = { USD: offer.price.USD, IDR: offer.price.IDR };
      let amount: Money = orderAmount(offer.price, order);
      if (quote) ({ price, amount } = applyQuote(quote, order, this.clock.now()));
      // 409 invalid_state: a snapshot that cannot be restored from now.
      if (snapshot?.status === 'suspended') {
        throw new DomainError('invalid_state', `Snapshot ${snapshot.id} is suspended (its term ended); renew it to restore from it`, { reason: 'suspended' });
      }
      if (snapshot && snapshot.status !== 'available') throw invalidState(`Snapshot ${snapshot.id} is ${snapshot.status}; only an available snapshot can be restored`);
      // 409 invalid_state: a server being bought or deleted takes no disk (servers.md "Disks").
      if (server && (server.status === 'creating' || server.status === 'deleting')) {
        throw invalidState(`Server ${server.id} is ${server.status} and cannot take a disk`);
      }

      // The name, the region's free room and its zones in one read (no lock).
      const room = await this.volumes.purchaseRoom(principal.orgId, name, order.regionId);
      if (!zone) {
        // Default: the first zone by id that is available (else the first one: out_of_stock below).
        const zones = room.zones ?? (await this.catalog.zonesOf(order.regionId));
        zone = zones.find((z) => z.available) ?? zones[0];
        if (!zone) throw new DomainError('out_of_stock', `Region ${order.regionId} has no zone to put a disk in`);
      }

      const now = this.clock.now();
      const volumeId = newId('vol');
      // 409 conflict, then out_of_stock, as the volume's insert would decide them; the insert
      // itself comes last (below), and decides again for purchases that race.
      if (room.nameTaken) throw nameTaken(name);
      if (room.freeGb !== null && room.freeGb < order.sizeGb) throw regionFull(order.regionId, order.sizeGb);
      if (!zone.available) {
        throw new DomainError('out_of_stock', `Zone ${zone.id} does not accept new disks at the moment; choose another zone`);
      }
      if (server && (await this.servers.slotsTaken(server.id)) >= offer.perServerLimit) {
        throw serverFull(server.id, offer.perServerLimit);
      }

      const mountPath = server ? (requestedPath ?? defaultMountPath(name)) : null;
      const operation = Operation.create({
        id: newId('op'),
        orgId: principal.orgId,
        type: 'volume.create',
        vmId: server?.id ?? null,
        volumeId,
        steps: purchaseSteps(server !== undefined, snapshot !== undefined),
        params: purchaseParams.write({
          sizeGb: order.sizeGb,
          type: order.type,
          zoneId: zone.id,
          serverId: server?.id ?? null,
          mountPath,
          termMonths: order.termMonths,
          amount,
          snapshotId: snapshot?.id ?? null,
        }),
        createdAt: now,
      });
      if (input.quoteId !== undefined && !(await this.quotes.markUsed(input.quoteId, volumeId, now))) {
        throw invalidState(`Quote ${input.quoteId} was already used by another purchase; request a new one`);
      }
      // Then the volume's row (the quote references it: a foreign key checked at commit), read
      // back by its insert: the insert moves the region's used_gb counter (a trigger, in one of
      // the region's slot rows that no other purchase holds, under its CHECK), held from here to
      // the commit only. The name's unique index (conflict), then the counter
      // (out_of_stock) decide purchases that raced past the checks above.
      const volume = await this.volumes.create({
        id: volumeId,
        orgId: principal.orgId,
        name,
        status: 'creating',
        type: order.type,
        regionId: order.regionId,
        zoneId: zone.id,
        sizeGb: order.sizeGb,
        serverId: null,
        mountPath: null,
        mounted: false,
        termMonths: order.termMonths,
        billing: amount,
        price,
        expiresAt: addMonthsClamped(now, order.termMonths),
        note: input.note ?? null,
        labels,
        deleteProtection: input.deleteProtection ?? false,
        ...(autoRenew ? { autoRenew: { enabled: autoRenew.enabled, termMonths: autoRenew.termMonths ?? null, leadS: this.settings.autoRenewLeadS } } : {}),
        createdAt: now,
      });
      // Then, in one statement (OperationAcceptance), the wallet's row locked and the hold (402
      // when it does not cover the price: nothing written), the volume.create operation (its
      // foreign key to the volume checked at commit) and the audit entry (the audit head last):
      // region, wallet, audit head, the order every transaction takes them in.
      const accepted = await this.acceptance.accept({
        operation,
        hold: amount,
        audit: {
          orgId: principal.orgId,
          ...auditActor(principal),
          action: 'volume.create',
          targetId: volumeId,
          ipAddress: ip,
          data: {
            operation_id: operation.id,
            name,
            region: order.regionId,
            zone: zone.id,
            type: order.type,
            size_gb: order.sizeGb,
            term_months: order.termMonths,
            currency: amount.currency,
            amount: amount.format(),
            server_id: server?.id ?? null,
            mount_path: mountPath,
            quote_id: input.quoteId ?? null,
            ...(snapshot ? { snapshot_id: snapshot.id } : {}),
          },
        },
      });
      if (accepted.kind === 'insufficient') throw insufficientBalance(amount, accepted.available);
      // A new volume has no other operation: never busy.
      if (accepted.kind === 'busy') throw new Error(`Volume ${volumeId} has an unfinished operation ${accepted.operationId}`);
      // Last: while the provider is known to be down, the whole transaction rolls back (nothing reserved).
      if (this.health.isDown()) throw providerUnavailable();
      return { volume, operation };
    });
  }
}
