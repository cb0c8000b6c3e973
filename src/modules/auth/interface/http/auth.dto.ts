import { IsEmail, IsString, Length, MaxLength } from 'class-validator';

export class SignupDto {
  @IsString() @MaxLength(254) @IsEmail({}, { message: 'email must be an email address' })
  email: string;

  @IsString() @Length(8, 200, { message: 'password must be 8 to 200 characters' })
  password: string;

  @IsString() @Length(1, 200, { message: 'organization_name must be 1 to 200 characters' })
  organization_name: string;
}

export class LoginDto {
  @IsString() @MaxLength(254)
  email: string;

  @IsString() @MaxLength(200)
  password: string;
}
