import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock, addMonthsClamped } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Currency } from '../../../shared/kernel/money/money';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { SystemActor, auditActor } from '../../audit/application/audit-actor';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { OperationAcceptance } from '../../operations/application/operation-acceptance.port';
import { Operation } from '../../operations/domain/operation';
import { RENEWAL_TERMS, TermMonths } from '../../prepaid/domain/term';
import { Labels, checkLabels, sameLabels } from '../../prepaid/domain/labels';
import { checkAutoRenew } from '../../prepaid/domain/auto-renew';
import { suspendedError } from '../../prepaid/domain/suspension';
import { ComputeHealth } from '../../servers/application/compute-provider.port';
import { ServerLifecycle } from '../../servers/application/server-lifecycle.port';
import { ServerWrites } from '../../servers/application/servers.port';
import { insufficientBalance } from '../../wallet/domain/wallet-errors';
import { ImageListType, ServerImage, checkImageName, imageAmount, imageBusy, quoteImageRenewal } from '../domain/image';
import { imageParams } from './image-params';
import { ImageChanges, ImageRepository, ListedImage } from './images.port';

export interface CreateImageInput {
  serverId: string;
  name: string;
  termMonths: TermMonths;
  currency: Currency;
  labels?: Record<string, unknown>;
}

const providerUnavailable = (): DomainError => new DomainError('provider_unavailable', 'The compute provider is unavailable; nothing was reserved. Retry later');

/**
 * POST /v1/servers/{id}/images: in one transaction, the server's row locked (404; 409
 * invalid_state unless running or stopped: suspended ones with details.reason, one with an
 * unfinished operation with details.operation_id), the region's snapshot price (404 when it
 * sells none), the image row (`creating`, `disk_gb` the server's boot disk, `os` its image; the
 * organization's live count goes up with it in the database: 409 quota_exceeded past 100), then
 * the image.create operation with the hold of `disk_gb × price × term_months` and the audit row
 * (402 when the wallet cannot cover it: nothing is left). 503 while the compute provider is down.
 */
@Injectable()
export class CreateImage {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly servers: ServerWrites,
    private readonly lifecycle: ServerLifecycle,
    private readonly images: ImageRepository,
    private readonly acceptance: OperationAcceptance,
    private readonly health: ComputeHealth,
    private readonly clock: Clock,
  ) {}

  async execute(principal: Principal, input: CreateImageInput, ip: string | null): Promise<{ image: ServerImage; operation: Operation }> {
    const name = checkImageName(input.name);
    const labels: Labels = input.labels === undefined ? {} : checkLabels(input.labels);
    return this.uow.run(async () => {
      const server = await this.servers.lockInOrg(principal.orgId, input.serverId);
      if (!server || server.status === 'deleted') throw notFound(`Server ${input.serverId} not found`);
      const price = await this.images.regionPrice(server.regionId);
      if (!price) throw notFound(`Region ${server.regionId} sells no images`);
      const busy = await this.lifecycle.unfinishedOperation(server.id);
      if (busy) throw new DomainError('invalid_state', `Server ${server.id} has an unfinished operation ${busy}; wait for it to end`, { operation_id: busy });
      if (server.status === 'suspended') throw suspendedError('Server', server.id, 'image it');
      if (server.status !== 'running' && server.status !== 'stopped') {
        throw invalidState(`Server ${server.id} is ${server.status}; an image needs a running or stopped server`);
      }
      if (server.instanceMissingSince !== null) {
        throw new DomainError('invalid_state', `Server ${server.id} has no instance at the compute provider`, { instance_missing_since: server.instanceMissingSince.toISOString() });
      }
      if (server.diskGb === null) throw invalidState(`Server ${server.id} was not bought here (a seeded server, no plan): its boot disk cannot be imaged`);
      const now = this.clock.now();
      const amount = imageAmount(price, input.currency, input.termMonths, server.diskGb);
      const imageId = newId('img');
      const operation = Operation.create({
        id: newId('op'),
        orgId: principal.orgId,
        type: 'image.create',
        vmId: null,
        volumeId: null,
        steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'imaging', status: 'pending' }],
        params: imageParams.write({ imageId, serverId: server.id, termMonths: input.termMonths, amount }),
        createdAt: now,
      });
      // The count's CHECK decides here (409 quota_exceeded), before the money.
      const image = await this.images.create({
        id: imageId,
        orgId: principal.orgId,
        name,
        status: 'creating',
        fromServerId: server.id,
        regionId: server.regionId,
        diskGb: server.diskGb,
        os: server.image,
        termMonths: input.termMonths,
        billing: amount,
        price,
        expiresAt: addMonthsClamped(now, input.termMonths),
        autoRenew: { enabled: false, termMonths: null },
        labels,
        operationId: operation.id,
        createdAt: now,
      });
      const outcome = await this.acceptance.accept({
        operation,
        hold: amount,
        audit: {
          orgId: principal.orgId,
          ...auditActor(principal),
          action: 'image.create',
          targetId: imageId,
          ipAddress: ip,
          data: {
            operation_id: operation.id, name, server_id: server.id, disk_gb: server.diskGb, term_months: input.termMonths,
            currency: amount.currency, amount: amount.format(),
          },
        },
      });
      if (outcome.kind === 'insufficient') throw insufficientBalance(amount, outcome.available);
      if (outcome.kind === 'busy') throw invalidState(`Operation ${outcome.operationId} is in the way`);
      if (this.health.isDown()) throw providerUnavailable();
      return { image, operation };
    });
  }
}

