import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Settings } from '../config/settings';
import { Metrics } from './metrics';

/**
 * Serves GET /metrics (Prometheus text format) on its own port, METRICS_PORT, so the public API
 * keeps only /v1 paths. Started with the application, closed before the database is.
 * METRICS_PORT=0 takes a free port: `port()` tells which. It listens on METRICS_HOST, loopback by
 * default: metrics describe the service's traffic and are no one else's business.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('MetricsServer');
  private server: Server | undefined;

  constructor(
    private readonly metrics: Metrics,
    private readonly settings: Settings,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.settings.metricsPort, this.settings.metricsHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`Metrics on http://${this.settings.metricsHost}:${this.port()}/metrics`);
  }

  /** The address the metrics endpoint listens on (127.0.0.1 unless METRICS_HOST says otherwise). */
  boundAddress(): string {
    const address = this.server?.address();
    if (!address || typeof address === 'string') throw new Error('The metrics server is not listening');
    return address.address;
  }

  /** The port the metrics endpoint listens on. */
  port(): number {
    const address = this.server?.address();
    if (!address || typeof address === 'string') throw new Error('The metrics server is not listening');
    return (address as AddressInfo).port;
  }

  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      // A scrape takes milliseconds; idle keep-alive connections must not hold the shutdown.
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 1000).unref();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found; metrics are at /metrics\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('Method not allowed\n');
      return;
    }
    try {
      const body = await this.metrics.registry.metrics();
      res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (err) {
      this.logger.error({ msg: 'metrics collection failed', err: err instanceof Error ? { name: err.name, message: err.message } : String(err) });
      res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics collection failed\n');
    }
  }
}
