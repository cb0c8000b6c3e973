import { Body, Controller, Param, Post, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { RequestValidationPipe } from '../../../../shared/http/validation.pipe';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { DomainError, ErrorCode } from '../../../../shared/kernel/errors/domain-error';
import type { Principal } from '../../../auth/domain/principal';
import { WRITER_ROLES } from '../../../auth/domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution, IdempotentOptions } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { presentOperation } from '../../../operations/interface/http/operation.presenter';
import { Checked, PurchaseServer, PurchaseServerInput } from '../../application/purchase-server.use-case';
import { PowerServer, RenewServer, ServerActionResult } from '../../application/server-power.use-cases';
import { PowerAction } from '../../domain/server-actions';
import { presentServer } from './server.presenter';
import { PurchaseServerBody, RebootServerBody, RebuildServerBody, RenewServerBody, ResizeServerBody, StopServerBody } from './server-actions.dto';
import { RebuildServer, ResizeServer } from '../../application/server-changes.use-cases';
import { DryRunPriceResponse } from '../../../prepaid/interface/http/prepaid.openapi';
import { ServerActionResponse } from './servers.openapi';

/** Stored for replay (servers.md: 2xx, 402, 404 and 409). */
const STORED_CODES: readonly ErrorCode[] = ['not_found', 'invalid_state', 'insufficient_balance', 'conflict', 'out_of_stock', 'quota_exceeded', 'quote_expired'];

const ACCEPTED_HEADERS = {
  ...RATE_LIMITED_RESPONSE_HEADERS,
  Location: { required: true, description: 'The operation to poll: /v1/operations/{op_id}', schema: { type: 'string', example: '/v1/operations/op_8fKq2LmX9vR4tW7yZ3bN5cHd' } },
};

const ACTION_ERRORS = [
  'invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'provider_unavailable',
] as const;

const BODY_VALIDATION = new RequestValidationPipe();

/**
 * stop and reboot accept no body, {} or the flag (servers.md "Precisions"): a request without a
 * body (none parsed and no content sent) is {}; any body sent is validated as the DTO says.
 */
async function optionalBody<T extends object>(req: Request, metatype: new () => T): Promise<T> {
  const sent = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (req.body === undefined && !sent) return new metatype();
  return (await BODY_VALIDATION.transform(req.body, { type: 'body', metatype })) as T;
}

/** POST /v1/servers (buying) and the server actions start, stop, reboot, renew (servers.md). */
@ApiTags('Servers')
@ApiAuthenticated()
@Controller('v1/servers')
export class ServerActionsController {
  constructor(
    private readonly purchaseServer: PurchaseServer,
    private readonly powerServer: PowerServer,
    private readonly renewServer: RenewServer,
    private readonly idempotent: IdempotentExecution,
    private readonly resizeServer: ResizeServer,
    private readonly rebuildServer: RebuildServer,
  ) {}

  /** 202 {server, operation} with Location; with an Idempotency-Key its 2xx, 402, 404 and 409 answers are stored and replayed. */
  private async accept(req: Request, res: Response, principal: Principal, work: () => Promise<ServerActionResult>, options: IdempotentOptions = {}): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        const { server, operation } = await work();
        return jsonResponse(202, { server: presentServer(server), operation: presentOperation(operation) }, { Location: `/v1/operations/${operation.id}` });
      },
      storableErrors(req, STORED_CODES),
      options,
    );
    sendOutcome(res, outcome);
  }

  @Post()
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'purchaseServer',
    summary: 'Buy a server for a prepaid term',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. In one transaction: the server (status `creating`, plan ' +
      'specs and price frozen, expires_at = now + term until it is ready), its vCPUs in the region, the hold of ' +
      "`price_per_month[currency] × term_months` (or the quote's amount with `quote_id`), and a vm.create operation to poll (steps " +
      'payment_reserved, creating_instance, booting, ready). The SSH keys named are copied into the operation (a key deleted meanwhile ' +
      'is still injected); `user_data` is kept only until the instance is created, never returned, logged or audited. Errors in this ' +
      'order: 400 (the member named in details.field: missing, wrong type, against its rule, a term not sold, a zone of another region, ' +
      'an `ssh_key_ids[i]` that is no key of the organization, a disk quote, a member differing from the quote, then a region or zone ' +
      'that does not exist, with details.valid), 409 idempotency_conflict, 404 (a region selling no servers, plan not sold there, image, quote), 503 purchases_paused ' +
      '(nothing reserved), 409 quote_expired, 409 invalid_state (quote used), 409 conflict (name taken, details.existing_id), 409 ' +
      'out_of_stock (zone not available, or fewer free vCPUs than the plan has), 409 quota_exceeded (25 servers not deleted, ' +
      'details.limit), 402 insufficient_balance, 503 provider_unavailable (the compute provider is down; nothing reserved).',
  })
  @ApiIdempotencyKey([202, 402, 404, 409])
  @ApiBody({
    type: PurchaseServerBody,
    examples: {
      minimal: { summary: 'A 1-vCPU server for a month, paid in USD', value: { name: 'web-2', region: 'id-jkt', plan: 'cx1', image: 'ubuntu-24.04', term_months: 1, currency: 'USD' } },
    },
  })
  @ApiAcceptedResponse({ description: 'Purchase accepted: the price is held; poll the operation', type: ServerActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(
    'invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'purchases_paused',
    'quote_expired', 'invalid_state', 'conflict', 'out_of_stock', 'quota_exceeded', 'insufficient_balance', 'provider_unavailable',
  )
  async purchase(@CurrentPrincipal() principal: Principal, @Body() body: PurchaseServerBody, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const input: PurchaseServerInput = {
      name: body.name,
      regionId: body.region,
      planId: body.plan,
      image: body.image,
      termMonths: body.term_months,
      currency: body.currency,
      zoneId: body.zone,
      sshKeyIds: body.ssh_key_ids,
      userData: body.user_data,
      labels: body.labels,
      deleteProtection: body.delete_protection,
      quoteId: body.quote_id,
      autoRenew: body.auto_renew,
    };
    // Every 400 first, before the Idempotency-Key is looked at (servers.md check order).
    const scope = idempotencyScope(req, principal.orgId);
    let checked: Checked;
    try {
      checked = await this.purchaseServer.checkBody(principal, input);
    } catch (bad) {
      if (!scope || !(bad instanceof DomainError) || bad.code !== 'invalid_request') throw bad;
      // A repeat of an accepted purchase still replays its answer (an SSH key it named may have been
      // deleted since); anything else, a key used for another body included, is the 400.
      const replay = await this.idempotent.run(scope, () => Promise.reject(bad), () => undefined).catch(() => undefined);
      if (!replay?.replayed) throw bad;
      sendOutcome(res, replay);
      return;
    }
    // The body as just checked (no second read of the offer, the SSH keys and the quote); its
    // effects are all in its transaction, and it writes (the server's row) before it may refuse
    // (402): only a success is stored optimistically.
    await this.accept(req, res, principal, () => this.purchaseServer.execute(principal, input, ip, checked), { optimistic: 'success' });
  }

  private power(principal: Principal, id: string, type: PowerAction, flag: boolean, ip: string | null, req: Request, res: Response): Promise<void> {
    return this.accept(req, res, principal, () => this.powerServer.execute(principal, { serverId: id, type, flag }, ip));
  }

  @Post(':id/start')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'startServer',
    summary: 'Power a stopped server on',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. No body. The server becomes `starting`; a vm.start ' +
      'operation (steps powering_on, booting) ends it `running` (failed: `stopped`). Errors in this order: 409 idempotency_conflict, ' +
      '404, 409 invalid_state (an unfinished operation: details.operation_id; then not stopped, or deleted), 503 provider_unavailable (nothing recorded).',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Start accepted; poll the operation', type: ServerActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(...ACTION_ERRORS)
  async start(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.power(principal, id, 'vm.start', false, ip, req, res);
  }

  @Post(':id/stop')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'stopServer',
    summary: 'Shut a running server down (ACPI), or with force cut its power',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. No body, {} or {force}. The server becomes `stopping`; ' +
      'a vm.stop operation (step shutting_down, or powering_off with force) ends it `stopped`. A guest that does not halt within ' +
      '120 s of the ACPI shutdown fails the operation with invalid_state ("stop with force") and the server stays `running`. Errors ' +
      'in this order: 400, 409 idempotency_conflict, 404, 409 invalid_state (an unfinished operation: details.operation_id; then not running), 503 provider_unavailable.',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiBody({ type: StopServerBody, required: false })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Stop accepted; poll the operation', type: ServerActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(...ACTION_ERRORS)
  async stop(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const body = await optionalBody(req, StopServerBody);
    await this.power(principal, id, 'vm.stop', body.force === true, ip, req, res);
  }

  @Post(':id/reboot')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'rebootServer',
    summary: 'Reboot a running server (ACPI), or with hard reset it',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. No body, {} or {hard}. The server becomes `rebooting`; ' +
      'a vm.reboot operation (step rebooting, or resetting with hard, then booting) ends it `running`. Errors in this order: 400, 409 ' +
      'idempotency_conflict, 404, 409 invalid_state (an unfinished operation: details.operation_id; then not running), 503 provider_unavailable.',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiBody({ type: RebootServerBody, required: false })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Reboot accepted; poll the operation', type: ServerActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(...ACTION_ERRORS)
  async reboot(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const body = await optionalBody(req, RebootServerBody);
    await this.power(principal, id, 'vm.reboot', body.hard === true, ip, req, res);
  }

  @Post(':id/renew')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'renewServer',
    summary: 'Renew a server by a term, at the price it was bought at, paid from the wallet',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. Reserves `price_per_month[currency] × term_months` ' +
      "(currency defaults to the server's billing currency) and answers 202 with the server and a vm.renew operation (step renewing); " +
      'its success extends expires_at from max(expires_at, now) and sets term and billing. No provider call, so never 503. Errors in ' +
      'this order: 400, 409 idempotency_conflict, 404, 409 invalid_state (an unfinished operation: details.operation_id; then not ' +
      'running or stopped; a seeded server), 402 insufficient_balance.',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiIdempotencyKey([202, 402, 404, 409])
  @ApiAcceptedResponse({ description: 'Renewal accepted: the price is reserved; poll the operation', type: ServerActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors('invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state', 'insufficient_balance')
  async renew(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: RenewServerBody, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.accept(req, res, principal, () => this.renewServer.execute(principal, { serverId: id, termMonths: body.term_months, currency: body.currency }, ip));
  }

  @Post(':id/resize')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'resizeServer',
    summary: "Change a stopped server's plan, priced for the rest of its term",
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. The server must be stopped. Charges (the new plan\'s ' +
      "current price − the server's frozen price) × r, r = (expires_at − now) / 30 days in seconds, in its billing currency, rounded " +
      'up, when positive (nothing is refunded): held now, captured when the vm.resize operation (steps payment_reserved, resizing) ' +
      "succeeds; the plan's current price then becomes the server's frozen price (later renewals charge it); expires_at does not move. " +
      'The vCPUs the plan adds are reserved at once; those it frees go back at success. dry_run: true answers 200 with the price and ' +
      'changes nothing. Errors in this order: 400, 409 idempotency_conflict, 404, 409 invalid_state (an unfinished operation: ' +
      'details.operation_id; then not stopped: "stop the server first"; suspended; a seeded server without a term), 400 plan (not sold ' +
      "in the region, the server's plan already, or a smaller boot disk), 409 out_of_stock, 402, 503 provider_unavailable.",
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiIdempotencyKey([202, 402, 404, 409])
  @ApiOkResponse({ description: 'dry_run: the price; nothing reserved', type: DryRunPriceResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiAcceptedResponse({ description: 'Plan change accepted: the price held, the vCPUs reserved; poll the operation', type: ServerActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(...ACTION_ERRORS, 'out_of_stock', 'insufficient_balance')
  async resize(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: ResizeServerBody, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    const input = { serverId: id, planId: body.plan };
    if (body.dry_run === true) {
      const amount = await this.resizeServer.quote(principal, input);
      sendOutcome(res, { response: jsonResponse(200, { amount: { currency: amount.currency, amount: amount.format() } }), replayed: false });
      return;
    }
    await this.accept(req, res, principal, () => this.resizeServer.execute(principal, input, ip));
  }

  @Post(':id/rebuild')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'rebuildServer',
    summary: "Reinstall a server's boot disk from an image (its data is lost)",
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. The server must be running or stopped. The boot disk ' +
      'is reinstalled from the image: EVERYTHING ON IT IS LOST. The id, address, attached disks, term and labels stay. The SSH keys ' +
      "named replace the server's (absent: its keys that still exist are injected again); user_data as at purchase, kept only until " +
      'the disk is reinstalled, never returned, logged or audited. A vm.rebuild operation (steps rebuilding, booting) ends it ' +
      '`running`. No charge. Errors in this order: 400, 409 idempotency_conflict, 404 (server), 409 invalid_state (an unfinished ' +
      'operation: details.operation_id; then not running or stopped), 404 (image), 503 provider_unavailable.',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Rebuild accepted; poll the operation', type: ServerActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(...ACTION_ERRORS)
  async rebuild(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: RebuildServerBody, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.accept(req, res, principal, () =>
      this.rebuildServer.execute(principal, { serverId: id, image: body.image, sshKeyIds: body.ssh_key_ids, userData: body.user_data }, ip),
    );
  }
}
