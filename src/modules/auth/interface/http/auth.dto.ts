import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsEmail, IsString, Length, MaxLength } from 'class-validator';

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

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Demo Org' })
  @Length(1, 200, { message: 'organization_name must be 1 to 200 characters' })
  @IsString({ message: 'organization_name must be a string' })
  @IsDefined({ message: 'organization_name is required' })
  organization_name: string;
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
