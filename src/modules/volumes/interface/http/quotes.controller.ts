import { Body, Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { CreateQuote, QuoteQueries } from '../../application/quotes.use-cases';
import { CreateServerQuote, presentServerQuote } from '../../../servers/application/server-quotes.use-case';
import { invalidRequest } from '../../../../shared/kernel/errors/domain-error';
import { presentQuote } from './quote.presenter';
import { CreateQuoteBody } from './volumes.dto';
import { QuoteResponse } from './volumes.openapi';

@ApiTags('Volumes')
@ApiAuthenticated()
@Controller('v1/quotes')
export class QuotesController {
  constructor(
    private readonly createQuote: CreateQuote,
    private readonly queries: QuoteQueries,
    private readonly idempotent: IdempotentExecution,
    private readonly serverQuotes: CreateServerQuote,
  ) {}

  /** lifecycle.md "Quotes": 201 with the quote. With an Idempotency-Key the answer (201, 404) is stored and replayed. */
  @Post()
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({ operationId: 'createQuote',
    summary: 'Lock the price of a disk order, or with plan a server order, for 10 minutes',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Checked as a purchase is: 400 for a member missing ' +
      'or of the wrong type, 409 idempotency_conflict, 400 for a region that does not exist (details.valid), 404 for one selling no disk of the type, then 400 ' +
      'for a size or term the offer does not sell. Stock and balance are checked at purchase, not here. `type` defaults to premium. ' +
      'With `plan` it is a server quote {region, plan, term_months, currency} (kind server; `type` or `size_gb` beside it: 400), ' +
      'checked as a server purchase: 400 for an unknown region or a term not sold, 404 for a region without servers or a plan not sold there.',
  })
  @ApiIdempotencyKey([201, 404])
  @ApiCreatedResponse({ description: 'The quote', type: QuoteResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found')
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateQuoteBody, @Req() req: Request, @Res() res: Response): Promise<void> {
    if (body.plan !== undefined) {
      for (const field of ['type', 'size_gb'] as const) {
        if (body[field] !== undefined) throw invalidRequest(`${field} is a member of disk quotes; a server quote (with plan) takes region, plan, term_months and currency`, { field });
      }
    }
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        if (body.plan !== undefined) {
          const quote = await this.serverQuotes.execute(principal, { regionId: body.region, planId: body.plan, termMonths: body.term_months, currency: body.currency });
          return jsonResponse(201, presentServerQuote(quote));
        }
        const quote = await this.createQuote.execute(principal, {
          regionId: body.region,
          type: body.type ?? 'premium',
          sizeGb: body.size_gb,
          termMonths: body.term_months,
          currency: body.currency,
        });
        return jsonResponse(201, presentQuote(quote));
      },
      storableErrors(req),
    );
    sendOutcome(res, outcome);
  }

  /** One quote of the organization; another organization's is 404. */
  @Get(':id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'getQuote', summary: 'One quote of the organization', description: 'API key scope vm:read, or any member with a session.' })
  @ApiParam({ name: 'id', description: 'Quote id', example: 'quo_4Lm9xQ2vR7tW1yZ3bN5cHd8K' })
  @ApiOkResponse({ type: QuoteResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    const serverQuote = await this.serverQuotes.find(principal, id);
    if (serverQuote) return presentServerQuote(serverQuote);
    return presentQuote(await this.queries.get(principal, id));
  }
}
