import { invalidRequest } from '../../../../shared/kernel/errors/domain-error';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, NO_STORE_HEADER, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, noContentResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { ApiKeyRecord, CreateApiKey, ListApiKeys, RevokeApiKey, actorOf } from '../../application/api-keys.use-cases';
import { ADMIN_ROLES } from '../../domain/principal';
import type { Principal } from '../../domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from './access.decorators';
import { ApiKeyCreatedResponse, ApiKeyListResponse, ApiKeyResponse, CreateApiKeyDto, ListApiKeysQuery } from './accounts.openapi';

const iso = (d: Date | null): string | null => d && d.toISOString();

/** An API key as the API shows it: never its token (nor its hash). */
export function presentApiKey(k: ApiKeyRecord): ApiKeyResponse {
  return {
    id: k.id,
    name: k.name,
    scopes: k.scopes,
    token_prefix: k.tokenPrefix,
    created_at: k.createdAt.toISOString(),
    created_by: k.createdBy,
    expires_at: iso(k.expiresAt),
    last_used_at: iso(k.lastUsedAt),
    revoked_at: iso(k.revokedAt),
  };
}

const SESSIONS_OF_ADMINS = 'Sessions of admins and owners only (API keys: 403 forbidden).';

@ApiTags('API keys')
@ApiAuthenticated()
@Controller('v1/api-keys')
export class ApiKeysController {
  constructor(
    private readonly createApiKey: CreateApiKey,
    private readonly listApiKeys: ListApiKeys,
    private readonly revokeApiKey: RevokeApiKey,
    private readonly idempotent: IdempotentExecution,
  ) {}

  /**
   * With an Idempotency-Key the answer (201, 409 quota_exceeded) is stored and replayed; the 201
   * holds the token, so it is stored encrypted under the key (IdempotentOptions.seal): a retry
   * gets the very same token, a database dump does not.
   */
  @Post()
  @HttpCode(201)
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'createApiKey',
    summary: 'Create an API key: the token is in this answer only',
    description:
      `${SESSIONS_OF_ADMINS} At most 20 active (not revoked, not expired) keys per organization: the 21st is 409 quota_exceeded, also when created at the same moment. ` +
      'With an Idempotency-Key, a retry gets the same answer, the same token included (stored encrypted under the Idempotency-Key, which the service keeps only as a hash), and creates no second key.',
  })
  @ApiIdempotencyKey([201, 409])
  @ApiCreatedResponse({ type: ApiKeyCreatedResponse, headers: { ...RATE_LIMITED_RESPONSE_HEADERS, ...NO_STORE_HEADER } })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'idempotency_conflict', 'quota_exceeded', 'rate_limited')
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateApiKeyDto,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const expiresAt = body.expires_at == null ? null : new Date(body.expires_at);
    // ISO 8601 allows forms (basic: 20300101T000000Z) that Date does not read: 400, not an invalid date.
    if (expiresAt && Number.isNaN(expiresAt.getTime())) {
      throw invalidRequest('expires_at must be an ISO 8601 timestamp such as 2027-01-01T00:00:00Z', { field: 'expires_at' });
    }
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        const { key, token } = await this.createApiKey.execute({ orgId: principal.orgId, name: body.name, scopes: body.scopes, expiresAt }, actorOf(principal, ip));
        const created: ApiKeyCreatedResponse = { api_key: presentApiKey(key), token };
        return jsonResponse(201, created);
      },
      storableErrors(req, ['quota_exceeded']),
      { seal: true },
    );
    // The 201 carries the key's token: no cache (nor a proxy) may keep it, replays included.
    if (outcome.response.status === 201) res.setHeader('Cache-Control', 'no-store');
    sendOutcome(res, outcome);
  }

  @Get()
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'listApiKeys', summary: "The organization's API keys, newest first", description: `${SESSIONS_OF_ADMINS} Revoked and expired keys included; never a token.` })
  @ApiOkResponse({ type: ApiKeyListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListApiKeysQuery): Promise<ApiKeyListResponse> {
    const page = await this.listApiKeys.execute(principal, query);
    return { api_keys: page.keys.map(presentApiKey), next_cursor: page.nextCursor };
  }

  /** With an Idempotency-Key the answer (204, 404) is stored and replayed. */
  @Delete(':id')
  @HttpCode(204)
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    description: `${SESSIONS_OF_ADMINS} The key is refused (401) from the next request on, on every server process. Revoking a revoked key answers 204 again; another organization's key is 404.`,
  })
  @ApiParam({ name: 'id', description: 'API key id', example: 'key_9dLx2QmV7cPa4TzR8wKy3nHb' })
  @ApiIdempotencyKey([204, 404])
  @ApiNoContentResponse({ description: 'Revoked', headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'rate_limited')
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        await this.revokeApiKey.execute({ id, orgId: principal.orgId }, actorOf(principal, ip));
        return noContentResponse();
      },
      storableErrors(req, ['not_found']),
    );
    sendOutcome(res, outcome);
  }
}
