import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsString, Length, MaxLength } from 'class-validator';

export class SignupDto {
  @ApiProperty({ format: 'email', maxLength: 254, example: 'owner@demo.test' })
  @IsString() @MaxLength(254) @IsEmail({}, { message: 'email must be an email address' })
  email: string;

  @ApiProperty({ minLength: 8, maxLength: 200, format: 'password', example: 'demo password 123' })
  @IsString() @Length(8, 200, { message: 'password must be 8 to 200 characters' })
  password: string;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Demo Org' })
  @IsString() @Length(1, 200, { message: 'organization_name must be 1 to 200 characters' })
  organization_name: string;
}

export class LoginDto {
  @ApiProperty({ maxLength: 254, example: 'owner@demo.test' })
  @IsString() @MaxLength(254)
  email: string;

  @ApiProperty({ maxLength: 200, format: 'password', example: 'demo password 123' })
  @IsString() @MaxLength(200)
  password: string;
}
