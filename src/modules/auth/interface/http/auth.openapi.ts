import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ROLES, Role } from '../../domain/principal';

/** Response bodies of the auth routes, for the OpenAPI document (examples: seeds/demo.json). */

@ApiSchema({ name: 'User' })
export class UserResponse {
  @ApiProperty({ example: 'usr_5mQe8RZk2VtL9xPa3HcW7nJd' })
  id: string;

  @ApiProperty({ example: 'owner@demo.test' })
  email: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;
}

@ApiSchema({ name: 'NewOrganization', description: 'The organization created with the account (the user owns it), or the one an invitation_token joined (with the invited role)' })
export class NewOrganizationResponse {
  @ApiProperty({ example: 'org_demo' })
  id: string;

  @ApiProperty({ example: 'Demo Org' })
  name: string;

  @ApiProperty({ enum: ROLES, example: 'owner' })
  role: Role;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;
}

@ApiSchema({ name: 'Membership', description: "An organization the user belongs to, with the user's role" })
export class MembershipResponse {
  @ApiProperty({ example: 'org_demo' })
  id: string;

  @ApiProperty({ example: 'Demo Org' })
  name: string;

  @ApiProperty({ enum: ROLES, example: 'owner' })
  role: Role;
}

const TOKEN = {
  description: 'Session token (cds_sess_…), valid 24 hours: send it as `Authorization: Bearer <token>`. Shown once.',
  example: 'cds_sess_Q3vT9kLm2XpR8sWd4ZbN6yHc1JfGa7Ue',
};

@ApiSchema({ name: 'SignupResult' })
export class SignupResponse {
  @ApiProperty(TOKEN)
  token: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T10:00:00.000Z' })
  expires_at: string;

  @ApiProperty({ type: () => UserResponse })
  user: UserResponse;

  @ApiProperty({ type: () => NewOrganizationResponse })
  organization: NewOrganizationResponse;
}

@ApiSchema({ name: 'LoginResult' })
export class LoginResponse {
  @ApiProperty(TOKEN)
  token: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T10:00:00.000Z' })
  expires_at: string;

  @ApiProperty({ type: () => UserResponse })
  user: UserResponse;

  @ApiProperty({ type: () => [MembershipResponse], description: 'By membership date; the first is used when X-Org-ID is not sent' })
  organizations: MembershipResponse[];
}
