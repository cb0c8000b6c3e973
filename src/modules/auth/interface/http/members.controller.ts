import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, noContentResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { AddMember, ChangeMemberRole, ListMembers, MemberRecord, RemoveMember } from '../../application/members.use-cases';
import { ADMIN_ROLES, ANY_ROLE } from '../../domain/principal';
import type { Principal } from '../../domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from './access.decorators';
import { AddMemberDto, ChangeRoleDto, MemberListResponse, MemberResponse } from './accounts.openapi';

export const presentMember = (m: MemberRecord): MemberResponse => ({ user_id: m.userId, email: m.email, role: m.role, joined_at: m.joinedAt.toISOString() });

/** The answers of POST and DELETE stored for an Idempotency-Key besides the success (lifecycle.md: 404 and 409). */
const STORED = (req: Request) => storableErrors(req, ['not_found', 'conflict']);

const RULES =
  'An admin adds, changes and removes developers, viewers and admins; only an owner adds an owner, grants owner or takes it away (others 403). ' +
  'The last owner can be neither demoted nor removed (409 conflict). API keys: 403.';

@ApiTags('Members')
@ApiAuthenticated()
@Controller('v1/members')
export class MembersController {
  constructor(
    private readonly listMembers: ListMembers,
    private readonly addMember: AddMember,
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

  /** With an Idempotency-Key the answer (201, 404, 409 conflict) is stored and replayed. */
  @Post()
  @HttpCode(201)
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'addMember', summary: 'Add a user who has an account', description: `${RULES} Unknown email: 404; already a member: 409 conflict.` })
  @ApiIdempotencyKey([201, 404, 409])
  @ApiCreatedResponse({ type: MemberResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'conflict', 'rate_limited')
  async add(@CurrentPrincipal() principal: Principal, @Body() body: AddMemberDto, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => jsonResponse(201, presentMember(await this.addMember.execute(principal, { email: body.email, role: body.role }, ip))),
      STORED(req),
    );
    sendOutcome(res, outcome);
  }

  /** Naturally idempotent (the same role again is 200 and writes no audit row), so no Idempotency-Key, as PATCH /v1/volumes/{id}. */
  @Patch(':user_id')
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'changeMemberRole', summary: "Change a member's role", description: RULES })
  @ApiParam({ name: 'user_id', description: 'User id of the member', example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  @ApiOkResponse({ type: MemberResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'rate_limited')
  async update(@CurrentPrincipal() principal: Principal, @Param('user_id') userId: string, @Body() body: ChangeRoleDto, @ClientIp() ip: string | null): Promise<MemberResponse> {
    return presentMember(await this.changeRole.execute(principal, userId, body.role, ip));
  }

  /** With an Idempotency-Key the answer (204, 404, 409 conflict) is stored and replayed. */
  @Delete(':user_id')
  @HttpCode(204)
  @RequireAccess({ sessionOnly: true, roles: ANY_ROLE })
  @ApiOperation({ operationId: 'removeMember',
    summary: 'Remove a member',
    description: `Anyone may remove themselves; otherwise admins and owners. ${RULES} The member's sessions lose the organization at once.`,
  })
  @ApiParam({ name: 'user_id', description: 'User id of the member', example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  @ApiIdempotencyKey([204, 404, 409])
  @ApiNoContentResponse({ description: 'Removed', headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'conflict', 'rate_limited')
  async remove(@CurrentPrincipal() principal: Principal, @Param('user_id') userId: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => {
        await this.removeMember.execute(principal, userId, ip);
        return noContentResponse();
      },
      STORED(req),
    );
    sendOutcome(res, outcome);
  }
}
