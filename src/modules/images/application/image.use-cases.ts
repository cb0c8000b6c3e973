import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Currency } from '../../../shared/kernel/money/money';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { SystemActor } from '../../audit/application/audit-actor';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { OperationAcceptance } from '../../operations/application/operation-acceptance.port';
import { CopyUseCaseKind, DeleteCopy, RenewCopy, UpdateCopy, acceptHeld } from '../../prepaid/application/copy.use-cases';
import { Operation } from '../../operations/domain/operation';
import { TermMonths, purchasedTerm } from '../../prepaid/domain/term';
import { Labels, checkLabels } from '../../prepaid/domain/labels';
import { suspendedError } from '../../prepaid/domain/suspension';
import { ComputeHealth } from '../../servers/application/compute-provider.port';
import { ServerLifecycle } from '../../servers/application/server-lifecycle.port';
import { ServerWrites } from '../../servers/application/servers.port';
import { ImageListType, ServerImage, checkImageName, imageAmount, imageBusy, quoteImageRenewal } from '../domain/image';
import { imageParams } from './image-params';
import { ImageRepository, ListedImage } from './images.port';

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
        ...purchasedTerm(input.termMonths, amount, price, labels, operation.id, now),
      });
      await acceptHeld(this.acceptance, principal, operation, amount, {
        action: 'image.create', targetId: imageId, ip,
        data: {
          operation_id: operation.id, name, server_id: server.id, disk_gb: server.diskGb, term_months: input.termMonths,
          currency: amount.currency, amount: amount.format(),
        },
      });
      if (this.health.isDown()) throw providerUnavailable();
      return { image, operation };
    });
  }
}

/** How the renew, delete and update use cases reach server images. */
export function imageCopies(images: ImageRepository): CopyUseCaseKind<ServerImage> {
  return {
    noun: 'Image',
    kind: 'image',
    rows: images,
    params: (i, termMonths, amount) => imageParams.write({ imageId: i.id, serverId: i.fromServerId, termMonths, amount }),
    quoteRenewal: quoteImageRenewal,
    checkName: (value) => checkImageName(value),
    busy: imageBusy,
    providerUnavailable,
  };
}

/**
 * POST /v1/images/{id}/renew: the image's row locked (404; 409 invalid_state when creating,
 * deleting, deleted or busy), the image.renew operation with the hold at the frozen price
 * (`disk_gb × price × term_months`, currency the billing one by default; 402), audited
 * `image.renew`. A suspended image may be renewed (available again on success).
 */
@Injectable()
export class RenewImage {
  private readonly renewal: RenewCopy<ServerImage>;

  constructor(uow: UnitOfWork, images: ImageRepository, acceptance: OperationAcceptance, clock: Clock) {
    this.renewal = new RenewCopy(imageCopies(images), uow, acceptance, clock);
  }

  async execute(
    principal: Principal | SystemActor,
    input: { imageId: string; termMonths: TermMonths; currency?: Currency; auto?: boolean },
    ip: string | null,
  ): Promise<{ image: ServerImage; operation: Operation }> {
    const { copy, operation } = await this.renewal.execute(principal, { id: input.imageId, termMonths: input.termMonths, currency: input.currency, auto: input.auto }, ip);
    return { image: copy, operation };
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
  private readonly deletion: DeleteCopy<ServerImage>;

  constructor(uow: UnitOfWork, images: ImageRepository, acceptance: OperationAcceptance, health: ComputeHealth, clock: Clock) {
    this.deletion = new DeleteCopy(imageCopies(images), uow, acceptance, health, clock);
  }

  async execute(principal: Principal | SystemActor, input: { imageId: string; reason?: 'customer' | 'expired' }, ip: string | null): Promise<{ image: ServerImage; operation: Operation }> {
    const { copy, operation } = await this.deletion.execute(principal, { id: input.imageId, reason: input.reason }, ip);
    return { image: copy, operation };
  }

  /** The image's row locked by the caller. */
  async deleteLocked(principal: Principal | SystemActor, image: ServerImage, reason: 'customer' | 'expired', ip: string | null): Promise<{ image: ServerImage; operation: Operation }> {
    const { copy, operation } = await this.deletion.deleteLocked(principal, image, reason, ip);
    return { image: copy, operation };
  }
}

/** PATCH /v1/images/{id} {name?, labels?, auto_renew?}: synchronous; audited `image.update` with what changed. */
@Injectable()
export class UpdateImage {
  private readonly updates: UpdateCopy<ServerImage>;

  constructor(uow: UnitOfWork, images: ImageRepository, audit: AuditTrail) {
    this.updates = new UpdateCopy(imageCopies(images), uow, audit);
  }

  execute(principal: Principal, input: { imageId: string; name?: string; labels?: Record<string, unknown>; autoRenew?: unknown }, ip: string | null): Promise<ServerImage> {
    return this.updates.execute(principal, { id: input.imageId, name: input.name, labels: input.labels, autoRenew: input.autoRenew }, ip);
  }
}

/**
 * GET /v1/images and GET /v1/images/{id}: the catalog's images (system, app) and the
 * organization's own (snapshot; deleted ones by id only). Another organization's image is 404.
 */
@Injectable()
export class ImageQueries {
  constructor(private readonly images: ImageRepository) {}

  /** One of the organization's images (deleted ones too), or an image of the catalog, as GET /v1/images lists it. */
  async get(principal: Principal, id: string): Promise<ListedImage> {
    const own = await this.images.findInOrg(principal.orgId, id);
    if (own) return { kind: 'own', image: own };
    const catalog = await this.images.findCatalog(id);
    if (catalog) return { kind: 'catalog', image: catalog };
    throw notFound(`Image ${id} not found`);
  }

  async list(principal: Principal, input: { limit?: string; cursor?: string; type?: ImageListType }): Promise<{ images: ListedImage[]; nextCursor: string | null }> {
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const page = await this.images.list(principal.orgId, { limit, after, type: input.type });
    return { images: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}
