import { Body, Controller, Delete, Get, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { ErrorCode } from '../../../../shared/kernel/errors/domain-error';
import { presentOperation } from '../../../operations/interface/http/operation.presenter';
import { CreateImage, DeleteImage, ImageQueries, RenewImage, UpdateImage } from '../../application/image.use-cases';
import { ServerImage, presentCatalogImage, presentImage } from '../../domain/image';
import { Operation } from '../../../operations/domain/operation';
import { CreateImageBody, ListImagesQuery, RenewImageBody, UpdateImageBody } from './images.dto';
import { CatalogImageResponse, ImageActionResponse, ImageListResponse, ImageResponse } from './images.openapi';

/** Stored for replay (lifecycle.md: 2xx, 402, 404 and 409). */
const STORED: readonly ErrorCode[] = ['not_found', 'invalid_state', 'insufficient_balance', 'conflict', 'quota_exceeded'];

const ACCEPTED_HEADERS = {
  ...RATE_LIMITED_RESPONSE_HEADERS,
  Location: { required: true, description: 'The operation to poll: /v1/operations/{op_id}', schema: { type: 'string', example: '/v1/operations/op_8fKq2LmX9vR4tW7yZ3bN5cHd' } },
};

abstract class ImageActions {
  constructor(protected readonly idempotent: IdempotentExecution) {}

  protected async accept(req: Request, res: Response, principal: Principal, work: () => Promise<{ image: ServerImage; operation: Operation }>): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => {
        const { image, operation } = await work();
        return jsonResponse(202, { image: presentImage(image), operation: presentOperation(operation) }, { Location: `/v1/operations/${operation.id}` });
      },
      storableErrors(req, STORED),
    );
    sendOutcome(res, outcome);
  }
}

/** POST /v1/servers/{id}/images: on the servers' path, owned by the images. */
@ApiTags('Images')
@ApiAuthenticated()
@Controller('v1/servers')
export class ServerImagesController extends ImageActions {
  constructor(
    idempotent: IdempotentExecution,
    private readonly createImage: CreateImage,
  ) {
    super(idempotent);
  }

