import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { Injectable } from '@nestjs/common';
import { HostResolver, SendResult, WebhookSender } from '../application/webhook-sender.port';
import { resolveUrl } from '../domain/url-policy';
import { DeliveryError } from '../domain/webhook';

/** The system resolver, every address of the name. */
@Injectable()
export class DnsHostResolver extends HostResolver {
  async lookup(host: string): Promise<string[]> {
    return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  }
}

const TLS_CODES = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_X509)/;

function errorOf(err: unknown): DeliveryError {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && TLS_CODES.test(code)) return 'tls_error';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns_error';
  return 'connection_error';
}

/**
 * Node's http(s) client, one connection per attempt (no agent, no proxy): the host resolved
 * once and every address checked (url-policy.ts), then a connection to the checked address
 * (TLS still verifies the certificate for the URL's host name). Redirects are not followed (a
 * 3xx is an answer like any other). The response body is never read beyond draining it.
 */
@Injectable()
export class HttpWebhookSender extends WebhookSender {
  constructor(private readonly resolver: HostResolver) {
    super();
  }

  async send(request: { url: string; headers: Record<string, string>; body: string; timeoutMs: number; allowPrivate: boolean }): Promise<SendResult> {
    const resolution = await resolveUrl(request.url, request.allowPrivate, (host) => this.resolver.lookup(host));
    if (!resolution.ok) return { error: resolution.error };
    const { url, host, address } = resolution;
    const secure = url.protocol === 'https:';
    const client = secure ? https : http;
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const done = (result: SendResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const req = client.request({
        host: address,
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent: false,
        headers: { ...request.headers, host: url.host, 'content-length': String(Buffer.byteLength(request.body)) },
        ...(secure && !/^[\d.:a-fA-F]+$/.test(host) ? { servername: host } : {}),
      });
      const timer = setTimeout(() => {
        done({ error: 'timeout' });
        req.destroy();
      }, request.timeoutMs);
      req.on('response', (res) => {
        const retryAfter = res.headers['retry-after'];
        done({ status: res.statusCode ?? 0, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter });
        // Drained, never read; a body that does not end within the timeout is cut off.
        const cut = setTimeout(() => req.destroy(), request.timeoutMs);
        res.on('close', () => clearTimeout(cut));
        res.on('error', () => undefined);
        res.resume();
      });
      req.on('error', (err) => done({ error: errorOf(err) }));
      req.end(request.body);
    });
  }
}
