import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, NO_STORE_HEADER, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, noContentResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { invalidRequest } from '../../../../shared/kernel/errors/domain-error';
import { CreateInvitation } from '../../application/invitations.use-cases';
import { ChangeMemberRole, KeyPolicy, ListMembers, MemberRecord, RemoveMember } from '../../application/members.use-cases';
import { ADMIN_ROLES, ANY_ROLE } from '../../domain/principal';
import type { Principal } from '../../domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from './access.decorators';
import { ChangeRoleDto, MemberListResponse, MemberResponse } from './accounts.openapi';
import { INVITE_RULES, invite } from './invitations.controller';
import { InvitationCreatedResponse, InviteDto } from './organizations.openapi';

export const presentMember = (m: MemberRecord): MemberResponse => ({ user_id: m.userId, email: m.email, role: m.role, joined_at: m.joinedAt.toISOString() });

/** The answers of POST and DELETE stored for an Idempotency-Key besides the success (lifecycle.md: 404 and 409). */
const STORED = (req: Request) => storableErrors(req, ['not_found', 'conflict']);

/** `?revoke_api_keys=true|false` (false when absent); anything else 400 naming it. */
function keyPolicy(raw: unknown): KeyPolicy {
  if (raw === undefined || raw === 'false') return { revokeApiKeys: false };
  if (raw === 'true') return { revokeApiKeys: true };
  throw invalidRequest('revoke_api_keys must be true or false', { field: 'revoke_api_keys' });
}

const REVOKE_API_KEYS = {
  name: 'revoke_api_keys',
  required: false,
  enum: ['true', 'false'],
  description:
    'true: revoke, in the same transaction, every active API key this member created. Without it (false) their keys keep working, ' +
    'and the audit entry lists them by id and name in data.api_keys_kept for follow-up.',
};

const RULES =
  'An admin adds, changes and removes developers, viewers and admins; only an owner adds an owner, grants owner or takes it away (others 403). ' +
  'The last owner can be neither demoted nor removed (409 conflict). API keys: 403.';

@ApiTags('Members')
@ApiAuthenticated()
@Controller('v1/members')
export class MembersController {
  constructor(
    private readonly listMembers: ListMembers,
    private readonly createInvitation: CreateInvitation,
    private readonly changeRole: ChangeMemberRole,
    private readonly removeMember: RemoveMember,
    private readonly idempotent: IdempotentExecution,
  ) {}

  @Get()
  @RequireAccess({ sessionOnly: true, roles: ANY_ROLE })
  @ApiOperation({ operationId: 'listMembers', summary: "The organization's members", description: 'Sessions of any role (API keys: 403).' })
  @ApiOkResponse({ type: MemberListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal): Promise<MemberListResponse> {
    return { members: (await this.listMembers.execute(principal)).map(presentMember) };
  }

  /** Invites (as POST /v1/invitations): nobody becomes a member without accepting. */
  @Post()
  @HttpCode(201)
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'addMember', summary: 'Invite someone (the same as POST /v1/invitations)', description: `Nobody becomes a member without accepting: this creates an invitation. ${INVITE_RULES}` })
  @ApiIdempotencyKey([201, 409])
  @ApiCreatedResponse({ type: InvitationCreatedResponse, headers: { ...RATE_LIMITED_RESPONSE_HEADERS, ...NO_STORE_HEADER } })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'idempotency_conflict', 'conflict', 'quota_exceeded', 'rate_limited')
  async add(@CurrentPrincipal() principal: Principal, @Body() body: InviteDto, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await invite(this.idempotent, this.createInvitation, req, principal, { email: body.email, role: body.role }, ip);
    // The 201 carries the invitation's token: no cache (nor a proxy) may keep it, replays included.
    if (outcome.response.status === 201) res.setHeader('Cache-Control', 'no-store');
    sendOutcome(res, outcome);
  }

  /** Naturally idempotent (the same role again is 200 and writes no audit row), so no Idempotency-Key, as PATCH /v1/volumes/{id}. */
  @Patch(':user_id')
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'changeMemberRole', summary: "Change a member's role", description: `${RULES} A demotion below admin keeps the API keys the member created unless revoke_api_keys=true.` })
  @ApiParam({ name: 'user_id', description: 'User id of the member', example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  @ApiQuery(REVOKE_API_KEYS)
  @ApiOkResponse({ type: MemberResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'rate_limited')
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('user_id') userId: string,
    @Body() body: ChangeRoleDto,
    @Query('revoke_api_keys') revokeApiKeys: unknown,
    @ClientIp() ip: string | null,
  ): Promise<MemberResponse> {
    const policy = keyPolicy(revokeApiKeys);
    return presentMember(await this.changeRole.execute(principal, userId, body.role, ip, policy));
  }

  /** With an Idempotency-Key the answer (204, 404, 409 conflict) is stored and replayed. */
  @Delete(':user_id')
  @HttpCode(204)
  @RequireAccess({ sessionOnly: true, roles: ANY_ROLE })
  @ApiOperation({ operationId: 'removeMember',
    summary: 'Remove a member',
    description: `Anyone may remove themselves; otherwise admins and owners. ${RULES} The member's sessions lose the organization at once; the API keys they created keep working unless revoke_api_keys=true.`,
  })
  @ApiParam({ name: 'user_id', description: 'User id of the member', example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  @ApiQuery(REVOKE_API_KEYS)
  @ApiIdempotencyKey([204, 404, 409])
  @ApiNoContentResponse({ description: 'Removed', headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'conflict', 'rate_limited')
  async remove(
    @CurrentPrincipal() principal: Principal,
    @Param('user_id') userId: string,
    @Query('revoke_api_keys') revokeApiKeys: unknown,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const policy = keyPolicy(revokeApiKeys);
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => {
        await this.removeMember.execute(principal, userId, ip, policy);
        return noContentResponse();
      },
      STORED(req),
    );
    sendOutcome(res, outcome);
  }
}
