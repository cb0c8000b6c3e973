import { Body, Controller, Delete, Get, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { ErrorCode } from '../../../../shared/kernel/errors/domain-error';
import { presentOperation } from '../../../operations/interface/http/operation.presenter';
import { CreateSnapshot, DeleteSnapshot, RenewSnapshot, SnapshotQueries, UpdateSnapshot } from '../../application/snapshot.use-cases';
import { Snapshot, presentSnapshot } from '../../domain/snapshot';
import { Operation } from '../../../operations/domain/operation';
import { CreateSnapshotBody, ListSnapshotsQuery, RenewSnapshotBody, UpdateSnapshotBody } from './snapshots.dto';
import { SnapshotActionResponse, SnapshotListResponse, SnapshotResponse } from './snapshots.openapi';

/** Stored for replay (lifecycle.md: 2xx, 402, 404 and 409). */
const STORED: readonly ErrorCode[] = ['not_found', 'invalid_state', 'insufficient_balance', 'conflict', 'quota_exceeded'];

const ACCEPTED_HEADERS = {
  ...RATE_LIMITED_RESPONSE_HEADERS,
  Location: { required: true, description: 'The operation to poll: /v1/operations/{op_id}', schema: { type: 'string', example: '/v1/operations/op_8fKq2LmX9vR4tW7yZ3bN5cHd' } },
};

abstract class SnapshotActions {
  constructor(protected readonly idempotent: IdempotentExecution) {}

  protected async accept(req: Request, res: Response, principal: Principal, work: () => Promise<{ snapshot: Snapshot; operation: Operation }>): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => {
        const { snapshot, operation } = await work();
        return jsonResponse(202, { snapshot: presentSnapshot(snapshot), operation: presentOperation(operation) }, { Location: `/v1/operations/${operation.id}` });
      },
      storableErrors(req, STORED),
    );
    sendOutcome(res, outcome);
  }
}

/** POST /v1/volumes/{id}/snapshots: on the volumes' path, owned by the snapshots. */
@ApiTags('Snapshots')
@ApiAuthenticated()
@Controller('v1/volumes')
export class VolumeSnapshotsController extends SnapshotActions {
  constructor(
    idempotent: IdempotentExecution,
    private readonly createSnapshot: CreateSnapshot,
  ) {
    super(idempotent);
  }

