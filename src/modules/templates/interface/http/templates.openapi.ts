import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { OperationResponse } from '../../../operations/interface/http/operations.openapi';
import { DEPLOYMENT_STATUSES } from '../../domain/deployment';

/** Response bodies of the templates and deployments routes, for the OpenAPI document (examples: seeds/demo.json). */

@ApiSchema({ name: 'TemplateVariable' })
export class TemplateVariableResponse {
  @ApiProperty({ description: '1 to 64 of A-Z a-z 0-9 _, not beginning with a digit', example: 'admin_email' })
  name: string;

  @ApiProperty({ example: 'The administrator account e-mail address' })
  description: string;

  @ApiProperty({ description: 'A deployment must set it (not empty)', example: true })
  required: boolean;

  @ApiProperty({ description: 'Stored encrypted, shown as "[redacted]", never returned', example: false })
  secret: boolean;
}

@ApiSchema({ name: 'Template', description: 'A one-click application that can be deployed on a server' })
export class TemplateResponse {
  @ApiProperty({ example: 'wordpress' })
  id: string;

  @ApiProperty({ example: 'WordPress' })
  name: string;

  @ApiProperty({ type: [String], description: 'Oldest first; the last is the default', example: ['6.5', '6.6'] })
  versions: string[];

  @ApiProperty({ type: () => [TemplateVariableResponse] })
  variables: TemplateVariableResponse[];
}

@ApiSchema({ name: 'TemplateList' })
export class TemplateListResponse {
  @ApiProperty({ type: () => [TemplateResponse], description: 'By id' })
  templates: TemplateResponse[];
}

@ApiSchema({ name: 'Deployment', description: 'A template deployed on a server' })
export class DeploymentResponse {
  @ApiProperty({ example: 'dep_4kQ9sLmX2vR7tW1yZ8bN3cHd' })
  id: string;

  @ApiProperty({ example: 'vm_demoweb1' })
  server_id: string;

  @ApiProperty({ example: 'wordpress' })
  template: string;

  @ApiProperty({ example: '6.6' })
  version: string;

  @ApiProperty({ enum: DEPLOYMENT_STATUSES, example: 'active' })
  status: string;

  @ApiProperty({ enum: ['unknown', 'healthy', 'unhealthy'], example: 'unknown' })
  health: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Null until a health check succeeded', example: null })
  health_checked_at: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'The values set (unset ones absent); a secret one reads "[redacted]"',
    example: { admin_email: 'ops@example.com', admin_password: '[redacted]' },
  })
  variables: Record<string, string>;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;
}

@ApiSchema({ name: 'DeploymentList' })
export class DeploymentListResponse {
  @ApiProperty({ type: () => [DeploymentResponse], description: 'Newest first' })
  deployments: DeploymentResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page', example: null })
  next_cursor: string | null;
}

@ApiSchema({ name: 'DeploymentAction' })
export class DeploymentActionResponse {
  @ApiProperty({ type: () => DeploymentResponse })
  deployment: DeploymentResponse;

  @ApiProperty({ type: () => OperationResponse })
  operation: OperationResponse;
}
