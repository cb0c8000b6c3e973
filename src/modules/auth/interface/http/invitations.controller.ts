import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, NO_STORE_HEADER, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { IdempotentExecution, IdempotentOutcome } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, noContentResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { AcceptInvitation, CreateInvitation, ListInvitations, RevokeInvitation } from '../../application/invitations.use-cases';
import { SignedInUser } from '../../application/organizations.use-cases';
import { Invitation } from '../../domain/invitation';
import { ADMIN_ROLES } from '../../domain/principal';
import type { Principal, Role } from '../../domain/principal';
import { ClientIp, CurrentPrincipal, CurrentUser, RequireAccess } from './access.decorators';
import {
  AcceptInvitationDto,
  InvitationAcceptedResponse,
  InvitationCreatedResponse,
  InvitationListResponse,
  InvitationResponse,
  InviteDto,
  ListInvitationsQuery,
} from './organizations.openapi';

const iso = (d: Date | null): string | null => d && d.toISOString();

/** An invitation as the API shows it: never its token (nor its digest). */
export const presentInvitation = (i: Invitation): InvitationResponse => ({
  id: i.id,
  email: i.email,
  role: i.role,
  created_at: i.createdAt.toISOString(),
  created_by: i.createdBy,
  expires_at: i.expiresAt.toISOString(),
  accepted_at: iso(i.acceptedAt),
  revoked_at: iso(i.revokedAt),
});

export const INVITE_RULES =
  'Sessions of admins and owners (API keys: 403); only an owner invites an owner. The token (cds_inv_…) is in this answer only: the inviter hands it over (no mail is sent); ' +
  'it is valid 7 days. The answer is the same whether or not the email has an account. A member already: 409 conflict; at most 50 pending invitations per organization: 409 quota_exceeded. ' +
  'With an Idempotency-Key a retry by the same caller gets the same token (stored encrypted); another user or key repeating the key gets 409 idempotency_conflict.';

/**
 * POST /v1/invitations and POST /v1/members: the answer holds the token, so it is stored sealed
 * and replays only to the caller who made it (IdempotentOptions.seal).
 */
export async function invite(
  idempotent: IdempotentExecution,
  createInvitation: CreateInvitation,
  req: Request,
  principal: Principal,
  input: { email: string; role: Role },
  ip: string | null,
): Promise<IdempotentOutcome> {
  return idempotent.run(
    idempotencyScope(req, principal.orgId),
    async () => {
      const { invitation, token } = await createInvitation.execute(principal, input, ip);
      const created: InvitationCreatedResponse = { invitation: presentInvitation(invitation), token };
      return jsonResponse(201, created);
    },
    storableErrors(req, ['conflict', 'quota_exceeded']),
    { seal: true },
  );
}

@ApiTags('Invitations')
@ApiAuthenticated()
@Controller('v1/invitations')
export class InvitationsController {
  constructor(
    private readonly createInvitation: CreateInvitation,
    private readonly listInvitations: ListInvitations,
    private readonly revokeInvitation: RevokeInvitation,
    private readonly acceptInvitation: AcceptInvitation,
    private readonly idempotent: IdempotentExecution,
  ) {}

  @Post()
  @HttpCode(201)
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'createInvitation', summary: 'Invite someone to the organization: the token is in this answer only', description: INVITE_RULES })
  @ApiIdempotencyKey([201, 409])
  @ApiCreatedResponse({ type: InvitationCreatedResponse, headers: { ...RATE_LIMITED_RESPONSE_HEADERS, ...NO_STORE_HEADER } })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'idempotency_conflict', 'conflict', 'quota_exceeded', 'rate_limited')
  async create(@CurrentPrincipal() principal: Principal, @Body() body: InviteDto, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await invite(this.idempotent, this.createInvitation, req, principal, { email: body.email, role: body.role }, ip);
    // The 201 carries the invitation's token: no cache (nor a proxy) may keep it, replays included.
    if (outcome.response.status === 201) res.setHeader('Cache-Control', 'no-store');
    sendOutcome(res, outcome);
  }

  @Get()
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'listInvitations', summary: "The organization's invitations, newest first", description: 'Sessions of admins and owners (API keys: 403). Filter status: pending, accepted, expired, revoked. Never a token.' })
  @ApiOkResponse({ type: InvitationListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListInvitationsQuery): Promise<InvitationListResponse> {
    const page = await this.listInvitations.execute(principal, query);
    return { invitations: page.invitations.map(presentInvitation), next_cursor: page.nextCursor };
  }

  /** Declared before ':id' routes; a POST, so it never meets DELETE ':id' anyway. */
  @Post('accept')
  @HttpCode(200)
  @RequireAccess({ userLevel: true })
  @ApiOperation({ operationId: 'acceptInvitation',
    summary: 'Accept an invitation: join its organization with the role it gives',
    description:
      'Sessions only (API keys: 403), whose user has the invited email (case-insensitively; another email: 403). An unknown, expired, revoked or already accepted token: 404, one message for all. ' +
      'Already a member: 409 conflict; a user belongs to at most 10 organizations: 409 quota_exceeded. X-Org-ID is not needed and is ignored.',
  })
  @ApiIdempotencyKey([200, 404, 409])
  @ApiOkResponse({ type: InvitationAcceptedResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'conflict', 'quota_exceeded', 'rate_limited')
  async accept(@CurrentUser() user: SignedInUser, @Body() body: AcceptInvitationDto, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, user.userId),
      async () => {
        const { organization, role } = await this.acceptInvitation.execute(user, body.token, ip);
        const accepted: InvitationAcceptedResponse = { organization: { id: organization.id, name: organization.name, role } };
        return jsonResponse(200, accepted);
      },
      storableErrors(req, ['not_found', 'conflict', 'quota_exceeded']),
    );
    sendOutcome(res, outcome);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireAccess({ sessionOnly: true, roles: ADMIN_ROLES })
  @ApiOperation({ operationId: 'revokeInvitation',
    summary: 'Revoke an invitation',
    description: 'Sessions of admins and owners (API keys: 403); only an owner revokes an invitation to owner. Its token stops working at once. Revoked already: 204 again; accepted: 409 invalid_state; unknown or another organization\'s: 404.',
  })
  @ApiParam({ name: 'id', description: 'Invitation id', example: 'inv_4kTz9QmV7cPa2LxR8wKy3nHb' })
  @ApiIdempotencyKey([204, 404, 409])
  @ApiNoContentResponse({ description: 'Revoked', headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'invalid_state', 'rate_limited')
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, principal.orgId),
      async () => {
        await this.revokeInvitation.execute(principal, id, ip);
        return noContentResponse();
      },
      storableErrors(req, ['not_found', 'invalid_state']),
    );
    sendOutcome(res, outcome);
  }
}
