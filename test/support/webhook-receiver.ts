import http from 'node:http';
import { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** What a path answers: a status (and headers), or 'hang' (never answers). Called per request, with how many that path got before. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
}
export type Behaviour = (count: number) => Answer | 'hang';

/**
 * A webhook receiver on 127.0.0.1 for tests: records every request (path, headers, raw body) and
 * answers as the path's behaviour says (default 200).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly counts = new Map<string, number>();
  private readonly hanging = new Set<http.ServerResponse>();
  private server!: http.Server;
  port = 0;

  static async start(): Promise<WebhookReceiver> {
    const r = new WebhookReceiver();
    r.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        r.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const count = r.counts.get(path) ?? 0;
        r.counts.set(path, count + 1);
        const answer: Answer | 'hang' = (r.behaviours.get(path) ?? (() => ({ status: 200 })))(count);
        if (answer === 'hang') {
          r.hanging.add(res);
          return;
        }
        if (answer.delayMs) setTimeout(() => res.writeHead(answer.status, answer.headers).end(), answer.delayMs);
        else res.writeHead(answer.status, answer.headers).end();
      });
    });
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  on(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  at(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
