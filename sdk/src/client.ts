import type { RequestOptions, WaitOptions } from './area.js';
import { AREAS, OperationsArea } from './generated/api.js';
import type { Operation } from './generated/schema.js';
import { ClientOptions, HttpTransport } from './transport.js';
import { webhooks } from './webhooks.js';

/** `client.operations`: the generated reads, and `wait`. */
export class OperationsClient extends OperationsArea {
  /**
   * Waits for operation `id` to end and returns it (`succeeded` or `failed`: check `status`), with
   * long-polls of `GET /v1/operations/{id}?wait=60` and If-None-Match: one request per minute at
   * most while it runs, none in a loop. A `TimeoutError` after `timeout` (10 minutes by default).
   */
  wait(id: string, options?: WaitOptions): Promise<Operation> {
    return (this.transport as HttpTransport).waitForOperation(id, options);
  }
}

type Areas = { [K in keyof typeof AREAS]: InstanceType<(typeof AREAS)[K]> };

// The areas are set from the generated table in the constructor: one property per area.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface CloudDisk extends Omit<Areas, 'operations'> {}

/**
 * The Cloud Disk Service client: one property per area of the API (`servers`, `volumes`,
 * `operations`, `wallet`, `topUps`, `sshKeys`, `firewallRules`, `templates`, `deployments`,
 * `webhookEndpoints`, `apiKeys`, `members`, `invitations`, `organizations`, `auditLog`, …),
 * a method per route, and `webhooks.verify`.
 *
 * ```ts
 * const client = new CloudDisk({ baseUrl: 'http://localhost:3000', token: process.env.CDS_TOKEN });
 * const { server } = await client.servers.create({ name: 'web-2', region: 'id-jkt', plan: 'cx1', image: 'ubuntu-24.04', term_months: 1 }, { wait: true });
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class CloudDisk {
  readonly operations: OperationsClient;
  /** Verifying webhook deliveries (Standard Webhooks); no request is made. */
  readonly webhooks = webhooks;
  private readonly transport: HttpTransport;

  constructor(readonly options: ClientOptions) {
    this.transport = new HttpTransport(options);
    for (const [name, Area] of Object.entries(AREAS)) {
      (this as unknown as Record<string, unknown>)[name] = new Area(this.transport);
    }
    this.operations = new OperationsClient(this.transport);
  }

  /** A client like this one with some options changed (another organization, another token). */
  with(options: Partial<ClientOptions>): CloudDisk {
    return new CloudDisk({ ...this.options, ...options });
  }

  /** Logs in with an email and a password; a client acting with the session (24 hours), and the login's answer. */
  static async login(options: ClientOptions & { email: string; password: string }, requestOptions?: RequestOptions): Promise<CloudDisk> {
    const { email, password, ...rest } = options;
    const session = await new CloudDisk(rest).auth.login({ email, password }, requestOptions);
    return new CloudDisk({ ...rest, token: session.token });
  }
}