/**
 * POST /v1/images/{id}/renew: the image's row locked (404; 409 invalid_state when creating,
 * deleting, deleted or busy), the image.renew operation with the hold at the frozen price
 * (`disk_gb × price × term_months`, currency the billing one by default; 402), audited
 * `image.renew`. A suspended image may be renewed (available again on success).
 */
@Injectable()
export class RenewImage {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly images: ImageRepository,
    private readonly acceptance: OperationAcceptance,
    private readonly clock: Clock,
  ) {}

  execute(
    principal: Principal | SystemActor,
    input: { imageId: string; termMonths: TermMonths; currency?: Currency; auto?: boolean },
    ip: string | null,
  ): Promise<{ image: ServerImage; operation: Operation }> {
    return this.uow.run(async () => {
      const image = await this.images.lockInOrg(principal.orgId, input.imageId);
      if (!image) throw notFound(`Image ${input.imageId} not found`);
      const quote = quoteImageRenewal(image, input.termMonths, input.currency);
      const operation = Operation.create({
        id: newId('op'),
        orgId: principal.orgId,
        type: 'image.renew',
        vmId: null,
        volumeId: null,
        steps: [{ name: 'renewing', status: 'running' }],
        params: imageParams.write({ imageId: image.id, serverId: image.fromServerId, termMonths: quote.termMonths, amount: quote.amount }),
        createdAt: this.clock.now(),
      });
      const outcome = await this.acceptance.accept({
        operation,
        hold: quote.amount,
        audit: {
          orgId: principal.orgId,
          ...auditActor(principal),
          action: 'image.renew',
          targetId: image.id,
          ipAddress: ip,
          data: {
            operation_id: operation.id, term_months: quote.termMonths, currency: quote.amount.currency, amount: quote.amount.format(),
            ...(input.auto ? { auto: true } : {}),
          },
        },
      });
      if (outcome.kind === 'insufficient') throw insufficientBalance(quote.amount, outcome.available);
      if (outcome.kind === 'busy') throw invalidState(`Operation ${outcome.operationId} is in the way`);
      await this.images.setOperation(image.id, operation.id);
      return { image: { ...image, operationId: operation.id }, operation };
    });
  }
}

/**
 * DELETE /v1/images/{id}: the image becomes `deleting` at once and an image.delete operation
 * (step `deleting`) deletes it at the provider. 409 invalid_state while it is being created,
 * already deleted, or busy (a renewal). The prepaid term is not refunded. Servers made from it
 * keep their disks.
 */
