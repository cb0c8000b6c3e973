import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsDefined, IsIn, IsNotEmpty, IsObject, IsOptional, IsString, ValidateIf } from 'class-validator';
import { invalidRequest } from '../../../../shared/kernel/errors/domain-error';
import { DEPLOYMENT_STATUSES, DeploymentStatus } from '../../domain/deployment';
import { MAX_VARIABLE_LENGTH } from '../../domain/template';

const VARIABLES_DESCRIPTION = `Strings of 0 to ${MAX_VARIABLE_LENGTH} characters by variable name (GET /v1/templates lists them)`;
const single = (name: string) => `${name} must be given once, as a string`;

/** Body of POST /v1/servers/{id}/deployments. */
export class DeployTemplateBody {
  @ApiProperty({ description: 'A template id (GET /v1/templates)', example: 'wordpress' })
  @IsNotEmpty({ message: 'template must not be empty' })
  @IsString({ message: 'template must be a string' })
  @IsDefined({ message: 'template is required' })
  template: string;

  @ApiPropertyOptional({ description: "One of the template's versions; default the last", example: '6.6' })
  @IsString({ message: 'version must be a string' })
  @ValidateIf((b: DeployTemplateBody) => b.version !== undefined)
  version?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: MAX_VARIABLE_LENGTH },
    description: `${VARIABLES_DESCRIPTION}. A secret one may not be "[redacted]"`,
    example: { admin_email: 'ops@example.com', admin_password: 'correct horse battery staple' },
  })
  @IsObject({ message: 'variables must be an object of string values' })
  @ValidateIf((b: DeployTemplateBody) => b.variables !== undefined)
  @Transform(({ obj }: { obj: { variables?: unknown } }) => obj.variables)
  variables?: Record<string, unknown>;
}

/** Body of POST /v1/deployments/{id}/update (empty: re-apply everything, a retry). */
export class UpdateDeploymentBody {
  @ApiPropertyOptional({ description: "One of the template's versions; default the current one", example: '6.6' })
  @IsString({ message: 'version must be a string' })
  @ValidateIf((b: UpdateDeploymentBody) => b.version !== undefined)
  version?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', nullable: true, maxLength: MAX_VARIABLE_LENGTH },
    description: `Merged into the current ones: a member replaces, null unsets an optional one, absent keeps (secrets need not be resent). ${VARIABLES_DESCRIPTION}`,
    example: { admin_email: 'web@example.com' },
  })
  @IsObject({ message: 'variables must be an object of string values' })
  @ValidateIf((b: UpdateDeploymentBody) => b.variables !== undefined)
  @Transform(({ obj }: { obj: { variables?: unknown } }) => obj.variables)
  variables?: Record<string, unknown>;
}

/** Query of GET /v1/deployments. */
export class ListDeploymentsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 50, description: 'Page size', example: 50 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;

  @ApiPropertyOptional({ description: 'Only the deployments of this server', example: 'vm_demoweb1' })
  @IsOptional() @IsNotEmpty({ message: 'server_id must not be empty' }) @IsString({ message: single('server_id') }) server_id?: string;

  @ApiPropertyOptional({ enum: DEPLOYMENT_STATUSES, description: 'Only deployments in this status; without it every status but removed' })
  @IsOptional()
  @IsIn(DEPLOYMENT_STATUSES, { message: `status must be one of ${DEPLOYMENT_STATUSES.join(', ')}` })
  @IsString({ message: single('status') })
  status?: DeploymentStatus;
}

/** GET /v1/servers/{id}/deployments: the list's query without server_id (the path names the server). */
export class ListServerDeploymentsQuery extends OmitType(ListDeploymentsQuery, ['server_id'] as const) {}

/**
 * The shape of `variables` (400 naming `variables.<name>`), before the Idempotency-Key is
 * looked at: every value a string of at most 4096 characters (or null, on update).
 */
export function checkVariableShapes(variables: Record<string, unknown> | undefined, allowNull: boolean): void {
  if (variables === undefined) return;
  if (Object.keys(variables).length > 256) throw invalidRequest('variables must hold at most 256 members', { field: 'variables' });
  for (const [name, value] of Object.entries(variables)) {
    if (value === null && allowNull) continue;
    if (typeof value !== 'string' || value.length > MAX_VARIABLE_LENGTH) {
      throw invalidRequest(`variables.${name} must be a string of 0 to ${MAX_VARIABLE_LENGTH} characters${allowNull ? ', or null' : ''}`, {
        field: `variables.${name}`,
      });
    }
  }
}
