import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { actorOf } from '../../../auth/application/api-keys.use-cases';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import type { Principal } from '../../../auth/domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, noContentResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { CreateSshKey, DeleteSshKey, RenameSshKey, SshKeyQueries, validateNewSshKey } from '../../application/ssh-keys.use-cases';
import { CreateSshKeyBody, ListSshKeysQuery, SshKeyListResponse, SshKeyResponse, UpdateSshKeyBody } from './access.openapi';
import { presentSshKey } from './access.presenters';

const WRITERS = 'API key scope vm:write, or a developer, admin or owner with a session.';
const READERS = 'API key scope vm:read, or any member with a session.';

@ApiTags('SSH keys')
@ApiAuthenticated()
@Controller('v1/ssh-keys')
export class SshKeysController {
  constructor(
    private readonly createSshKey: CreateSshKey,
    private readonly renameSshKey: RenameSshKey,
    private readonly deleteSshKey: DeleteSshKey,
    private readonly queries: SshKeyQueries,
    private readonly idempotent: IdempotentExecution,
  ) {}

  @Post()
  @HttpCode(201)
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'createSshKey',
    summary: 'Add an SSH public key, to give to servers at their creation',
    description:
      `${WRITERS} The key is parsed and checked (type, base64, the blob's inner type and curve, RSA of 2048 bits or more); its ` +
      'fingerprint is the one `ssh-keygen -l` prints. Errors in this order: 400 (name, then public_key), 409 idempotency_conflict, ' +
      '409 conflict (the fingerprint, then the name, taken in the organization: details.existing_id and details.field), ' +
      '409 quota_exceeded (100 keys per organization).',
  })
  @ApiIdempotencyKey([201, 409])
  @ApiCreatedResponse({ type: SshKeyResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'conflict', 'quota_exceeded')
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateSshKeyBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const input = validateNewSshKey(body);
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => jsonResponse(201, presentSshKey(await this.createSshKey.execute(principal.orgId, input, actorOf(principal, ip)))),
      storableErrors(req, ['conflict', 'quota_exceeded']),
    );
    sendOutcome(res, outcome);
  }

  @Get()
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'listSshKeys', summary: "The organization's SSH keys, newest first", description: `${READERS} Filters: fingerprint, name (exact).` })
  @ApiOkResponse({ type: SshKeyListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListSshKeysQuery): Promise<SshKeyListResponse> {
    const page = await this.queries.list(principal.orgId, query);
    return { ssh_keys: page.keys.map(presentSshKey), next_cursor: page.nextCursor };
  }

  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'getSshKey', summary: 'One SSH key of the organization', description: READERS })
  @ApiParam({ name: 'id', description: 'SSH key id', example: 'ssh_4fTq9LmX2vR8tW7yZ3bN5cHd' })
  @ApiOkResponse({ type: SshKeyResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<SshKeyResponse> {
    return presentSshKey(await this.queries.get(principal.orgId, id));
  }

  /** Naturally idempotent (the same name leaves the same key), so no Idempotency-Key. */
  @Patch(':id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'updateSshKey',
    summary: "Rename an SSH key",
    description: `${WRITERS} Errors in this order: 400 (name), 404, 409 conflict (the name is another key's: details.existing_id, details.field name).`,
  })
  @ApiParam({ name: 'id', description: 'SSH key id', example: 'ssh_4fTq9LmX2vR8tW7yZ3bN5cHd' })
  @ApiOkResponse({ type: SshKeyResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'not_found', 'conflict')
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateSshKeyBody, @ClientIp() ip: string | null): Promise<SshKeyResponse> {
    return presentSshKey(await this.renameSshKey.execute(principal.orgId, id, body, actorOf(principal, ip)));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'deleteSshKey',
    summary: 'Delete an SSH key',
    description: `${WRITERS} The key is gone; servers that were given it keep it (keys are injected at creation only). Again: 404.`,
  })
  @ApiParam({ name: 'id', description: 'SSH key id', example: 'ssh_4fTq9LmX2vR8tW7yZ3bN5cHd' })
  @ApiIdempotencyKey([204, 404])
  @ApiNoContentResponse({ description: 'Deleted', headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found')
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => {
        await this.deleteSshKey.execute(principal.orgId, id, actorOf(principal, ip));
        return noContentResponse();
      },
      storableErrors(req, ['not_found']),
    );
    sendOutcome(res, outcome);
  }
}
