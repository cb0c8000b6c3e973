import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { LogIn, LogOut, SignUp } from '../../application/sessions.use-cases';
import type { Principal } from '../../domain/principal';
import { ClientIp, CurrentPrincipal, Public, RequireAccess } from './access.decorators';
import { LoginDto, SignupDto } from './auth.dto';

@Controller('v1/auth')
export class AuthController {
  constructor(
    private readonly signUp: SignUp,
    private readonly logIn: LogIn,
    private readonly logOut: LogOut,
  ) {}

  @Post('signup')
  @Public()
  @HttpCode(201)
  async signup(@Body() body: SignupDto, @ClientIp() ip: string | null) {
    const r = await this.signUp.execute({ email: body.email, password: body.password, organizationName: body.organization_name, ip });
    return {
      token: r.token,
      expires_at: r.expiresAt.toISOString(),
      user: { id: r.user.id, email: r.user.email, created_at: r.user.createdAt.toISOString() },
      organization: { id: r.organization.id, name: r.organization.name, role: 'owner', created_at: r.organization.createdAt.toISOString() },
    };
  }

  @Post('login')
  @Public()
  @HttpCode(200)
  async login(@Body() body: LoginDto, @ClientIp() ip: string | null) {
    const r = await this.logIn.execute({ email: body.email, password: body.password, ip });
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
  async logout(@CurrentPrincipal() principal: Principal, @ClientIp() ip: string | null): Promise<void> {
    await this.logOut.execute(principal, ip);
  }
}
