import { Controller, Get, Header, HttpCode, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiResponse, ApiSchema, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Response } from 'express';
import { ApiErrors, ApiHeadersOnEveryResponse, REQUEST_ID_HEADER } from '../../../../shared/http/openapi';

const NO_STORE = { 'Cache-Control': { required: true, description: 'Probes are never cached', schema: { type: 'string', enum: ['no-store'] } } };
import { Public } from '../../../auth/interface/http/access.decorators';
import { CheckReadiness } from '../../application/check-readiness.use-case';

@ApiSchema({ name: 'Health' })
export class HealthResponse {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status: 'ok';
}

@ApiSchema({ name: 'ReadinessChecks' })
export class ReadinessChecksResponse {
  @ApiProperty({ enum: ['ok', 'error'], description: 'The database answers SELECT 1', example: 'ok' })
  database: 'ok' | 'error';

  @ApiProperty({ enum: ['ok', 'pending', 'error'], description: 'Every migration of this build is applied', example: 'ok' })
  migrations: 'ok' | 'pending' | 'error';

  @ApiProperty({
    enum: ['ok', 'degraded', 'not_configured'],
    description:
      'ok: rate limits are counted in Redis (REDIS_URL). degraded: Redis is unreachable or does not answer; requests are ' +
      'still served, rate limited in each process\'s memory, so readiness stays 200. not_configured: no REDIS_URL',
    example: 'not_configured',
  })
  redis: 'ok' | 'degraded' | 'not_configured';

  @ApiProperty({
    enum: ['ok', 'down'],
    description:
      'down: the storage provider failed 5 calls in a row in this process (circuit open) and has not answered since; new purchases, ' +
      'attaches, detaches and deletes answer 503 provider_unavailable meanwhile, everything else is served, so readiness stays 200',
    example: 'ok',
  })
  provider: 'ok' | 'down';

  @ApiProperty({
    enum: ['ok', 'down'],
    description:
      'down: the compute provider failed 5 calls in a row in this process (circuit open) and has not answered since; new server ' +
      'purchases, power actions, deletes and consoles answer 503 provider_unavailable meanwhile, everything else is served, so readiness stays 200',
    example: 'ok',
  })
  compute_provider: 'ok' | 'down';
}

@ApiSchema({ name: 'Readiness' })
export class ReadinessResponse {
  @ApiProperty({ enum: ['ready', 'not_ready'], example: 'ready' })
  status: 'ready' | 'not_ready';

  @ApiProperty({ type: () => ReadinessChecksResponse })
  checks: ReadinessChecksResponse;
}

/** Probes for load balancers and orchestrators: public, never rate limited, never cached. */
@ApiTags('Health')
@ApiErrors()
@Controller('v1')
@Public()
@SkipThrottle()
export class HealthController {
  constructor(private readonly checkReadiness: CheckReadiness) {}

  @Get('health')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiHeadersOnEveryResponse(NO_STORE)
  @ApiOperation({ operationId: 'getHealth', summary: 'Liveness: the process is up', description: 'No authentication, not rate limited. Checks nothing else.' })
  @ApiOkResponse({ description: 'The process is up', type: HealthResponse, headers: REQUEST_ID_HEADER })
  health(): HealthResponse {
    return { status: 'ok' };
  }

  @Get('ready')
  @Header('Cache-Control', 'no-store')
  @ApiHeadersOnEveryResponse(NO_STORE)
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Readiness: the database answers and its migrations are applied; Redis and the providers are reported (they do not fail readiness)',
    description:
      'No authentication, not rate limited. 200 when ready, 503 when not, with the same body in both cases ' +
      '(a probe report, not an error envelope) so that a probe reads the status and a person reads which check failed.',
  })
  @ApiOkResponse({ description: 'Ready', type: ReadinessResponse, headers: REQUEST_ID_HEADER })
  @ApiResponse({
    status: 503,
    description: 'Not ready: at least one check failed',
    type: ReadinessResponse,
    headers: REQUEST_ID_HEADER,
    example: { status: 'not_ready', checks: { database: 'error', migrations: 'error', redis: 'not_configured', provider: 'ok', compute_provider: 'ok' } },
  })
  async ready(@Res({ passthrough: true }) res: Response): Promise<ReadinessResponse> {
    const readiness = await this.checkReadiness.execute();
    res.status(readiness.ready ? 200 : 503);
    return { status: readiness.ready ? 'ready' : 'not_ready', checks: readiness.checks };
  }
}
