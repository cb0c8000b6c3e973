import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Actor } from '../../auth/application/api-keys.use-cases';
import { MAX_SSH_KEYS_PER_ORG, SshKey } from '../domain/ssh-key';
import { ParsedPublicKey, parsePublicKey, validateSshKeyName } from '../domain/ssh-public-key';
import { SshKeyRepository } from './access.ports';

/** 409 conflict naming the key holding the fingerprint or the name (servers.md Precisions). */
export function sshKeyTaken(field: 'public_key' | 'name', existing: SshKey): DomainError {
  const what = field === 'public_key' ? `the fingerprint ${existing.fingerprint}` : `the name "${existing.name}"`;
  return new DomainError('conflict', `SSH key ${existing.id} has ${what} already`, { existing_id: existing.id, field });
}

const auditOf = (actor: Actor) => ({ actorType: actor.type, actorId: actor.id, ipAddress: actor.ip, targetType: 'ssh_key' });

/** A create request validated (400 comes before the Idempotency-Key's checks): the name, then the key. */
export interface NewSshKey {
  name: string;
  parsed: ParsedPublicKey;
}

export function validateNewSshKey(body: { name?: unknown; public_key?: unknown }): NewSshKey {
  return { name: validateSshKeyName(body.name), parsed: parsePublicKey(body.public_key) };
}

@Injectable()
export class CreateSshKey {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly keys: SshKeyRepository,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  /**
   * 400 (name, then public_key), then under the organization's lock: 409 conflict (fingerprint
   * first, then name), 409 quota_exceeded (100 keys). The audit entry holds the fingerprint, never the key.
   */
  async execute(orgId: string, input: NewSshKey, actor: Actor): Promise<SshKey> {
    const { name, parsed } = input;
    return this.uow.run(async () => {
      await this.keys.lockOrganization(orgId);
      const sameKey = await this.keys.findBy(orgId, 'fingerprint', parsed.fingerprint);
      if (sameKey) throw sshKeyTaken('public_key', sameKey);
      const sameName = await this.keys.findBy(orgId, 'name', name);
      if (sameName) throw sshKeyTaken('name', sameName);
      if ((await this.keys.count(orgId)) >= MAX_SSH_KEYS_PER_ORG) {
        throw new DomainError('quota_exceeded', `An organization may hold at most ${MAX_SSH_KEYS_PER_ORG} SSH keys; delete one first`, { limit: MAX_SSH_KEYS_PER_ORG });
      }
      const key = await this.keys.insert({
        id: newId('ssh'), orgId, name, type: parsed.type, fingerprint: parsed.fingerprint, publicKey: parsed.normalized, createdAt: this.clock.now(),
      });
      if (!key) {
        // The unique indexes refused it (a create the lock did not serialise): name the holder.
        const holder = (await this.keys.findBy(orgId, 'fingerprint', parsed.fingerprint)) ?? (await this.keys.findBy(orgId, 'name', name));
        throw holder ? sshKeyTaken(holder.fingerprint === parsed.fingerprint ? 'public_key' : 'name', holder) : new DomainError('conflict', 'The SSH key exists already');
      }
      await this.audit.record({ orgId, ...auditOf(actor), action: 'ssh_key.create', targetId: key.id, data: { name: key.name, type: key.type, fingerprint: key.fingerprint } });
      return key;
    });
  }
}

@Injectable()
export class RenameSshKey {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly keys: SshKeyRepository,
    private readonly audit: AuditTrail,
  ) {}

  /** PATCH {name}: 200 with the key; the same name changes nothing (no audit entry); a name taken 409 conflict. */
  async execute(orgId: string, id: string, input: { name: unknown }, actor: Actor): Promise<SshKey> {
    const name = validateSshKeyName(input.name);
    return this.uow.run(async () => {
      const key = await this.keys.get(orgId, id);
      if (!key) throw notFound(`SSH key ${id} not found`);
      if (key.name === name) return key;
      // The same lock as creates: the name check below cannot race another create or rename.
      await this.keys.lockOrganization(orgId);
      const holder = await this.keys.findBy(orgId, 'name', name);
      if (holder) throw sshKeyTaken('name', holder);
      const renamed = await this.keys.rename(orgId, id, name);
      if (!renamed) throw notFound(`SSH key ${id} not found`);
      await this.audit.record({ orgId, ...auditOf(actor), action: 'ssh_key.update', targetId: id, data: { changes: { name: { old: key.name, new: name } } } });
      return renamed;
    });
  }
}

@Injectable()
export class DeleteSshKey {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly keys: SshKeyRepository,
    private readonly audit: AuditTrail,
  ) {}

  /** The row is gone (servers keep the keys they were given); again: 404. */
  async execute(orgId: string, id: string, actor: Actor): Promise<void> {
    await this.uow.run(async () => {
      const key = await this.keys.delete(orgId, id);
      if (!key) throw notFound(`SSH key ${id} not found`);
      await this.audit.record({ orgId, ...auditOf(actor), action: 'ssh_key.delete', targetId: id, data: { name: key.name, fingerprint: key.fingerprint } });
    });
  }
}

@Injectable()
export class SshKeyQueries {
  constructor(private readonly keys: SshKeyRepository) {}

  async list(orgId: string, input: { limit?: string; cursor?: string; fingerprint?: string; name?: string }): Promise<{ keys: SshKey[]; nextCursor: string | null }> {
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const page = await this.keys.list(orgId, { fingerprint: input.fingerprint, name: input.name }, limit, after);
    return { keys: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }

  async get(orgId: string, id: string): Promise<SshKey> {
    const key = await this.keys.get(orgId, id);
    if (!key) throw notFound(`SSH key ${id} not found`);
    return key;
  }
}
