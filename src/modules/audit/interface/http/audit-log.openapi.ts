import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { nullableRef } from '../../../../shared/http/openapi';
import { IsOptional, IsString } from 'class-validator';

/** GET /v1/audit-log: query and response schemas for the OpenAPI document. */

export class AuditLogQueryDto {
  @ApiPropertyOptional({ description: 'Exact action (api_key.create), or a prefix ending in .* (volume.*)', example: 'member.*' })
  @IsOptional() @IsString({ message: 'action must be a string' }) action?: string;

  @ApiPropertyOptional({ description: 'Only entries of this actor (user or API key id)', example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  @IsOptional() @IsString({ message: 'actor_id must be a string' }) actor_id?: string;

  @ApiPropertyOptional({ description: 'Only entries about this target (volume, API key, user, session id …)', example: 'key_9dLx2QmV7cPa4TzR8wKy3nHb' })
  @IsOptional() @IsString({ message: 'target_id must be a string' }) target_id?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Entries created at or after this instant (ISO 8601)', example: '2026-11-01T00:00:00Z' })
  @IsOptional() @IsString({ message: 'since must be an ISO 8601 timestamp' }) since?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Entries created before this instant (ISO 8601)', example: '2026-12-01T00:00:00Z' })
  @IsOptional() @IsString({ message: 'until must be an ISO 8601 timestamp' }) until?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 50, description: 'Page size', example: 50 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
}

@ApiSchema({
  name: 'AuditActor',
  description:
    "Who did it: a user (with the email), an API key (with the name), the service itself (system: operator CLI), or the service's staff (staff: only the role, never who; data.justification says why)",
})
export class AuditActorResponse {
  @ApiProperty({ enum: ['user', 'api_key', 'system', 'staff'], example: 'user' })
  type: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'User or API key id; null for system; absent for staff', example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, enum: ['support', 'billing', 'operator', 'superadmin'], description: 'Staff only: the role of the staff member who acted', example: 'support' })
  role?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Users only: the email', example: 'owner@demo.test' })
  email?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'API keys: the key name; system: null', example: null })
  name?: string | null;
}

@ApiSchema({ name: 'AuditTarget', description: 'What the action was about' })
export class AuditTargetResponse {
  @ApiProperty({ description: 'session, api_key, user, volume, zone, region …', example: 'api_key' })
  type: string;

  @ApiProperty({ example: 'key_9dLx2QmV7cPa4TzR8wKy3nHb' })
  id: string;
}

@ApiExtraModels(AuditTargetResponse)
@ApiSchema({ name: 'AuditEntry', description: 'One entry of the audit log; entries are append-only and kept forever' })
export class AuditEntryResponse {
  @ApiProperty({ example: 'aud_3f9c1e0b7a2d4c6e8f0a1b2c3d4e5f60' })
  id: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({
    description:
      'auth.signup, auth.login, auth.logout, api_key.create, api_key.revoke, member.add, member.role_change, member.remove, volume.renew, wallet.credit …',
    example: 'api_key.create',
  })
  action: string;

  @ApiProperty({ type: () => AuditActorResponse })
  actor: AuditActorResponse;

  @ApiProperty({ ...nullableRef(AuditTargetResponse), description: 'What the action was about; null when about nothing in particular' })
  target: AuditTargetResponse | null;

  @ApiProperty({ type: String, nullable: true, description: "The client's IP address; null for system actions", example: '203.0.113.7' })
  ip: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "The service's own id of the request, unique per request (whatever X-Request-Id the client sent); null for system actions",
    example: 'req_7Hq2mXc9LpV4sKd1Rt8Ebw3N',
  })
  request_id: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "The client's X-Request-Id of the request (the one the response echoed), when it sent a valid one; otherwise null",
    example: 'deploy-2026-11-21-0042',
  })
  client_request_id: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Details of the action; never a token, password or secret', example: { name: 'ci', scopes: ['vm:read'] } })
  data: Record<string, unknown>;
}

@ApiSchema({ name: 'AuditLogPage' })
export class AuditLogPageResponse {
  @ApiProperty({ type: () => [AuditEntryResponse], description: 'Newest first' })
  entries: AuditEntryResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page', example: null })
  next_cursor: string | null;
}