  @Post(':id/images')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'createImage',
    summary: "Image a server's boot disk (running or stopped), prepaid for a term",
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. In one transaction: the image (status `creating`, ' +
      "disk_gb the server's boot disk, os the image it was installed from), the hold of `disk_gb × snapshot_price_per_gb_month[currency] × term_months` " +
      "(the region's snapshot price, frozen on the image), and an image.create operation to poll (steps payment_reserved, imaging). " +
      'A running server is copied crash-consistent (as if it lost power at that instant). At most 100 live images per organization. ' +
      'Errors in this order: 400 (the member named in details.field), 409 idempotency_conflict, 404 (server; a region selling no images), ' +
      '409 invalid_state (an unfinished operation: details.operation_id; the server neither running nor stopped; suspended: details.reason), ' +
      '409 quota_exceeded (details.limit), 402, 503 provider_unavailable (nothing reserved).',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiIdempotencyKey([202, 402, 404, 409])
  @ApiBody({ type: CreateImageBody })
  @ApiAcceptedResponse({ description: 'Image accepted: the price is held; poll the operation', type: ImageActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(
    'invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state',
    'quota_exceeded', 'insufficient_balance', 'provider_unavailable',
  )
  async create(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: CreateImageBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.accept(req, res, principal, () =>
      this.createImage.execute(principal, { serverId: id, name: body.name, termMonths: body.term_months, currency: body.currency, labels: body.labels }, ip),
    );
  }
}

@ApiTags('Images')
@ApiAuthenticated()
@Controller('v1/images')
export class ImagesController extends ImageActions {
  constructor(
    idempotent: IdempotentExecution,
    private readonly queries: ImageQueries,
    private readonly updateImage: UpdateImage,
    private readonly renewImage: RenewImage,
    private readonly deleteImage: DeleteImage,
  ) {
    super(idempotent);
  }

  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'listImages',
    summary: "The catalog's images and the organization's own, newest first",
    description:
      "API key scope vm:read, or any member with a session. Cursor pagination. The catalog's images (type system or app, usable in every " +
      "region that sells servers, as GET /v1/server-options shows them) and the organization's server images that are not deleted (type " +
      'snapshot, usable in their region). `type` keeps one type; a bad value is 400 naming the parameter.',
  })
  @ApiOkResponse({ description: 'A page of images', type: ImageListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListImagesQuery) {
    const page = await this.queries.list(principal, { limit: query.limit, cursor: query.cursor, type: query.type });
    return {
      images: page.images.map((l) => (l.kind === 'catalog' ? presentCatalogImage(l.image) : presentImage(l.image))),
      next_cursor: page.nextCursor,
    };
  }

  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'getImage',
    summary: "One image: the organization's own (deleted ones too, with deleted_at) or the catalog's",
    description:
      "API key scope vm:read, or any member with a session. An id of the organization's images answers the Image (type snapshot); " +
      "an id of the catalog (as GET /v1/images lists it, type system or app) answers that CatalogImage, the same for every organization. " +
      "Another organization's image is 404.",
  })
  @ApiParam({ name: 'id', description: 'Image id: an img_… of the organization, or a catalog id', example: 'img_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiOkResponse({
    description: 'The image',
    schema: { oneOf: [{ $ref: getSchemaPath(CatalogImageResponse) }, { $ref: getSchemaPath(ImageResponse) }] },
    headers: RATE_LIMITED_RESPONSE_HEADERS,
  })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    const found = await this.queries.get(principal, id);
    return found.kind === 'catalog' ? presentCatalogImage(found.image) : presentImage(found.image);
  }

  @Patch(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'updateImage',
    summary: "Change a server image's name, labels or automatic renewal",
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Synchronous: answers 200 with the image. Members left ' +
      'out are unchanged; `labels` replaces the whole map. Errors in this order: 400 (the first bad member, named in details.field), ' +
      '404, 409 invalid_state (deleted image). Allowed while suspended.',
  })
  @ApiParam({ name: 'id', description: 'Image id', example: 'img_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiBody({ type: UpdateImageBody })
  @ApiOkResponse({ type: ImageResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'not_found', 'invalid_state')
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateImageBody, @ClientIp() ip: string | null) {
    return presentImage(await this.updateImage.execute(principal, { imageId: id, name: body.name, labels: body.labels, autoRenew: body.auto_renew }, ip));
  }

  @Post(':id/renew')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'renewImage',
    summary: 'Renew a server image by a term, at the price it was bought at, paid from the wallet',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Reserves `disk_gb × price_per_gb_month[currency] × ' +
      'term_months` and answers 202 with the image and an image.renew operation to poll; `expires_at` becomes max(expires_at, ' +
      'now) + term. A suspended image is available again once it succeeds. Errors in this order: 400, 409 idempotency_conflict, ' +
      '404, 409 invalid_state (creating, deleting, deleted, or an unfinished operation: details.operation_id), 402.',
  })
  @ApiParam({ name: 'id', description: 'Image id', example: 'img_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiIdempotencyKey([202, 402, 404, 409])
  @ApiAcceptedResponse({ description: 'Renewal accepted: the price is reserved; poll the operation', type: ImageActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'insufficient_balance')
  async renew(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: RenewImageBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.accept(req, res, principal, () => this.renewImage.execute(principal, { imageId: id, termMonths: body.term_months, currency: body.currency }, ip));
  }

  @Delete(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'deleteImage',
    summary: 'Delete a server image; the prepaid term is not refunded',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. The image becomes `deleting` at once; an ' +
      'image.delete operation (step deleting) ends it `deleted`. Servers made from it are not touched. **The prepaid term is not ' +
      'refunded.** Errors in this order: 409 idempotency_conflict, 404, 409 invalid_state (still creating, already deleted, or an ' +
      'unfinished operation: details.operation_id), 503 provider_unavailable.',
  })
  @ApiParam({ name: 'id', description: 'Image id', example: 'img_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Delete accepted; poll the operation', type: ImageActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'provider_unavailable')
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.accept(req, res, principal, () => this.deleteImage.execute(principal, { imageId: id }, ip));
  }
}
