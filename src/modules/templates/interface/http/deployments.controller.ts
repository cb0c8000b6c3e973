import { Body, Controller, Delete, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Principal } from '../../../auth/domain/principal';
import { ANY_ROLE, WRITER_ROLES } from '../../../auth/domain/principal';
import { ClientIp, CurrentPrincipal, RequireAccess } from '../../../auth/interface/http/access.decorators';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { idempotencyScope, jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { presentOperation } from '../../../operations/interface/http/operation.presenter';
import { ApiAuthenticated, ApiErrors, ApiIdempotencyKey, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { ErrorCode } from '../../../../shared/kernel/errors/domain-error';
import { RequestValidationPipe } from '../../../../shared/http/validation.pipe';
import {
  CheckDeploymentHealth, DeployTemplate, DeploymentActionResult, RemoveDeployment, UpdateDeployment,
} from '../../application/deployment-actions.use-cases';
import { TemplateQueries } from '../../application/deployment-queries';
import { presentDeployment } from '../../domain/deployment';
import { presentTemplate } from '../../domain/template';
import { DeployTemplateBody, ListDeploymentsQuery, ListServerDeploymentsQuery, UpdateDeploymentBody, checkVariableShapes } from './deployments.dto';
import { DeploymentActionResponse, DeploymentListResponse, DeploymentResponse, TemplateListResponse } from './templates.openapi';

/** Validates the update's body in the handler: no body at all is accepted as `{}`. */
const BODY_VALIDATION = new RequestValidationPipe();

/** Stored for replay (servers.md: every new POST and DELETE stores its 2xx, 402, 404, 409 answers). */
const STORED: readonly ErrorCode[] = ['not_found', 'invalid_state', 'conflict', 'quota_exceeded'];

const ACCEPTED_HEADERS = {
  ...RATE_LIMITED_RESPONSE_HEADERS,
  Location: { required: true, description: 'The operation to poll: /v1/operations/{op_id}', schema: { type: 'string', example: '/v1/operations/op_8fKq2LmX9vR4tW7yZ3bN5cHd' } },
};

const ACTION_ERRORS = [
  'invalid_request', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'idempotency_conflict', 'not_found', 'invalid_state',
  'provider_unavailable',
] as const;

@ApiTags('Templates')
@ApiAuthenticated()
@Controller('v1')
export class DeploymentsController {
  constructor(
    private readonly queries: TemplateQueries,
    private readonly idempotent: IdempotentExecution,
    private readonly deploy: DeployTemplate,
    private readonly updateDeployment: UpdateDeployment,
    private readonly checkHealth: CheckDeploymentHealth,
    private readonly removeDeployment: RemoveDeployment,
  ) {}

  /** 202 {deployment, operation} with Location; with an Idempotency-Key its 2xx, 404 and 409 answers are stored and replayed. */
  private async accept(req: Request, res: Response, principal: Principal, work: () => Promise<DeploymentActionResult>): Promise<void> {
    const scope = idempotencyScope(req, principal.orgId);
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        const { deployment, operation } = await work();
        return jsonResponse(202, { deployment: presentDeployment(deployment), operation: presentOperation(operation) }, { Location: `/v1/operations/${operation.id}` });
      },
      storableErrors(req, STORED),
    );
    sendOutcome(res, outcome);
  }

  @Get('templates')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'listTemplates', summary: 'The templates (one-click applications) that can be deployed, by id', description: 'API key scope vm:read, or any member with a session. Unpaged.' })
  @ApiOkResponse({ type: TemplateListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited')
  async templates() {
    return { templates: (await this.queries.templates()).map(presentTemplate) };
  }

  @Post('servers/:id/deployments')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'deployTemplate',
    summary: 'Deploy a template on a running server (free of charge)',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. The deployment is `deploying` at once; a ' +
      'template.deploy operation (steps installing, configuring, starting_app) ends it `active` (or `failed`). Secret variables are ' +
      'stored encrypted and read back as "[redacted]". Errors in this order: 400 (the member named in details.field: version not ' +
      'offered, unknown variable, a required one missing or empty, a secret equal to "[redacted]"), 409 idempotency_conflict, 404 ' +
      '(server, template), 409 invalid_state (an unfinished operation of the server: details.operation_id; the server not running), ' +
      '409 conflict (the template is on the server: details.existing_id), 409 quota_exceeded (10 deployments not removed per server: ' +
      'details.limit), 503 provider_unavailable (nothing recorded).',
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiBody({ type: DeployTemplateBody })
  @ApiAcceptedResponse({ description: 'Deployment accepted; poll the operation', type: DeploymentActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(...ACTION_ERRORS, 'conflict', 'quota_exceeded')
  async create(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: DeployTemplateBody,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    checkVariableShapes(body.variables, false);
    await this.accept(req, res, principal, () => this.deploy.execute(principal, { serverId: id, template: body.template, version: body.version, variables: body.variables }, ip));
  }

  @Get('deployments')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'listDeployments',
    summary: "The organization's deployments, newest first",
    description: 'API key scope vm:read, or any member with a session. Cursor pagination (50 a page unless `limit` says otherwise). Without `status` every deployment but removed ones.',
  })
  @ApiOkResponse({ type: DeploymentListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'rate_limited')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListDeploymentsQuery) {
    const page = await this.queries.list(principal, { limit: query.limit, cursor: query.cursor, serverId: query.server_id, status: query.status });
    return { deployments: page.deployments.map(presentDeployment), next_cursor: page.nextCursor };
  }

  @Get('servers/:id/deployments')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({
    operationId: 'listServerDeployments',
    summary: "One server's deployments, newest first",
    description:
      'API key scope vm:read, or any member with a session. The same pages as GET /v1/deployments?server_id={id} (50 a page ' +
      'unless `limit` says otherwise; without `status` every deployment but removed ones); a server that is not the ' +
      "organization's: 404 (a deleted server's deployments are listed).",
  })
  @ApiParam({ name: 'id', description: 'Server id', example: 'vm_demoweb1' })
  @ApiOkResponse({ type: DeploymentListResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async listOfServer(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: ListServerDeploymentsQuery) {
    const page = await this.queries.listOfServer(principal, id, { limit: query.limit, cursor: query.cursor, status: query.status });
    return { deployments: page.deployments.map(presentDeployment), next_cursor: page.nextCursor };
  }

  @Get('deployments/:id')
  @RequireAccess({ scope: 'vm:read', roles: ANY_ROLE })
  @ApiOperation({ operationId: 'getDeployment', summary: 'One deployment (removed ones too)', description: 'API key scope vm:read, or any member with a session.' })
  @ApiParam({ name: 'id', description: 'Deployment id', example: 'dep_4kQ9sLmX2vR7tW1yZ8bN3cHd' })
  @ApiOkResponse({ type: DeploymentResponse, headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return presentDeployment(await this.queries.deployment(principal, id));
  }

  @Post('deployments/:id/update')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'updateDeployment',
    summary: "Change a deployment's version or variables, or re-apply it (a retry)",
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. From active or failed; the deployment is `updating` ' +
      'and its health `unknown` at once; a template.update operation (stopping_app, installing, configuring, starting_app) ends it ' +
      '`active` with the new version and variables, or `failed` with the old ones. `variables` merge: a member replaces, null unsets ' +
      'an optional one, absent keeps (secrets need not be resent). An empty body re-applies everything. Errors in this order: 400, ' +
      '409 idempotency_conflict, 404, 400 (version not offered, unknown variable, a required one unset or empty, a secret equal to ' +
      '"[redacted]"), 409 invalid_state (an unfinished operation of the server: details.operation_id; the server not running; the ' +
      'deployment not active or failed), 503 provider_unavailable.',
  })
  @ApiParam({ name: 'id', description: 'Deployment id', example: 'dep_4kQ9sLmX2vR7tW1yZ8bN3cHd' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiBody({ type: UpdateDeploymentBody, required: false })
  @ApiAcceptedResponse({ description: 'Update accepted; poll the operation', type: DeploymentActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(...ACTION_ERRORS)
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    // No body at all is the empty body (a retry), as `{}`.
    const raw: unknown = req.body === undefined || (typeof req.body === 'object' && req.body !== null && !Array.isArray(req.body) && Object.keys(req.body).length === 0 && !req.is('json')) ? {} : req.body;
    const body = (await BODY_VALIDATION.transform(raw, { type: 'body', metatype: UpdateDeploymentBody })) as UpdateDeploymentBody;
    checkVariableShapes(body.variables, true);
    await this.accept(req, res, principal, () => this.updateDeployment.execute(principal, { deploymentId: id, version: body.version, variables: body.variables }, ip));
  }

  @Post('deployments/:id/health')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'checkDeploymentHealth',
    summary: "Check an active deployment's health",
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. A template.health operation (step checking) sets ' +
      '`health` and `health_checked_at`. Not audited. Errors in this order: 409 idempotency_conflict, 404, 409 invalid_state (an ' +
      'unfinished operation of the server: details.operation_id; the server not running; the deployment not active), 503.',
  })
  @ApiParam({ name: 'id', description: 'Deployment id', example: 'dep_4kQ9sLmX2vR7tW1yZ8bN3cHd' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Check accepted; poll the operation', type: DeploymentActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(...ACTION_ERRORS)
  async health(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.accept(req, res, principal, () => this.checkHealth.execute(principal, { deploymentId: id }, ip));
  }

  @Delete('deployments/:id')
  @RequireAccess({ scope: 'vm:write', roles: WRITER_ROLES })
  @ApiOperation({
    operationId: 'removeDeployment',
    summary: 'Remove a deployment from its server',
    description:
      'API key scope vm:write, or a developer, admin or owner with a session. From active or failed; `removing` at once; a ' +
      'template.remove operation (stopping_app, uninstalling) ends it `removed` (still readable), or back to its former status. ' +
      'Errors in this order: 409 idempotency_conflict, 404, 409 invalid_state (an unfinished operation of the server: ' +
      'details.operation_id; the server not running; the deployment not active or failed), 503.',
  })
  @ApiParam({ name: 'id', description: 'Deployment id', example: 'dep_4kQ9sLmX2vR7tW1yZ8bN3cHd' })
  @ApiIdempotencyKey([202, 404, 409])
  @ApiAcceptedResponse({ description: 'Removal accepted; poll the operation', type: DeploymentActionResponse, headers: ACCEPTED_HEADERS })
  @ApiErrors(...ACTION_ERRORS)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @ClientIp() ip: string | null, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.accept(req, res, principal, () => this.removeDeployment.execute(principal, { deploymentId: id }, ip));
  }
}
