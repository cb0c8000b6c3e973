import { Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { Settings } from '../../../../shared/config/settings';
import { Public } from '../../../auth/interface/http/access.decorators';
import { returnLocation } from '../../domain/top-up';
import { CheckoutAction, SimSession, SimulatedCheckout } from '../../infrastructure/simulated-checkout';

/**
 * No source allows a script. `form-action` also governs where the form's redirect may go
 * (browsers enforce it on the 303 to return_url), so a session with a return_url adds that
 * URL's origin, and nothing else.
 */
function csp(returnUrl: string | null): string {
  const back = returnUrl ? ` ${new URL(returnUrl).origin}` : '';
  return `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${back}; frame-ancestors 'none'; base-uri 'none'`;
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#1a1a1a}
.amount{font-size:2rem;font-weight:600;margin:1rem 0}
form{display:inline-block;margin-right:.5rem}
button{font-size:1rem;padding:.6rem 1.4rem;border-radius:.4rem;border:1px solid #888;cursor:pointer}
#pay{background:#1f6feb;color:#fff;border-color:#1f6feb}
.note{color:#666;font-size:.9rem}
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

function sessionPage(s: SimSession): string {
  const buttons =
    s.status === 'open'
      ? `<form method="post" action="/checkout/${escape(s.id)}/pay"><button id="pay" type="submit">Pay</button></form>` +
        `<form method="post" action="/checkout/${escape(s.id)}/cancel"><button id="cancel" type="submit">Cancel</button></form>`
      : '';
  return page(
    'Cloud Disk Service: wallet top-up',
    `<h1>Wallet top-up</h1>
<p class="note">Simulated payment provider: no card is charged.</p>
<p class="amount"><span id="amount">${escape(s.amount.format())}</span> <span id="currency">${s.amount.currency}</span></p>
<p>Status: <span id="status">${s.status}</span></p>
${buttons}`,
  );
}

/**
 * The simulated provider's hosted checkout: its site, not the API (outside /v1, public, not
 * rate limited, not in the OpenAPI document). Server-rendered HTML without any script, under a
 * CSP that allows none. 404 when PAYMENT_PROVIDER is not simulated or the session is unknown;
 * 503 when PAYMENT_PROVIDER_DOWN=true. `/checkout/complete` serves every provider.
 */
@ApiExcludeController()
@Controller('checkout')
@Public()
@SkipThrottle()
export class CheckoutController {
  constructor(
    private readonly checkout: SimulatedCheckout,
    private readonly settings: Settings,
  ) {}

  private send(res: Response, status: number, html: string, returnUrl: string | null = null): void {
    res.status(status).setHeader('Content-Security-Policy', csp(returnUrl));
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.type('text/html; charset=utf-8').send(html);
  }

  /** 404 or 503 for the whole site, else undefined. */
  private unavailable(res: Response): boolean {
    if (this.settings.paymentProvider !== 'simulated') {
      this.send(res, 404, page('Not found', '<h1>Not found</h1>'));
      return true;
    }
    if (this.settings.paymentProviderDown) {
      this.send(res, 503, page('Unavailable', '<h1>The checkout is temporarily unavailable</h1><p>Try again in a few minutes.</p>'));
      return true;
    }
    return false;
  }

  /**
   * Where a checkout of a top-up without return_url sends the customer back (Stripe's success and
   * cancel URLs): says what happened, reads nothing and never credits anything (the signed event
   * does). 404 when PAYMENT_PROVIDER=off.
   */
  @Get('complete')
  complete(@Query('checkout') outcome: unknown, @Res() res: Response): void {
    if (this.settings.paymentProvider === 'off' || (outcome !== 'paid' && outcome !== 'canceled')) return this.send(res, 404, page('Not found', '<h1>Not found</h1>'));
    if (outcome === 'paid') {
      return this.send(
        res,
        200,
        page('Payment received', '<h1>Payment received</h1>\n<p>Your wallet is credited as soon as the payment provider confirms the payment. You can close this page.</p>'),
      );
    }
    this.send(res, 200, page('Payment not completed', '<h1>Payment not completed</h1>\n<p>Nothing was charged. The top-up stays pending until it expires or is canceled.</p>'));
  }

  @Get(':session')
  async show(@Param('session') id: string, @Res() res: Response): Promise<void> {
    if (this.unavailable(res)) return;
    const session = await this.checkout.session(id);
    if (!session) return this.send(res, 404, page('Not found', '<h1>Checkout session not found</h1>'));
    this.send(res, 200, sessionPage(session), session.status === 'open' ? session.returnUrl : null);
  }

  @Post(':session/pay')
  pay(@Param('session') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.act(id, 'pay', req, res);
  }

  @Post(':session/cancel')
  cancel(@Param('session') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.act(id, 'cancel', req, res);
  }

  /** Never credits by itself: the signed event, delivered to the API, does. */
  private async act(id: string, action: CheckoutAction, req: Request, res: Response): Promise<void> {
    if (this.unavailable(res)) return;
    const done = await this.checkout.act(id, action);
    if (done === undefined) return this.send(res, 404, page('Not found', '<h1>Checkout session not found</h1>'));
    if (done === 'closed') {
      const session = await this.checkout.session(id);
      return this.send(res, 409, page('Checkout closed', `<h1>This checkout is closed</h1><p>Status: <span id="status">${session?.status ?? 'expired'}</span></p>`));
    }
    await this.checkout.deliver(done.eventId, req.socket.localPort);
    const outcome = action === 'pay' ? 'paid' : 'canceled';
    if (done.session.returnUrl) {
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(303, returnLocation(done.session.returnUrl, done.session.topUpId, outcome));
      return;
    }
    this.send(res, 200, page(action === 'pay' ? 'Payment received' : 'Payment canceled', `<h1>${action === 'pay' ? 'Payment received' : 'Payment canceled'}</h1>`));
  }
}
