import { Body, Controller, Get, HttpCode, Param, Patch, Post, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { CreateOrganization, ListOrganizations, OrganizationView, RenameOrganization, SignedInUser } from '../../application/organizations.use-cases';
import { ClientIp, CurrentUser, RequireAccess } from './access.decorators';
import { OrganizationListResponse, OrganizationNameDto, OrganizationResponse, OrganizationResultResponse } from './organizations.openapi';

export const presentOrganization = (o: OrganizationView): OrganizationResponse => ({ id: o.id, name: o.name, role: o.role, created_at: o.createdAt.toISOString() });

const SESSIONS = 'Sessions only (API keys: 403 forbidden); X-Org-ID is not needed and is ignored.';

@ApiTags('Organizations')
@ApiAuthenticated()
@Controller('v1/organizations')
export class OrganizationsController {
  constructor(
    private readonly listOrganizations: ListOrganizations,
    private readonly createOrganization: CreateOrganization,
    private readonly renameOrganization: RenameOrganization,
    private readonly idempotent: IdempotentExecution,
  ) {}

  @Get()
  @RequireAccess({ userLevel: true })
  @ApiOperation({ operationId: 'listOrganizations', summary: "The caller's organizations, oldest membership first", description: `${SESSIONS} The first is the default organization when X-Org-ID is not sent.` })
  @ApiOkResponse({ type: OrganizationListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentUser() user: SignedInUser): Promise<OrganizationListResponse> {
    return { organizations: (await this.listOrganizations.execute(user)).map(presentOrganization) };
  }

  /** With an Idempotency-Key (kept under the user: no organization is selected) the 201 and the 409 are stored and replayed. */
  @Post()
  @HttpCode(201)
  @RequireAccess({ userLevel: true })
  @ApiOperation({ operationId: 'createOrganization',
    summary: 'Create an organization: the caller is its only member, as owner',
    description: `${SESSIONS} Its wallets start empty (USD and IDR at zero). A user belongs to at most 10 organizations: 409 quota_exceeded (details.limit), also when created at the same moment.`,
  })
  @ApiIdempotencyKey([201, 409])
  @ApiCreatedResponse({ type: OrganizationResultResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'idempotency_conflict', 'quota_exceeded', 'rate_limited')
  async create(@CurrentUser() user: SignedInUser, @Body() body: OrganizationNameDto, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.idempotent.run(
      idempotencyScope(req, user.userId),
      async () => jsonResponse(201, { organization: presentOrganization(await this.createOrganization.execute(user, { name: body.name }, ip)) }),
      storableErrors(req, ['quota_exceeded']),
    );
    sendOutcome(res, outcome);
  }

  /** Naturally idempotent (the same name again is 200 and audits nothing), so no Idempotency-Key. */
  @Patch(':id')
  @RequireAccess({ userLevel: true })
  @ApiOperation({ operationId: 'renameOrganization',
    summary: 'Rename an organization',
    description: `${SESSIONS} Owners only: another member gets 403, someone who is not a member 404. Organizations are not deleted over HTTP (their money and resources belong to them).`,
  })
  @ApiParam({ name: 'id', description: 'Organization id', example: 'org_demo' })
  @ApiOkResponse({ type: OrganizationResultResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async rename(@CurrentUser() user: SignedInUser, @Param('id') id: string, @Body() body: OrganizationNameDto, @ClientIp() ip: string | null): Promise<OrganizationResultResponse> {
    return { organization: presentOrganization(await this.renameOrganization.execute(user, id, { name: body.name }, ip)) };
  }
}
