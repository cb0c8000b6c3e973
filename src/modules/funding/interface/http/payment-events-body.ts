import express, { NextFunction, Request, Response } from 'express';

/** The inbound payment events' own body limit (raw bytes, verified before any parsing). */
export const PAYMENT_EVENT_BODY_LIMIT = 256 * 1024;

declare module 'express-serve-static-core' {
  interface Request {
    /** POST /v1/payment-events/*: the body's exact bytes (undefined when too large). */
    paymentEventBody?: Buffer;
    paymentEventBodyTooLarge?: boolean;
  }
}

/**
 * The raw reader of POST /v1/payment-events/{provider}: keeps the exact bytes the provider
 * signed (any content type), at most 256 KiB, and marks the request's body as read (`_body`),
 * so the API's JSON parser, wherever it runs, leaves it alone. Mounted on that path before
 * every other body parser (app.factory.ts). A Content-Length above the limit is refused at once,
 * without reading (or draining) the body, and the connection closed after the 413.
 */
export function paymentEventsRawBody(): (req: Request, res: Response, next: NextFunction) => void {
  const read = express.raw({ type: () => true, limit: PAYMENT_EVENT_BODY_LIMIT, inflate: false });
  return (req, res, next) => {
    if (req.method !== 'POST') return next();
    const declared = req.headers['content-length'];
    if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > PAYMENT_EVENT_BODY_LIMIT) {
      req.paymentEventBodyTooLarge = true;
      req.paymentEventBody = undefined;
      req.body = undefined;
      (req as unknown as { _body: boolean })._body = true;
      res.setHeader('Connection', 'close');
      return next();
    }
    read(req, res, (err?: unknown) => {
      if (err) {
        if ((err as { type?: string }).type === 'entity.too.large') req.paymentEventBodyTooLarge = true;
        req.paymentEventBody = undefined;
      } else {
        req.paymentEventBody = Buffer.isBuffer(req.body) ? (req.body as Buffer) : Buffer.alloc(0);
      }
      req.body = undefined;
      (req as unknown as { _body: boolean })._body = true;
      next();
    });
  };
}
