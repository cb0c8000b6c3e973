import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ArrayMinSize, IsArray, IsDefined, IsIn, IsISO8601, IsOptional, IsString, Length } from 'class-validator';
import { ROLES, Role, SCOPES, Scope } from '../../domain/principal';

/** Request and response schemas of /v1/api-keys and /v1/members (lifecycle.md "Accounts"). */

export class CreateApiKeyDto {
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'ci' })
  @Length(1, 100, { message: 'name must be 1 to 100 characters' })
  @IsString({ message: 'name must be a string' })
  @IsDefined({ message: 'name is required' })
  name: string;

  @ApiProperty({ type: [String], enum: SCOPES, minItems: 1, description: 'What the key may do. A write scope includes its read scope (vm:write includes vm:read, billing:write includes billing:read); nothing else implies anything. vm:read reads volumes, operations, the wallet, regions and options; vm:write buys, renews, attaches, detaches, edits and deletes disks; audit:read reads GET /v1/audit-log; billing:* and webhooks:write open the billing and webhook routes. The key lists what was granted, not what it implies.', example: ['vm:read', 'vm:write'] })
  @IsIn(SCOPES, { each: true, message: `scopes must hold only ${SCOPES.join(', ')}` })
  @ArrayMinSize(1, { message: `scopes must list at least one of ${SCOPES.join(', ')}` })
  @IsArray({ message: 'scopes must be an array of scopes' })
  @IsDefined({ message: 'scopes is required' })
  scopes: Scope[];

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'When the key stops working (ISO 8601, in the future); none by default', example: '2027-01-01T00:00:00Z' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'expires_at must be an ISO 8601 timestamp such as 2027-01-01T00:00:00Z' })
  @IsString({ message: 'expires_at must be an ISO 8601 timestamp such as 2027-01-01T00:00:00Z' })
  expires_at?: string | null;
}

export class ListApiKeysQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
}

@ApiSchema({ name: 'ApiKey', description: 'An API key; the token itself is shown only once, when the key is created' })
export class ApiKeyResponse {
  @ApiProperty({ example: 'key_9dLx2QmV7cPa4TzR8wKy3nHb' })
  id: string;

  @ApiProperty({ example: 'ci' })
  name: string;

  @ApiProperty({ type: [String], enum: SCOPES, description: 'The scopes granted (a write scope also allows what its read scope allows)', example: ['vm:read', 'vm:write'] })
  scopes: Scope[];

  @ApiProperty({ type: String, nullable: true, description: 'The first 13 characters of the token ("cds_live_" + 4), to recognise it; null for keys made before this field existed', example: 'cds_live_Q3vT' })
  token_prefix: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ type: String, nullable: true, description: 'The user who created it; null when made by the operator CLI or a seed', example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  created_by: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  expires_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Last authenticated request, to the minute (written at most once a minute)', example: null })
  last_used_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  revoked_at: string | null;
}

@ApiSchema({ name: 'ApiKeyCreated' })
export class ApiKeyCreatedResponse {
  @ApiProperty({ type: () => ApiKeyResponse })
  api_key: ApiKeyResponse;

  @ApiProperty({ description: 'The API key token (cds_live_…): shown once, store it now', example: 'cds_live_Q3vT9kLm2XpR8sWd4ZbN6yHc1JfGa7UeXw0Bn5Ds' })
  token: string;
}

@ApiSchema({ name: 'ApiKeyList' })
export class ApiKeyListResponse {
  @ApiProperty({ type: () => [ApiKeyResponse], description: 'Newest first, revoked and expired keys included' })
  api_keys: ApiKeyResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page', example: null })
  next_cursor: string | null;
}

export class ChangeRoleDto {
  @ApiProperty({ enum: ROLES, example: 'admin' })
  @IsIn(ROLES, { message: `role must be one of ${ROLES.join(', ')}` })
  @IsDefined({ message: 'role is required' })
  role: Role;
}

@ApiSchema({ name: 'Member', description: "A member of the organization and its role" })
export class MemberResponse {
  @ApiProperty({ example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  user_id: string;

  @ApiProperty({ example: 'owner@demo.test' })
  email: string;

  @ApiProperty({ enum: ROLES, example: 'owner' })
  role: Role;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  joined_at: string;
}

@ApiSchema({ name: 'MemberList' })
export class MemberListResponse {
  @ApiProperty({ type: () => [MemberResponse], description: 'Oldest member first' })
  members: MemberResponse[];
}
