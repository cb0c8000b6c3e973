import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsDefined, IsEmail, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { INVITATION_STATUSES, InvitationStatus } from '../../domain/invitation';
import { ROLES, Role } from '../../domain/principal';

/** Request and response schemas of /v1/organizations and /v1/invitations (accounts.md). */

export class OrganizationNameDto {
  @ApiProperty({ minLength: 1, maxLength: 100, description: '1 to 100 characters, not blank, no control character', example: 'Platform team' })
  @MaxLength(400, { message: 'name must be 1 to 100 characters' })
  @IsString({ message: 'name must be a string' })
  @IsDefined({ message: 'name is required' })
  name: string;
}

@ApiSchema({ name: 'Organization', description: "An organization the caller belongs to, with the caller's role" })
export class OrganizationResponse {
  @ApiProperty({ example: 'org_7QwE3rT9yU2iO5pA8sD1fG4h' })
  id: string;

  @ApiProperty({ example: 'Platform team' })
  name: string;

  @ApiProperty({ enum: ROLES, example: 'owner' })
  role: Role;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;
}

@ApiSchema({ name: 'OrganizationResult' })
export class OrganizationResultResponse {
  @ApiProperty({ type: () => OrganizationResponse })
  organization: OrganizationResponse;
}

@ApiSchema({ name: 'OrganizationList' })
export class OrganizationListResponse {
  @ApiProperty({ type: () => [OrganizationResponse], description: 'Oldest membership first; the first is used when X-Org-ID is not sent' })
  organizations: OrganizationResponse[];
}

export class InviteDto {
  @ApiProperty({ format: 'email', maxLength: 254, description: 'Who is invited; they need not have an account yet', example: 'dev@demo.test' })
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254, { message: 'email must be at most 254 characters' })
  @IsString({ message: 'email must be a string' })
  @IsDefined({ message: 'email is required' })
  email: string;

  @ApiProperty({ enum: ROLES, example: 'developer' })
  @IsIn(ROLES, { message: `role must be one of ${ROLES.join(', ')}` })
  @IsDefined({ message: 'role is required' })
  role: Role;
}

export class AcceptInvitationDto {
  @ApiProperty({ maxLength: 200, description: 'The invitation token (cds_inv_…) the inviter handed over', example: 'cds_inv_Q3vT9kLm2XpR8sWd4ZbN6yHc1JfGa7Ue' })
  @MaxLength(200, { message: 'token must be at most 200 characters' })
  @IsString({ message: 'token must be a string' })
  @IsDefined({ message: 'token is required' })
  token: string;
}

export class ListInvitationsQuery {
  @ApiPropertyOptional({ enum: INVITATION_STATUSES, description: 'Only invitations in this status' })
  @IsOptional() @IsString({ message: `status must be one of ${INVITATION_STATUSES.join(', ')}` }) status?: InvitationStatus;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
}

@ApiSchema({ name: 'Invitation', description: 'An invitation to join the organization; its token is shown only once, when it is created' })
export class InvitationResponse {
  @ApiProperty({ example: 'inv_4kTz9QmV7cPa2LxR8wKy3nHb' })
  id: string;

  @ApiProperty({ description: 'Lower-cased', example: 'dev@demo.test' })
  email: string;

  @ApiProperty({ enum: ROLES, example: 'developer' })
  role: Role;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ type: String, nullable: true, description: 'The user who invited', example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  created_by: string | null;

  @ApiProperty({ format: 'date-time', description: 'created_at + 7 days', example: '2026-11-28T10:00:00.000Z' })
  expires_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  accepted_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  revoked_at: string | null;
}

@ApiSchema({ name: 'InvitationCreated' })
export class InvitationCreatedResponse {
  @ApiProperty({ type: () => InvitationResponse })
  invitation: InvitationResponse;

  @ApiProperty({ description: 'The invitation token (cds_inv_…): shown once; hand it to the invitee, who accepts it signed in (or signs up with it)', example: 'cds_inv_Q3vT9kLm2XpR8sWd4ZbN6yHc1JfGa7Ue' })
  token: string;
}

@ApiSchema({ name: 'InvitationList' })
export class InvitationListResponse {
  @ApiProperty({ type: () => [InvitationResponse], description: 'Newest first' })
  invitations: InvitationResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page', example: null })
  next_cursor: string | null;
}

@ApiSchema({ name: 'JoinedOrganization', description: 'The organization joined, with the role the invitation gave' })
export class JoinedOrganizationResponse {
  @ApiProperty({ example: 'org_demo' })
  id: string;

  @ApiProperty({ example: 'Demo Org' })
  name: string;

  @ApiProperty({ enum: ROLES, example: 'developer' })
  role: Role;
}

@ApiSchema({ name: 'InvitationAccepted' })
export class InvitationAcceptedResponse {
  @ApiProperty({ type: () => JoinedOrganizationResponse })
  organization: JoinedOrganizationResponse;
}
