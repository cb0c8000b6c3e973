import { Injectable, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Settings } from '../../../shared/config/settings';

/** Where customers reach this service from a checkout: PUBLIC_BASE_URL, else this process on localhost at the port it listens on (PORT=0 picks one at start). */
@Injectable()
export class PublicBaseUrl {
  constructor(
    private readonly settings: Settings,
    @Optional() private readonly host?: HttpAdapterHost,
  ) {}

  value(): string {
    if (this.settings.publicBaseUrl) return this.settings.publicBaseUrl;
    const address = this.host?.httpAdapter?.getHttpServer()?.address?.();
    const port = address && typeof address === 'object' && address.port ? address.port : this.settings.port;
    return `http://localhost:${port}`;
  }
}
