import { Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { Settings } from '../../../../shared/config/settings';
import { Public } from '../../../auth/interface/http/access.decorators';
import { returnLocation } from '../../domain/top-up';
import { checkoutPage as page, sessionPage } from './checkout-pages';
import { CheckoutAction, SimulatedCheckout } from '../../infrastructure/simulated-checkout';

const SAFE_ORIGIN = /^https?:\/\/(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d+)?$/;

/**
 * No source allows a script. `form-action` also governs where the form's redirect may go
 * (browsers enforce it on the 303 to return_url), so a session with a return_url adds that
 * URL's origin, and nothing else.
 */
function csp(returnUrl: string | null): string {
  // The origin as the URL parser gives it, and only when it is a plain scheme://host[:port]: a
  // host with a character that a CSP reads as syntax (; , * ') adds nothing (creation refuses it).
  const origin = returnUrl ? new URL(returnUrl).origin : '';
  const back = SAFE_ORIGIN.test(origin) ? ` ${origin}` : '';
  return `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${back}; frame-ancestors 'none'; base-uri 'none'`;
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
    // Only the checkout's own page may post its form, refused (403) before the session is touched
    // otherwise: a browser's Sec-Fetch-Site other than same-origin, or an Origin naming another
    // site. The page's `Referrer-Policy: no-referrer` makes a browser send `Origin: null` with its
    // own form, accepted only beside `Sec-Fetch-Site: same-origin`. Clients that send neither
    // header are not browsers.
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    const foreignSite = site !== undefined && site !== 'same-origin' && site !== 'none';
    const foreignOrigin = origin !== undefined && (origin === 'null' ? site !== 'same-origin' : origin !== `${req.protocol}://${req.headers.host ?? ''}`);
    if (foreignSite || foreignOrigin) {
      return this.send(res, 403, page('Forbidden', '<h1>Forbidden</h1>\n<p>This checkout accepts its own page\'s form only.</p>'));
    }
    const done = await this.checkout.act(id, action);
    if (done === undefined) return this.send(res, 404, page('Not found', '<h1>Checkout session not found</h1>'));
    if (done === 'closed') {
      // Pay or Cancel on a session no longer open: 409 with the page of its state (what happened, what to do).
      const session = await this.checkout.session(id);
      if (!session) return this.send(res, 404, page('Not found', '<h1>Checkout session not found</h1>'));
      return this.send(res, 409, sessionPage(session));
    }
    await this.checkout.deliver(done.eventId, req.socket.localPort);
    const outcome = action === 'pay' ? 'paid' : 'canceled';
    if (done.session.returnUrl) {
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(303, returnLocation(done.session.returnUrl, done.session.topUpId, outcome));
      return;
    }
    this.send(res, 200, sessionPage(done.session));
  }
}
