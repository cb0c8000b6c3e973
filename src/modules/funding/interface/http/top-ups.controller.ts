import { Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { DomainError } from '../../../../shared/kernel/errors/domain-error';
import { ADMIN_ROLES, ANY_ROLE } from '../../../auth/domain/principal';
import type { Principal } from '../../../auth/domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution, IdempotentOutcome } from '../../../idempotency/application/idempotent-execution';
import { IdempotencyScope, StoredResponse } from '../../../idempotency/domain/idempotency';
import { idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { CancelTopUp, CreateTopUp, ReadTopUps, pendingLimitReached } from '../../application/top-ups.use-cases';
import { TopUp, parseTopUpRequest } from '../../domain/top-up';
import { presentTopUp as presentTopUpJson } from '../../domain/top-up-json';
import { CreateTopUpDto, ListTopUpsQueryDto, TopUpEnvelopeResponse, TopUpPageResponse, TopUpResponse } from './top-ups.openapi';

export function presentTopUp(t: TopUp): TopUpResponse {
  return presentTopUpJson(t);
}

/** Thrown inside a keyed transaction only to learn whether a stored answer exists (the transaction rolls back, the key with it). */
class NothingStored extends Error {}

const READ_SCOPES = { anyScope: ['billing:read', 'vm:read'] as const, roles: ANY_ROLE };

@ApiTags('Wallet')
@Controller('v1/wallet/top-ups')
@ApiAuthenticated()
export class TopUpsController {
  constructor(
    private readonly create: CreateTopUp,
    private readonly read: ReadTopUps,
    private readonly cancelTopUp: CancelTopUp,
    private readonly idempotent: IdempotentExecution,
  ) {}

  /** The stored answer of this Idempotency-Key (or 409 idempotency_conflict), before any provider call; undefined when none. */
  private async storedAnswer(scope: IdempotencyScope | undefined, storable: (err: unknown) => StoredResponse | undefined): Promise<IdempotentOutcome | undefined> {
    if (!scope) return undefined;
    try {
      return await this.idempotent.run(scope, () => Promise.reject(new NothingStored()), (err) => (err instanceof NothingStored ? undefined : storable(err)));
    } catch (err) {
      if (err instanceof NothingStored) return undefined;
      throw err;
    }
  }

  @Post()
  @HttpCode(201)
  @RequireAccess({ scope: 'billing:write', roles: ADMIN_ROLES })
  @ApiOperation({
    operationId: 'createTopUp',
    summary: 'Top up the wallet through the hosted checkout',
    description:
      'API key scope billing:write, or an admin or owner with a session. Opens a checkout session at the payment provider: send the customer to `checkout_url`; ' +
      'the wallet is credited when the provider confirms the payment (never on the redirect). At most 5 pending top-ups per organization (409 quota_exceeded). ' +
      '503 funding_unavailable when the provider cannot be reached (nothing is written). With an Idempotency-Key the 201 and 409 answers are stored and replayed.',
  })
  @ApiBody({ type: CreateTopUpDto })
  @ApiIdempotencyKey([201, 409])
  @ApiCreatedResponse({ type: TopUpEnvelopeResponse, headers: { ...RATE_LIMITED_RESPONSE_HEADERS, Location: { description: 'The top-up', schema: { type: 'string' } } } })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'idempotency_conflict', 'quota_exceeded', 'funding_unavailable', 'rate_limited')
  async createTopUp(@CurrentPrincipal() principal: Principal, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const request = parseTopUpRequest(req.body);
    const scope = idempotencyScope(req, principal.orgId);
    const storable = storableErrors(req, ['quota_exceeded']);
    const stored = await this.storedAnswer(scope, storable);
    if (stored) return sendOutcome(res, stored);
    // At the limit the checkout is never opened; otherwise it is opened before the transaction (503: nothing written).
    const opened = (await this.create.pendingFull(principal.orgId)) ? undefined : await this.create.openCheckout(principal.orgId, request);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        if (!opened) throw pendingLimitReached();
        const topUp = await this.create.insert({ principal, ip }, request, opened);
        return jsonResponse(201, { top_up: presentTopUp(topUp) }, { Location: `/v1/wallet/top-ups/${topUp.id}` });
      },
      storable,
    );
    if (opened && (outcome.replayed || outcome.response.status !== 201)) await this.create.discard(opened.session);
    sendOutcome(res, outcome);
  }

  @Get()
  @RequireAccess(READ_SCOPES)
  @ApiOperation({
    operationId: 'listTopUps',
    summary: "The organization's top-ups, newest first",
    description: 'API key scope billing:read or vm:read, or any member with a session. Filters: status, currency. Cursor pagination (limit 1-100, default 20).',
  })
  @ApiOkResponse({ type: TopUpPageResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListTopUpsQueryDto): Promise<TopUpPageResponse> {
    const page = await this.read.list(principal, query);
    return { top_ups: page.topUps.map(presentTopUp), next_cursor: page.nextCursor };
  }

  @Get(':id')
  @RequireAccess(READ_SCOPES)
  @ApiOperation({ operationId: 'getTopUp', summary: 'One top-up', description: 'API key scope billing:read or vm:read, or any member with a session. Another organization\'s top-up is 404.' })
  @ApiParam({ name: 'id', example: 'tu_Z9y8X7w6V5u4T3s2R1q0P9o8' })
  @ApiOkResponse({ type: TopUpResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<TopUpResponse> {
    return presentTopUp(await this.read.get(principal, id));
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @RequireAccess({ scope: 'billing:write', roles: ADMIN_ROLES })
  @ApiOperation({
    operationId: 'cancelTopUp',
    summary: 'Cancel a pending top-up',
    description:
      'API key scope billing:write, or an admin or owner with a session. Closes the checkout at the provider, then the top-up. ' +
      '409 invalid_state unless pending (details.status), or when the customer has already paid (the payment will be credited). ' +
      '503 funding_unavailable when the provider cannot be reached (nothing changes). With an Idempotency-Key the 200, 404 and 409 answers are stored and replayed.',
  })
  @ApiParam({ name: 'id', example: 'tu_Z9y8X7w6V5u4T3s2R1q0P9o8' })
  @ApiIdempotencyKey([200, 404, 409])
  @ApiOkResponse({ type: TopUpEnvelopeResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'invalid_state', 'funding_unavailable', 'rate_limited')
  async cancel(@CurrentPrincipal() principal: Principal, @ClientIp() ip: string | null, @Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    const storable = storableErrors(req, ['not_found', 'invalid_state']);
    const stored = await this.storedAnswer(scope, storable);
    if (stored) return sendOutcome(res, stored);
    let refusal: DomainError | undefined;
    try {
      await this.cancelTopUp.cancelAtProvider(await this.cancelTopUp.check(principal, id));
    } catch (err) {
      if (!(err instanceof DomainError) || !storable(err)) throw err;
      refusal = err;
    }
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        if (refusal) throw refusal;
        return jsonResponse(200, { top_up: presentTopUp(await this.cancelTopUp.commit({ principal, ip }, id)) });
      },
      storable,
    );
    sendOutcome(res, outcome);
  }
}