  @Post(':id/snapshots')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'createSnapshot',
    summary: 'Take a snapshot of a disk (attached or available), prepaid for a term',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. In one transaction: the snapshot (status `creating`), ' +
      "the hold of `size_gb × snapshot_price_per_gb_month[currency] × term_months` (the region's snapshot price, frozen on the snapshot), " +
      'and a snapshot.create operation to poll (steps payment_reserved, snapshotting). An attached disk is copied crash-consistent ' +
      '(as if its server lost power at that instant). At most 10 live snapshots per disk and 100 per organization. Errors in this ' +
      'order: 400 (the member named in details.field), 409 idempotency_conflict, 404 (volume; a region selling no snapshots), 409 ' +
      'invalid_state (the disk neither available nor attached; suspended: details.reason), 409 quota_exceeded (details.limit), 402, ' +
      '503 provider_unavailable (nothing reserved).',
  })
  @ApiParam({ name: 'id', description: 'Volume id', example: 'vol_demodata1' })
  @ApiIdempotencyKey([202, 402, 404, 409])
  @ApiBody({ type: CreateSnapshotBody })
  @ApiAcceptedResponse({ description: 'Snapshot accepted: the price is held; poll the operation', type: SnapshotActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(
    'invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state',
    'quota_exceeded', 'insufficient_balance', 'provider_unavailable',
  )
  async create(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: CreateSnapshotBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.accept(req, res, principal, () =>
      this.createSnapshot.execute(principal, { volumeId: id, name: body.name, termMonths: body.term_months, currency: body.currency, labels: body.labels }, ip),
    );
  }
}

@ApiTags('Snapshots')
@ApiAuthenticated()
@Controller('v1/snapshots')
export class SnapshotsController extends SnapshotActions {
  constructor(
    idempotent: IdempotentExecution,
    private readonly queries: SnapshotQueries,
    private readonly updateSnapshot: UpdateSnapshot,
    private readonly renewSnapshot: RenewSnapshot,
    private readonly deleteSnapshot: DeleteSnapshot,
  ) {
    super(idempotent);
  }

  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'listSnapshots',
    summary: "The organization's snapshots, newest first, filtered",
    description:
      'API key scope vm:read, or any member with a session. Cursor pagination. Without `status` every snapshot that is not deleted; ' +
      '`status=deleted` the deleted ones. Every filter given must match; a bad value is 400 naming the parameter.',
  })
  @ApiOkResponse({ description: 'A page of snapshots', type: SnapshotListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListSnapshotsQuery) {
    const page = await this.queries.list(principal, {
      limit: query.limit, cursor: query.cursor, volumeId: query.volume_id, region: query.region, status: query.status, label: query.label,
    });
    return { snapshots: page.snapshots.map(presentSnapshot), next_cursor: page.nextCursor };
  }

  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'getSnapshot', summary: 'One snapshot of the organization (deleted ones too, with deleted_at)', description: 'API key scope vm:read, or any member with a session.' })
  @ApiParam({ name: 'id', description: 'Snapshot id', example: 'snap_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiOkResponse({ description: 'The snapshot', type: SnapshotResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return presentSnapshot(await this.queries.get(principal, id));
  }

  @Patch(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'updateSnapshot',
    summary: "Change a snapshot's name, labels or automatic renewal",
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Synchronous: answers 200 with the snapshot. Members left ' +
      'out are unchanged; `labels` replaces the whole map. Errors in this order: 400 (the first bad member, named in details.field), ' +
      '404, 409 invalid_state (deleted snapshot). Allowed while suspended.',
  })
  @ApiParam({ name: 'id', description: 'Snapshot id', example: 'snap_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiBody({ type: UpdateSnapshotBody })
  @ApiOkResponse({ type: SnapshotResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'not_found', 'invalid_state')
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateSnapshotBody, @ClientIp() ip: string | null) {
    return presentSnapshot(await this.updateSnapshot.execute(principal, { snapshotId: id, name: body.name, labels: body.labels, autoRenew: body.auto_renew }, ip));
  }

  @Post(':id/renew')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'renewSnapshot',
    summary: 'Renew a snapshot by a term, at the price it was bought at, paid from the wallet',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Reserves `size_gb × price_per_gb_month[currency] × ' +
      'term_months` and answers 202 with the snapshot and a snapshot.renew operation to poll; `expires_at` becomes max(expires_at, ' +
      'now) + term. A suspended snapshot is available again once it succeeds. Errors in this order: 400, 409 idempotency_conflict, ' +
      '404, 409 invalid_state (creating, deleting, deleted, or an unfinished operation: details.operation_id), 402.',
  })
  @ApiParam({ name: 'id', description: 'Snapshot id', example: 'snap_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiIdempotencyKey([202, 402, 404, 409])
  @ApiAcceptedResponse({ description: 'Renewal accepted: the price is reserved; poll the operation', type: SnapshotActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'insufficient_balance')
  async renew(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: RenewSnapshotBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.accept(req, res, principal, () => this.renewSnapshot.execute(principal, { snapshotId: id, termMonths: body.term_months, currency: body.currency }, ip));
  }

  @Delete(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'deleteSnapshot',
    summary: 'Delete a snapshot; the prepaid term is not refunded',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. The snapshot becomes `deleting` at once; a ' +
      'snapshot.delete operation (step deleting) ends it `deleted`. **The prepaid term is not refunded.** Errors in this order: 409 ' +
      'idempotency_conflict, 404, 409 invalid_state (still creating, already deleted, or an unfinished operation: details.operation_id), ' +
      '503 provider_unavailable.',
  })
  @ApiParam({ name: 'id', description: 'Snapshot id', example: 'snap_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Delete accepted; poll the operation', type: SnapshotActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'provider_unavailable')
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.accept(req, res, principal, () => this.deleteSnapshot.execute(principal, { snapshotId: id }, ip));
  }
}
