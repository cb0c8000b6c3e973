import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiAuthenticated, ApiErrors, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
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
  ) {}

  @Post()
  @HttpCode(201)
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'createApiKey',
    summary: 'Create an API key: the token is in this answer only',
    description: `${SESSIONS_OF_ADMINS} At most 20 active (not revoked, not expired) keys per organization: the 21st is 409 quota_exceeded, also when created at the same moment.`,
  })
  @ApiCreatedResponse({ type: ApiKeyCreatedResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'quota_exceeded', 'rate_limited')
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateApiKeyDto, @ClientIp() ip: string | null): Promise<ApiKeyCreatedResponse> {
    const expiresAt = body.expires_at == null ? null : new Date(body.expires_at);
    const { key, token } = await this.createApiKey.execute({ orgId: principal.orgId, name: body.name, scopes: body.scopes, expiresAt }, actorOf(principal, ip));
    return { api_key: presentApiKey(key), token };
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

  @Delete(':id')
  @HttpCode(204)
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    description: `${SESSIONS_OF_ADMINS} The key is refused (401) from the next request on, on every server process. Revoking a revoked key answers 204 again; another organization's key is 404.`,
  })
  @ApiParam({ name: 'id', description: 'API key id', example: 'key_9dLx2QmV7cPa4TzR8wKy3nHb' })
  @ApiNoContentResponse({ description: 'Revoked', headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null): Promise<void> {
    await this.revokeApiKey.execute({ id, orgId: principal.orgId }, actorOf(principal, ip));
  }
}
