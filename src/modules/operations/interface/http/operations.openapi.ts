import { ApiProperty, ApiPropertyOptional, ApiSchema, HeadersObject } from '@nestjs/swagger';
import { ERROR_CODES } from '../../../../shared/http/openapi';
import { OPERATION_STATUSES, OPERATION_TYPES } from '../../domain/operation';

/** The Operation of interface.md 2.3, for the OpenAPI document (examples: a renewal of vol_demodata1 of seeds/demo.json). */

const STEP_STATUSES = ['pending', 'running', 'succeeded', 'failed'];

@ApiSchema({ name: 'OperationStep' })
export class OperationStepResponse {
  @ApiProperty({ description: 'renewing for volume.renew', example: 'renewing' })
  name: string;

  @ApiProperty({ enum: STEP_STATUSES, example: 'running' })
  status: string;
}

@ApiSchema({ name: 'OperationError', description: 'Why a failed operation failed; the reserved credit was released' })
export class OperationErrorResponse {
  @ApiProperty({ enum: ERROR_CODES, example: 'invalid_state' })
  code: string;

  @ApiProperty({ example: 'Volume vol_demodata1 was deleted before the renewal ran' })
  message: string;
}

@ApiSchema({ name: 'Operation', description: 'Progress and outcome of an action that takes time; poll it until succeeded or failed' })
export class OperationResponse {
  @ApiProperty({ example: 'op_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  id: string;

  @ApiProperty({ enum: OPERATION_TYPES, example: 'volume.renew' })
  type: string;

  @ApiProperty({ enum: OPERATION_STATUSES, example: 'pending' })
  status: string;

  @ApiProperty({ type: String, nullable: true, description: 'The server concerned (for a disk: the one it was attached to); null when none', example: 'vm_demoweb1' })
  vm_id: string | null;

  @ApiPropertyOptional({ description: 'Present on volume.* operations', example: 'vol_demodata1' })
  volume_id?: string;

  @ApiPropertyOptional({ description: 'Present on template.* operations', example: 'dep_4Hn7Qw2Er9Ty6Ui3Op1As5Df' })
  deployment_id?: string;

  @ApiProperty({ type: () => [OperationStepResponse], example: [{ name: 'renewing', status: 'running' }] })
  steps: OperationStepResponse[];

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'Outcome once succeeded. volume.renew: {volume_id, term_months, expires_at, charged: {currency, amount}}',
    example: null,
  })
  result: Record<string, unknown> | null;

  @ApiProperty({ type: () => OperationErrorResponse, nullable: true, description: 'Set when failed; null otherwise', example: null })
  error: OperationErrorResponse | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Null until the operation ends', example: null })
  finished_at: string | null;
}

@ApiSchema({ name: 'OperationList' })
export class OperationListResponse {
  @ApiProperty({ type: () => [OperationResponse], description: 'Newest first' })
  operations: OperationResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page', example: null })
  next_cursor: string | null;
}

/** The ETag of every Operation answer (GET /v1/operations/{id}, 200 and 304). */
export const ETAG_HEADER: HeadersObject = {
  ETag: {
    description: 'Strong validator of this representation of the operation; send it back as If-None-Match to get 304 while nothing changed',
    schema: { type: 'string', example: '"k3Jw9Qd0bX1uT7yZ2cV5nM8aLq4"' },
  },
};
