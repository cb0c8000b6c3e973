import { assertNotSuspended } from '../../prepaid/domain/suspension';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { StepUnavailable } from '../../operations/application/operation-executors';
import { auditActor } from '../../audit/application/audit-actor';
import { ComputeGateway } from './compute-gateway';
import { ProviderConsole } from './compute-provider.port';
import { ServerReads } from './servers.port';

/** How long a console credential lives (servers.md: expires_at = now + 60 s). */
export const CONSOLE_TTL_MS = 60_000;

export const computeUnavailable = (): DomainError =>
  new DomainError('provider_unavailable', 'The compute provider is unavailable; no console was made. Retry later');

/** A console credential made for a server, not yet handed out (no audit row until it is). */
export interface PreparedConsole {
  serverId: string;
  console: ProviderConsole;
}

/** Calls to the provider one console request makes at most before it answers 503 provider_unavailable. */
export const CONSOLE_ATTEMPTS = 3;
const CONSOLE_RETRY_DELAY_MS = 50;

/**
 * POST /v1/servers/{id}/console (servers.md): a new VNC credential for a running server, whatever
 * operation is unfinished; no operation. In two parts, so that the provider call runs outside any
 * database transaction while the Idempotency-Key's transaction stays short:
 *
 * - prepare(): the server of the organization (404), `running` (409 invalid_state, a deleted one
 *   too), the compute provider not known to be down (503 provider_unavailable), then the
 *   provider's credential (its refusal, an instance not running, is 409 invalid_state; a provider
 *   that cannot be reached is 503). Nothing is written.
 * - handOut(): the audit row server.console_access (actor, IP, the server, data.expires_at, never
 *   the URL or password), in the caller's transaction, with the answer stored sealed.
 *
 * A credential made but never handed out (the request replayed an earlier answer, or failed
 * after the call) expires unused at the provider.
 */
@Injectable()
export class CreateServerConsole {
  constructor(
    private readonly reads: ServerReads,
    private readonly compute: ComputeGateway,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  async prepare(principal: Principal, serverId: string): Promise<PreparedConsole> {
    const server = await this.reads.findInOrg(principal.orgId, serverId);
    if (!server) throw notFound(`Server ${serverId} not found`);
    assertNotSuspended(server, 'Server', 'open a console');
    if (server.status !== 'running') throw invalidState(`Server ${server.id} is ${server.status}; a console needs it running`);
    if (this.compute.isDown()) throw computeUnavailable();
    // A transient failure is tried again at once, up to CONSOLE_ATTEMPTS calls in all, while the
    // circuit stays closed (a credential made by a call whose answer was lost expires unused).
    for (let attempt = 1; ; attempt++) {
      const expiresAt = new Date(this.clock.now().getTime() + CONSOLE_TTL_MS);
      try {
        return { serverId: server.id, console: await this.compute.createConsole({ serverId: server.id, expiresAt }) };
      } catch (err) {
        if (!(err instanceof StepUnavailable)) throw err;
        if (attempt >= CONSOLE_ATTEMPTS || this.compute.isDown()) throw computeUnavailable();
        await sleep(CONSOLE_RETRY_DELAY_MS * attempt);
      }
    }
  }

  async handOut(principal: Principal, prepared: PreparedConsole, ip: string | null): Promise<void> {
    await this.audit.record({
      orgId: principal.orgId,
      ...auditActor(principal),
      action: 'server.console_access',
      targetId: prepared.serverId,
      ipAddress: ip,
      data: { expires_at: prepared.console.expiresAt.toISOString() },
    });
  }
}
