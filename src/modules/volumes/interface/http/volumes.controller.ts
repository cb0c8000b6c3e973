import { Body, Controller, Delete, Get, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution, IdempotentOptions } from '../../../idempotency/application/idempotent-execution';
import { STORED_ERROR_STATUSES, idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { ErrorCode } from '../../../../shared/kernel/errors/domain-error';
import { RequestValidationPipe } from '../../../../shared/http/validation.pipe';
import { PurchaseVolume } from '../../application/purchase-volume.use-case';
import { AttachVolume, DeleteVolume, DetachVolume, VolumeActionResult } from '../../application/volume-actions.use-cases';
import { presentOperation } from '../../../operations/interface/http/operation.presenter';
import { RenewVolume } from '../../application/renew-volume.use-case';
import { UpdateVolume } from '../../application/update-volume.use-case';
import { VolumeQueries } from '../../application/volume-queries';
import { presentVolume } from './volume.presenter';
import { AttachVolumeBody, DeleteVolumeQuery, ListVolumesQuery, PurchaseVolumeBody, RenewVolumeBody, ResizeVolumeBody, UpdateVolumeBody } from './volumes.dto';
import { ResizeVolume } from '../../application/resize-volume.use-case';
import { DryRunPriceResponse } from '../../../prepaid/interface/http/prepaid.openapi';
import { RenewVolumeResponse, VolumeActionResponse, VolumeListResponse, VolumeResponse } from './volumes.openapi';

/** Stored for replay on the volume actions (lifecycle.md: 2xx, 402, 404 and 409). */
const ACTION_STORED_ERROR_CODES: readonly ErrorCode[] = [
  'not_found', 'invalid_state', 'insufficient_balance', 'conflict', 'out_of_stock', 'quota_exceeded', 'quote_expired',
];

/** Validates PATCH's body in the handler, after the check lifecycle.md puts before it (the global pipe's rules). */
const BODY_VALIDATION = new RequestValidationPipe();

const ACCEPTED_HEADERS = {
  ...RATE_LIMITED_RESPONSE_HEADERS,
  Location: { required: true, description: 'The operation to poll: /v1/operations/{op_id}', schema: { type: 'string', example: '/v1/operations/op_8fKq2LmX9vR4tW7yZ3bN5cHd' } },
};

@ApiTags('Volumes')
@ApiAuthenticated()
@Controller('v1/volumes')
export class VolumesController {
  constructor(
    private readonly queries: VolumeQueries,
    private readonly renewVolume: RenewVolume,
    private readonly updateVolume: UpdateVolume,
    private readonly idempotent: IdempotentExecution,
    private readonly purchaseVolume: PurchaseVolume,
    private readonly attachVolume: AttachVolume,
    private readonly detachVolume: DetachVolume,
    private readonly deleteVolume: DeleteVolume,
    private readonly resizeVolume: ResizeVolume,
  ) {}

  /**
   * lifecycle.md: every action answers 202 {volume, operation} with Location; with an
   * Idempotency-Key its 2xx, 402, 404 and 409 answers are stored and replayed.
   */
  private async accept(req: Request, res: Response, principal: Principal, work: () => Promise<VolumeActionResult>, options: IdempotentOptions = {}): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        const { volume, operation } = await work();
        return jsonResponse(
          202,
          { volume: presentVolume(volume), operation: presentOperation(operation) },
          { Location: `/v1/operations/${operation.id}` },
        );
      },
      storableErrors(req, ACTION_STORED_ERROR_CODES),
      options,
    );
    sendOutcome(res, outcome);
  }

  @Post()
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'purchaseVolume',
    summary: 'Buy a disk for a prepaid term, optionally attached to a server when ready',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. In one transaction: the volume (status `creating`, ' +
      'price frozen), its capacity in the region, the hold of `size_gb × price_per_gb_month[currency] × term_months` (or the ' +
      "quote's amount with `quote_id`), and a volume.create operation to poll (steps payment_reserved, creating_volume (restoring with " +
      '`snapshot_id`: the disk made from that snapshot, in its region and of its type), attaching with a server, ready). Errors in this order: 400 (the member named in details.field), 409 idempotency_conflict, 400 (what ' +
      'the offer, zone, server and quote named tell: size or term not sold, a zone or server of another region or zone, a member ' +
      'differing from the quote, then a region or zone that does not exist, with details.valid), 404 (server, quote, snapshot; a region selling no disk of the type), 409 quote_expired, 409 invalid_state (quote used; a snapshot not available, suspended with details.reason), ' +
      '409 conflict (name taken), 409 out_of_stock (zone not available or region full), 409 quota_exceeded (the server holds ' +
      'per_server_limit disks, counting attaches and purchases in progress), 402, 503 provider_unavailable (nothing reserved).',
  })
  @ApiIdempotencyKey([202, 402, 404, 409])
  @ApiBody({
    type: PurchaseVolumeBody,
    // Orders that work on the demo data under "Try it out" (a quote_id must come from POST /v1/quotes first).
    examples: {
      attached: {
        summary: 'A disk attached to server web-1 when ready',
        value: { name: 'data-2', region: 'id-jkt', size_gb: 50, term_months: 1, currency: 'USD', server_id: 'vm_demoweb1' },
      },
      detached: {
        summary: 'A detached ssd disk, billed in IDR',
        value: { name: 'scratch-1', region: 'id-jkt', type: 'ssd', size_gb: 20, term_months: 3, currency: 'IDR', labels: { env: 'dev' } },
      },
    },
  })
  @ApiAcceptedResponse({ description: 'Purchase accepted: the price is held; poll the operation', type: VolumeActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(
    'invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found',
    'quote_expired', 'invalid_state', 'conflict', 'out_of_stock', 'quota_exceeded', 'insufficient_balance', 'provider_unavailable',
  )
  async purchase(
    @CurrentPrincipal() principal: Principal,
    @Body() body: PurchaseVolumeBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.accept(req, res, principal, () =>
      this.purchaseVolume.execute(
        principal,
        {
          name: body.name,
          regionId: body.region,
          sizeGb: body.size_gb,
          termMonths: body.term_months,
          currency: body.currency,
          type: body.type,
          zoneId: body.zone,
          serverId: body.server_id,
          mountPath: body.mount_path,
          note: body.note,
          labels: body.labels,
          deleteProtection: body.delete_protection,
          quoteId: body.quote_id,
          autoRenew: body.auto_renew,
          snapshotId: body.snapshot_id,
        },
        ip,
      ),
      // Its effects are all in its transaction; it writes (the volume's row) before it may refuse (402): only a success is stored optimistically.
      { optimistic: 'success' },
    );
  }

  @Post(':id/attach')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'attachVolume',
    summary: 'Attach an available disk to a server in its zone and mount it',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Answers 202 with a volume.attach operation (steps ' +
      'attaching, mounting); the volume stays `available` until it succeeds. Errors in this order: 400, 409 idempotency_conflict, ' +
      '404 (volume, server), 400 (server in another zone), 409 invalid_state (an unfinished operation: details.operation_id; ' +
      'then not available), 409 quota_exceeded (no free slot on the server), 503 provider_unavailable.',
  })
  @ApiParam({ name: 'id', description: 'Volume id', example: 'vol_demodata1' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Attach accepted; poll the operation', type: VolumeActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'quota_exceeded', 'provider_unavailable')
  async attach(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: AttachVolumeBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.accept(req, res, principal, () =>
      this.attachVolume.execute(principal, { volumeId: id, serverId: body.server_id, mountPath: body.mount_path }, ip),
    );
  }

  @Post(':id/resize')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'resizeVolume',
    summary: 'Grow a disk (attached or not), priced for the rest of its term',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Charges added GB × the disk\'s price_per_gb_month × r, ' +
      'r = (expires_at − now) / 30 days in seconds, in its billing currency, rounded up to the minor unit: held now, captured when ' +
      'the volume.resize operation (steps payment_reserved, resizing) succeeds; expires_at does not move and later renewals charge ' +
      'the new size. The added gigabytes are reserved in the region at once and given back if it fails. dry_run: true answers 200 ' +
      'with the price and changes nothing. Errors in this order: 400, 409 idempotency_conflict, 404, 400 size_gb (disks only grow; ' +
      'a multiple of step_gb; at most max_gb), 409 invalid_state (an unfinished operation: details.operation_id; then suspended, ' +
      'deleting or creating), 409 out_of_stock, 402.',
  })
  @ApiParam({ name: 'id', description: 'Volume id', example: 'vol_demodata1' })
  @ApiIdempotencyKey([202, ...STORED_ERROR_STATUSES])
  @ApiOkResponse({ description: 'dry_run: the price; nothing reserved', type: DryRunPriceResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiAcceptedResponse({ description: 'Resize accepted: the price held, the gigabytes reserved; poll the operation', type: VolumeActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'out_of_stock', 'insufficient_balance')
  async resize(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: ResizeVolumeBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const input = { volumeId: id, sizeGb: body.size_gb };
    if (body.dry_run === true) {
      const amount = await this.resizeVolume.quote(principal, input);
      sendOutcome(res, { response: jsonResponse(200, { amount: { currency: amount.currency, amount: amount.format() } }), replayed: false });
      return;
    }
    await this.accept(req, res, principal, () => this.resizeVolume.execute(principal, input, ip));
  }

  @Post(':id/detach')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'detachVolume',
    summary: 'Unmount and detach a disk from its server',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. No body. Answers 202 with a volume.detach operation ' +
      '(steps unmounting, detaching); the volume stays `attached` until it succeeds. A failed unmount fails the operation and ' +
      'leaves the disk attached (never a forced detach). Errors in this order: 409 idempotency_conflict, 404, 409 invalid_state ' +
      '(an unfinished operation: details.operation_id; then not attached), 503 provider_unavailable.',
  })
  @ApiParam({ name: 'id', description: 'Volume id', example: 'vol_demodata1' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Detach accepted; poll the operation', type: VolumeActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'provider_unavailable')
  async detach(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.accept(req, res, principal, () => this.detachVolume.execute(principal, { volumeId: id }, ip));
  }

  @Delete(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'deleteVolume',
    summary: 'Delete a disk (with ?detach=true: unmount and detach it first); the prepaid term is not refunded',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. The volume becomes `deleting` at once; a ' +
      'volume.delete operation (steps unmounting and detaching when attached, then deleting) ends it `deleted`, its capacity ' +
      'given back. **The prepaid term is not refunded.** Errors in this order: 400 (detach not true/false), 409 ' +
      'idempotency_conflict, 404, 409 invalid_state (an unfinished operation: details.operation_id; already deleting or deleted; ' +
      'delete_protection on, attached without ?detach=true), 503 provider_unavailable.',
  })
  @ApiParam({ name: 'id', description: 'Volume id', example: 'vol_demodata1' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Delete accepted; poll the operation', type: VolumeActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'provider_unavailable')
  async remove(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Query() query: DeleteVolumeQuery,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.accept(req, res, principal, () => this.deleteVolume.execute(principal, { volumeId: id, detach: query.detach === 'true' }, ip));
  }

  /** The organization's volumes (not deleted, unless status=deleted), newest first; filters; cursor pagination. */
  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'listVolumes',
    summary: "The organization's volumes, newest first, filtered",
    description:
      'API key scope vm:read, or any member with a session. Cursor pagination. Without `status` every volume that is not deleted; ' +
      '`status=deleted` the deleted ones. Every filter given must match; a bad value is 400 naming the parameter.',
  })
  @ApiOkResponse({ description: 'A page of volumes', type: VolumeListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListVolumesQuery) {
    const page = await this.queries.list(principal, {
      limit: query.limit,
      cursor: query.cursor,
      region: query.region,
      zone: query.zone,
      type: query.type,
      status: query.status,
      serverId: query.server_id,
      name: query.name,
      label: query.label,
      expiresBefore: query.expires_before,
      autoRenew: query.auto_renew,
    });
    return { volumes: page.volumes.map(presentVolume), next_cursor: page.nextCursor };
  }

  /** One volume of the organization (deleted ones too, with deleted_at); 404 otherwise. */
  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'getVolume', summary: 'One volume of the organization (deleted ones too, with deleted_at)', description: 'API key scope vm:read, or any member with a session.' })
  @ApiParam({ name: 'id', description: 'Volume id', example: 'vol_demodata1' })
  @ApiOkResponse({ description: 'The volume', type: VolumeResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return presentVolume(await this.queries.get(principal, id));
  }

  /**
   * lifecycle.md: PATCH {name?, note?, labels?, delete_protection?, auto_renew?} → 200 with the Volume.
   * Naturally idempotent (the same body leaves the same volume), so no Idempotency-Key.
   */
  @Patch(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({ operationId: 'updateVolume',
    summary: "Change a disk's name, note, labels, delete protection or automatic renewal",
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Synchronous: answers 200 with the volume. Members left out ' +
      'are unchanged; `labels` replaces the whole map; `note: null` clears the note. Turning `delete_protection` off takes an admin or ' +
      'owner session or an API key (a developer session gets 403). Errors in this order: 403 (a developer session sending ' +
      'delete_protection: false for a protected volume), 400 (the first bad member, named in details.field), 404, 409 invalid_state ' +
      '(deleted volume), 409 conflict (name taken). ' +
      'Idempotency-Key is not used: sending the same body again leaves the same volume and writes no second audit row.',
  })
  @ApiParam({ name: 'id', description: 'Volume id', example: 'vol_demodata1' })
  @ApiBody({ type: UpdateVolumeBody })
  @ApiOkResponse({ type: VolumeResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'not_found', 'invalid_state', 'conflict')
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    // The parsed body, validated here (as @Body() would) after the 403 a developer turning protection off gets (lifecycle.md: 403 before 400).
    @Req() req: Request,
    @ClientIp() ip: string | null,
  ) {
    await this.updateVolume.refuseProtectionOff(principal, id, req.body);
    const body = (await BODY_VALIDATION.transform(req.body, { type: 'body', metatype: UpdateVolumeBody })) as UpdateVolumeBody;
    const volume = await this.updateVolume.execute(
      principal,
      { volumeId: id, name: body.name, note: body.note, labels: body.labels, deleteProtection: body.delete_protection, autoRenew: body.auto_renew },
      ip,
    );
    return presentVolume(volume);
  }

  /**
   * interface.md 4.1: 202 {volume, operation} with Location of the operation. With an
   * Idempotency-Key the answer (202, 402, 404, 409 invalid_state) is stored and replayed.
   */
  @Post(':id/renew')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'renewVolume',
    summary: 'Renew a disk by a term, at the price it was bought at, paid from the wallet',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Reserves the price and answers 202 with the volume ' +
      'and a volume.renew operation to poll. Errors in this order: 400, 409 idempotency_conflict, 404, 409 invalid_state, 402.',
  })
  @ApiParam({ name: 'id', description: 'Volume id', example: 'vol_demodata1' })
  @ApiIdempotencyKey([202, ...STORED_ERROR_STATUSES])
  @ApiAcceptedResponse({
    description: 'Renewal accepted: the price is reserved; poll the operation',
    type: RenewVolumeResponse,
    headers: {
      ...RATE_LIMITED_RESPONSE_HEADERS,
      Location: { required: true, description: 'The operation to poll: /v1/operations/{op_id}', schema: { type: 'string', example: '/v1/operations/op_8fKq2LmX9vR4tW7yZ3bN5cHd' } },
    },
  })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'insufficient_balance')
  async renew(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: RenewVolumeBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        const { volume, operation } = await this.renewVolume.execute(
          principal,
          { volumeId: id, termMonths: body.term_months, currency: body.currency },
          ip,
        );
        return jsonResponse(
          202,
          { volume: presentVolume(volume), operation: presentOperation(operation) },
          { Location: `/v1/operations/${operation.id}` },
        );
      },
      storableErrors(req),
      { optimistic: true }, // RenewVolume's effects are all in its transaction, its writes in its last statement
    );
    sendOutcome(res, outcome);
  }
}
