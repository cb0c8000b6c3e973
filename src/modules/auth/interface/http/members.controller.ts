import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiAuthenticated, ApiErrors, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { AddMember, ChangeMemberRole, ListMembers, MemberRecord, RemoveMember } from '../../application/members.use-cases';
import { ADMIN_ROLES, ANY_ROLE } from '../../domain/principal';
import type { Principal } from '../../domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from './access.decorators';
import { AddMemberDto, ChangeRoleDto, MemberListResponse, MemberResponse } from './accounts.openapi';

export const presentMember = (m: MemberRecord): MemberResponse => ({ user_id: m.userId, email: m.email, role: m.role, joined_at: m.joinedAt.toISOString() });

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
  ) {}

  @Get()
  @RequireAccess({ sessionOnly: true, roles: ANY_ROLE })
  @ApiOperation({ operationId: 'listMembers', summary: "The organization's members", description: 'Sessions of any role (API keys: 403).' })
  @ApiOkResponse({ type: MemberListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal): Promise<MemberListResponse> {
    return { members: (await this.listMembers.execute(principal)).map(presentMember) };
  }

  @Post()
  @HttpCode(201)
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'addMember', summary: 'Add a user who has an account', description: `${RULES} Unknown email: 404; already a member: 409 conflict.` })
  @ApiCreatedResponse({ type: MemberResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'rate_limited')
  async add(@CurrentPrincipal() principal: Principal, @Body() body: AddMemberDto, @ClientIp() ip: string | null): Promise<MemberResponse> {
    return presentMember(await this.addMember.execute(principal, { email: body.email, role: body.role }, ip));
  }

  @Patch(':user_id')
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'changeMemberRole', summary: "Change a member's role", description: RULES })
  @ApiParam({ name: 'user_id', description: 'User id of the member', example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  @ApiOkResponse({ type: MemberResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'rate_limited')
  async update(@CurrentPrincipal() principal: Principal, @Param('user_id') userId: string, @Body() body: ChangeRoleDto, @ClientIp() ip: string | null): Promise<MemberResponse> {
    return presentMember(await this.changeRole.execute(principal, userId, body.role, ip));
  }

  @Delete(':user_id')
  @HttpCode(204)
  @RequireAccess({ sessionOnly: true, roles: ANY_ROLE })
  @ApiOperation({ operationId: 'removeMember',
    summary: 'Remove a member',
    description: `Anyone may remove themselves; otherwise admins and owners. ${RULES} The member's sessions lose the organization at once.`,
  })
  @ApiParam({ name: 'user_id', description: 'User id of the member', example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  @ApiNoContentResponse({ description: 'Removed', headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'conflict', 'rate_limited')
  async remove(@CurrentPrincipal() principal: Principal, @Param('user_id') userId: string, @ClientIp() ip: string | null): Promise<void> {
    await this.removeMember.execute(principal, userId, ip);
  }
}
