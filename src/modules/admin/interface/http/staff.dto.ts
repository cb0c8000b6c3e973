import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsISO8601, IsOptional, IsString, Length } from 'class-validator';
import { STAFF_ROLES, StaffRole } from '../../domain/staff';

export class CreateStaffDto {
  @ApiProperty({ example: 'ana@support.example' })
  @Length(3, 254, { message: 'email must be an email address' })
  @IsString({ message: 'email must be a string' })
  @IsDefined({ message: 'email is required' })
  email: string;

  @ApiProperty({ example: 'Ana' })
  @Length(1, 200, { message: 'name must be 1 to 200 characters' })
  @IsString({ message: 'name must be a string' })
  @IsDefined({ message: 'name is required' })
  name: string;

  @ApiProperty({ enum: STAFF_ROLES, example: 'support' })
  @IsIn(STAFF_ROLES, { message: `role must be one of ${STAFF_ROLES.join(', ')}` })
  @IsDefined({ message: 'role is required' })
  role: StaffRole;

  @ApiPropertyOptional({ type: String, format: 'date-time', description: 'When the first token stops working: at most 90 days away (default 90 days)' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'expires_at must be an ISO 8601 timestamp such as 2027-01-01T00:00:00Z' })
  expires_at?: string;
}

export class UpdateStaffDto {
  @ApiProperty({ enum: STAFF_ROLES, example: 'billing' })
  @IsIn(STAFF_ROLES, { message: `role must be one of ${STAFF_ROLES.join(', ')}` })
  @IsDefined({ message: 'role is required' })
  role: StaffRole;
}

export class CreateStaffTokenDto {
  @ApiPropertyOptional({ type: String, format: 'date-time', description: 'When the token stops working: at most 90 days away (default 90 days)' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'expires_at must be an ISO 8601 timestamp such as 2027-01-01T00:00:00Z' })
  expires_at?: string;
}

export class StaffAuditQuery {
  @ApiPropertyOptional() @IsOptional() @IsString({ message: 'staff_id must be a string' }) staff_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString({ message: 'organization_id must be a string' }) organization_id?: string;
  @ApiPropertyOptional({ format: 'date-time' }) @IsOptional() @IsString({ message: 'since must be an ISO 8601 timestamp' }) since?: string;
  @ApiPropertyOptional({ format: 'date-time' }) @IsOptional() @IsString({ message: 'until must be an ISO 8601 timestamp' }) until?: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 50 }) @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;
  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' }) @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
}
