import { Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, NO_STORE_HEADER, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import type { Principal } from '../../../auth/domain/principal';
import { WRITER_ROLES } from '../../../auth/domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { CreateServerConsole, PreparedConsole } from '../../application/create-console.use-case';
import { ServerConsoleResponse } from './console.openapi';

/** POST /v1/servers/{id}/console: a VNC console credential (servers.md "console"). */
@ApiTags('Servers')
@ApiAuthenticated()
@Controller('v1/servers')
export class ConsoleController {
  constructor(
    private readonly createConsole: CreateServerConsole,
    private readonly idempotent: IdempotentExecution,
  ) {}

  /**
   * The provider's credential is made first, outside any transaction (a refusal is kept as the
   * request's answer, so that a stored answer still replays first); then, in the Idempotency-Key's
   * transaction, the audit row and the 201, stored sealed (it holds the password). A replay answers
   * the stored credential; the one this request made is never shown and expires unused.
   */
  @Post(':id/console')
  @HttpCode(201)
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'createServerConsole',
    summary: 'A one-time VNC console credential for a running server',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Answers 201 with a wss:// URL holding a one-time token and a ' +
      '24-character password, valid for 60 seconds; each call makes a new credential (earlier ones live until they expire). The server ' +
      'must be running, whatever operation is unfinished (409 invalid_state otherwise, a deleted server too); 503 provider_unavailable ' +
      'while the compute provider is down. No operation. Audited as server.console_access (never the URL or password). With an ' +
      'Idempotency-Key, a retry by the same caller gets the same credential (stored encrypted under the key, which the service keeps ' +
      'only as a hash); the same key from another caller is 409 idempotency_conflict. Errors in this order: 400 (the Idempotency-Key), ' +
      '409 idempotency_conflict, 404, 409 invalid_state, 503.',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiIdempotencyKey([201, 404, 409])
  @ApiCreatedResponse({ description: 'The credential, shown once', type: ServerConsoleResponse, headers: { ...RATE_LIMITED_RESPONSE_HEADERS, ...NO_STORE_HEADER } })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'idempotency_conflict', 'not_found', 'invalid_state', 'rate_limited', 'provider_unavailable')
  async create(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    let prepared: PreparedConsole | undefined;
    let refusal: unknown;
    try {
      prepared = await this.createConsole.prepare(principal, id);
    } catch (err) {
      refusal = err;
    }
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        if (!prepared) throw refusal;
        await this.createConsole.handOut(principal, prepared, ip);
        const body: ServerConsoleResponse = {
          type: prepared.console.type,
          url: prepared.console.url,
          password: prepared.console.password,
          expires_at: prepared.console.expiresAt.toISOString(),
        };
        return jsonResponse(201, body);
      },
      storableErrors(req),
      { seal: true },
    );
    // The 201 carries the credential: no cache (nor a proxy) may keep it, replays included.
    if (outcome.response.status === 201) res.setHeader('Cache-Control', 'no-store');
    sendOutcome(res, outcome);
  }
}
