import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsEmail, IsOptional, IsString, Length, MaxLength, ValidateIf } from 'class-validator';

/*
 * class-validator runs a property's checks bottom-up and stops at the first failure: presence,
 * then type, then length and format, so a missing or mistyped member is reported as such.
 */

export class SignupDto {
  @ApiProperty({ format: 'email', maxLength: 254, example: 'owner@demo.test' })
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254, { message: 'email must be at most 254 characters' })
  @IsString({ message: 'email must be a string' })
  @IsDefined({ message: 'email is required' })
  email: string;

  @ApiProperty({ minLength: 8, maxLength: 200, format: 'password', example: 'demo password 123' })
  @Length(8, 200, { message: 'password must be 8 to 200 characters' })
  @IsString({ message: 'password must be a string' })
  @IsDefined({ message: 'password is required' })
  password: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'Required without invitation_token; ignored with it', example: 'Demo Org' })
  @Length(1, 200, { message: 'organization_name must be 1 to 200 characters' })
  @IsString({ message: 'organization_name must be a string' })
  @IsDefined({ message: 'organization_name is required' })
  @ValidateIf((o: SignupDto) => o.invitation_token === undefined)
  organization_name?: string;

  @ApiPropertyOptional({
    maxLength: 200,
    description: 'An invitation token (cds_inv_…) for this email: the user joins the inviting organization with the invited role, and no organization of their own is created',
    example: 'cds_inv_Q3vT9kLm2XpR8sWd4ZbN6yHc1JfGa7Ue',
  })
  @MaxLength(200, { message: 'invitation_token is not a pending invitation for this email' })
  @IsString({ message: 'invitation_token must be a string' })
  @IsOptional()
  invitation_token?: string;
}

export class LoginDto {
  @ApiProperty({ maxLength: 254, example: 'owner@demo.test' })
  @MaxLength(254, { message: 'email must be at most 254 characters' })
  @IsString({ message: 'email must be a string' })
  @IsDefined({ message: 'email is required' })
  email: string;

  @ApiProperty({ maxLength: 200, format: 'password', example: 'demo password 123' })
  @MaxLength(200, { message: 'password must be at most 200 characters' })
  @IsString({ message: 'password must be a string' })
  @IsDefined({ message: 'password is required' })
  password: string;
}
