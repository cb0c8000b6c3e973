import { DeliveryError } from '../domain/webhook';

export type SendResult = { status: number; retryAfter: string | undefined } | { error: DeliveryError };

/** Resolves a host name to its addresses (every one), once. */
export abstract class HostResolver {
  abstract lookup(host: string): Promise<string[]>;
}

/**
 * POSTs one attempt: resolves the URL's host once, checks every address (url-policy.ts), connects
 * to the checked one (no second lookup, no proxy), follows no redirect, gives up after `timeoutMs`.
 */
export abstract class WebhookSender {
  abstract send(request: { url: string; headers: Record<string, string>; body: string; timeoutMs: number; allowPrivate: boolean }): Promise<SendResult>;
}
