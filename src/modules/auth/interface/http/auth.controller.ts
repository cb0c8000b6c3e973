import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ANONYMOUS_BODY_LIMIT_BYTES, BodyLimit } from '../../../../shared/http/body-parsing';
import { ApiAuthenticated, ApiErrors, NO_STORE_HEADER, RATE_LIMITED_RESPONSE_HEADERS } from '../../../../shared/http/openapi';
import { LogIn, LogOut, SignUp } from '../../application/sessions.use-cases';
import type { Principal } from '../../domain/principal';
import { ClientIp, CurrentPrincipal, Public, RequireAccess } from './access.decorators';
import { LoginDto, SignupDto } from './auth.dto';
import { LoginResponse, SignupResponse } from './auth.openapi';

@ApiTags('Auth')
@Controller('v1/auth')
export class AuthController {
  constructor(
    private readonly signUp: SignUp,
    private readonly logIn: LogIn,
    private readonly logOut: LogOut,
  ) {}

  @Post('signup')
  @Public()
  @BodyLimit(ANONYMOUS_BODY_LIMIT_BYTES)
  @HttpCode(201)
  @ApiOperation({ operationId: 'signup', summary: 'Create an account and its organization', description: 'The new user owns the new organization. With invitation_token (a pending invitation for this email) the user joins the inviting organization with the invited role instead, and no organization is created; an invalid token is 400 naming invitation_token and creates no user. Answers with a session token. Rate limited per client IP.' })
  @ApiCreatedResponse({ description: 'Account, organization and session created', type: SignupResponse, headers: { ...RATE_LIMITED_RESPONSE_HEADERS, ...NO_STORE_HEADER } })
  @ApiErrors('invalid_request', 'payload_too_large', 'conflict', 'rate_limited')
  async signup(@Body() body: SignupDto, @ClientIp() ip: string | null, @Res({ passthrough: true }) res: Response): Promise<SignupResponse> {
    const r = await this.signUp.execute({ email: body.email, password: body.password, organizationName: body.organization_name, invitationToken: body.invitation_token, ip });
    // The answer carries a session token: no cache may keep it (errors carry none).
    res.setHeader('Cache-Control', 'no-store');
    return {
      token: r.token,
      expires_at: r.expiresAt.toISOString(),
      user: { id: r.user.id, email: r.user.email, created_at: r.user.createdAt.toISOString() },
      organization: { id: r.organization.id, name: r.organization.name, role: r.role, created_at: r.organization.createdAt.toISOString() },
    };
  }

  @Post('login')
  @Public()
  @BodyLimit(ANONYMOUS_BODY_LIMIT_BYTES)
  @HttpCode(200)
  @ApiOperation({
    operationId: 'login',
    summary: 'Log in: a session token for email and password',
    description: 'A wrong email or password answers 401 invalid_credentials, the same for both. Rate limited per client IP.',
  })
  @ApiOkResponse({ description: 'A new session', type: LoginResponse, headers: { ...RATE_LIMITED_RESPONSE_HEADERS, ...NO_STORE_HEADER } })
  @ApiErrors('invalid_request', 'payload_too_large', 'invalid_credentials', 'rate_limited')
  async login(@Body() body: LoginDto, @ClientIp() ip: string | null, @Res({ passthrough: true }) res: Response): Promise<LoginResponse> {
    const r = await this.logIn.execute({ email: body.email, password: body.password, ip });
    res.setHeader('Cache-Control', 'no-store');
    return {
      token: r.token,
      expires_at: r.expiresAt.toISOString(),
      user: { id: r.user.id, email: r.user.email, created_at: r.user.createdAt.toISOString() },
      organizations: r.organizations.map((m) => ({ id: m.organization.id, name: m.organization.name, role: m.role })),
    };
  }

  @Post('logout')
  @RequireAccess({ sessionOnly: true })
  @HttpCode(204)
  @ApiAuthenticated()
  @ApiOperation({ operationId: 'logout', summary: 'Log out: the session token stops working', description: 'Sessions only: an API key gets 403 forbidden.' })
  @ApiNoContentResponse({ description: 'Logged out', headers: RATE_LIMITED_RESPONSE_HEADERS })
  @ApiErrors('unauthorized', 'forbidden', 'rate_limited')
  async logout(@CurrentPrincipal() principal: Principal, @ClientIp() ip: string | null): Promise<void> {
    await this.logOut.execute(principal, ip);
  }
}