@Injectable()
export class DeleteImage {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly images: ImageRepository,
    private readonly acceptance: OperationAcceptance,
    private readonly health: ComputeHealth,
    private readonly clock: Clock,
  ) {}

  execute(principal: Principal | SystemActor, input: { imageId: string; reason?: 'customer' | 'expired' }, ip: string | null): Promise<{ image: ServerImage; operation: Operation }> {
    return this.uow.run(async () => {
      const image = await this.images.lockInOrg(principal.orgId, input.imageId);
      if (!image) throw notFound(`Image ${input.imageId} not found`);
      return this.deleteLocked(principal, image, input.reason ?? 'customer', ip);
    });
  }

  /** The image's row locked by the caller. */
  async deleteLocked(principal: Principal | SystemActor, image: ServerImage, reason: 'customer' | 'expired', ip: string | null): Promise<{ image: ServerImage; operation: Operation }> {
    if (image.status === 'deleted') throw invalidState(`Image ${image.id} is deleted already`);
    if (image.status === 'creating') throw invalidState(`Image ${image.id} is still being created; delete it once it is available`);
    if (image.operationId) throw imageBusy(image);
    // `deleting` with no operation: an earlier deletion failed at the provider; this one tries again.
    const operation = Operation.create({
      id: newId('op'),
      orgId: image.orgId,
      type: 'image.delete',
      vmId: null,
      volumeId: null,
      steps: [{ name: 'deleting', status: 'pending' }],
      params: imageParams.write({ imageId: image.id, serverId: image.fromServerId, termMonths: null, amount: null }),
      createdAt: this.clock.now(),
    });
    const outcome = await this.acceptance.accept({
      operation,
      audit: {
        orgId: image.orgId,
        ...auditActor(principal),
        action: 'image.delete',
        targetId: image.id,
        ipAddress: ip,
        data: { operation_id: operation.id, ...(reason === 'expired' ? { reason } : {}) },
      },
    });
    if (outcome.kind !== 'accepted') throw invalidState(`Image ${image.id} could not be deleted now; retry`);
    await this.images.markDeleting(image.id, operation.id, reason);
    if (principal.kind !== 'system' && this.health.isDown()) throw providerUnavailable();
    return { image: { ...image, status: 'deleting', operationId: operation.id, deletedReason: reason }, operation };
  }
}

/** PATCH /v1/images/{id} {name?, labels?, auto_renew?}: synchronous; audited `image.update` with what changed. */
@Injectable()
export class UpdateImage {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly images: ImageRepository,
    private readonly audit: AuditTrail,
  ) {}

  async execute(principal: Principal, input: { imageId: string; name?: string; labels?: Record<string, unknown>; autoRenew?: unknown }, ip: string | null): Promise<ServerImage> {
    const name = input.name === undefined ? undefined : checkImageName(input.name);
    const labels = input.labels === undefined ? undefined : checkLabels(input.labels);
    const autoRenew = input.autoRenew === undefined ? undefined : checkAutoRenew(input.autoRenew, RENEWAL_TERMS);
    return this.uow.run(async () => {
      const i = await this.images.lockInOrg(principal.orgId, input.imageId);
      if (!i) throw notFound(`Image ${input.imageId} not found`);
      if (i.status === 'deleted') throw invalidState(`Image ${i.id} is deleted`);
      const changes: ImageChanges = {};
      const changed: Record<string, { old: unknown; new: unknown }> = {};
      if (name !== undefined && name !== i.name) {
        changes.name = name;
        changed.name = { old: i.name, new: name };
      }
      if (labels !== undefined && !sameLabels(labels, i.labels)) {
        changes.labels = labels;
        changed.labels = { old: i.labels, new: labels };
      }
      if (autoRenew !== undefined) {
        const next = { enabled: autoRenew.enabled, termMonths: autoRenew.termMonths === undefined ? i.autoRenew.termMonths : autoRenew.termMonths };
        if (next.enabled !== i.autoRenew.enabled || next.termMonths !== i.autoRenew.termMonths) {
          changes.autoRenew = next;
          changed.auto_renew = { old: { enabled: i.autoRenew.enabled, term_months: i.autoRenew.termMonths }, new: { enabled: next.enabled, term_months: next.termMonths } };
        }
      }
      if (Object.keys(changed).length === 0) return i;
      await this.images.update(i.id, changes);
      await this.audit.record({ orgId: principal.orgId, ...auditActor(principal), action: 'image.update', targetId: i.id, ipAddress: ip, data: { changes: changed } });
      return (await this.images.findInOrg(principal.orgId, i.id))!;
    });
  }
}

/**
 * GET /v1/images and GET /v1/images/{id}: the catalog's images (system, app) and the
 * organization's own (snapshot; deleted ones by id only). Another organization's image is 404.
 */
@Injectable()
export class ImageQueries {
  constructor(private readonly images: ImageRepository) {}

  async get(principal: Principal, id: string): Promise<ServerImage> {
    const i = await this.images.findInOrg(principal.orgId, id);
    if (!i) throw notFound(`Image ${id} not found`);
    return i;
  }

  async list(principal: Principal, input: { limit?: string; cursor?: string; type?: ImageListType }): Promise<{ images: ListedImage[]; nextCursor: string | null }> {
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const page = await this.images.list(principal.orgId, { limit, after, type: input.type });
    return { images: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}
