import { NoEventOutbox } from '../../src/modules/webhooks/application/event-outbox.port';
import { InMemoryAuditTrail } from '../../src/modules/audit/testing/in-memory-audit-trail';
import { Principal } from '../../src/modules/auth/domain/principal';
import { AdvanceOperations, MAX_ATTEMPTS } from '../../src/modules/operations/application/advance-operations.use-case';
import { OperationExecutors } from '../../src/modules/operations/application/operation-executors';
import { InMemoryOperationRepository } from '../../src/modules/operations/testing/in-memory-operations.repository';
import { PortOperationAcceptance } from '../../src/modules/operations/testing/port-operation-acceptance';
import { RenewVolume } from '../../src/modules/volumes/application/renew-volume.use-case';
import { RenewalExecutor } from '../../src/modules/volumes/application/renewal-executor';
import { quoteRenewal, renewTerms } from '../../src/modules/volumes/domain/renewal';
import { Volume } from '../../src/modules/volumes/domain/volume';
import { TermMonths } from '../../src/modules/prepaid/domain/term';
import { InMemoryVolumeRepository } from '../../src/modules/volumes/testing/in-memory-volumes';
import { InMemoryWalletLedger } from '../../src/modules/wallet/testing/in-memory-wallet-ledger';
import { loadSettings } from '../../src/shared/config/settings';
import { InMemoryUnitOfWork } from '../../src/shared/database/in-memory-unit-of-work';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { Money } from '../../src/shared/kernel/money/money';

const NOW = new Date('2026-11-22T10:00:00.000Z');

function volume(overrides: Partial<Volume> = {}): Volume {
  return {
    id: 'vol_1',
    orgId: 'org_1',
    name: 'data',
    status: 'attached',
    type: 'premium',
    regionId: 'id-jkt',
    zoneId: 'id-jkt-a',
    sizeGb: 100,
    server: { id: 'vm_1', name: 'web-1' },
    mountPath: '/mnt/data',
    mounted: true,
    termMonths: 1,
    billing: Money.parse('2', 'USD'),
    price: { USD: Money.parse('0.02', 'USD'), IDR: Money.parse('320', 'IDR') },
    expiresAt: new Date('2026-12-21T00:00:00.000Z'),
    note: null,
    labels: {},
    deleteProtection: false,
    createdAt: new Date('2026-01-01T00:00:00.000Z'),
    deletedAt: null,
    ...overrides,
  };
}

const KEY: Principal = { kind: 'api_key', orgId: 'org_1', credentialId: 'key_1', userId: null, role: null, scopes: ['vm:read', 'vm:write'] };

describe('renewal rules', () => {
  const renewedFrom = (expiresAt: string, term: TermMonths, now = NOW) =>
    renewTerms(volume({ expiresAt: new Date(expiresAt) }), quoteRenewal(volume(), term), now).expiresAt.toISOString();

  it.each([
    ['2027-01-31T00:00:00.000Z', 1, '2027-02-28T00:00:00.000Z'],
    ['2028-01-31T00:00:00.000Z', 1, '2028-02-29T00:00:00.000Z'],
    ['2027-03-31T12:00:00.000Z', 1, '2027-04-30T12:00:00.000Z'],
    ['2027-11-30T00:00:00.000Z', 3, '2028-02-29T00:00:00.000Z'],
    ['2028-02-29T00:00:00.000Z', 12, '2029-02-28T00:00:00.000Z'],
    ['2026-12-21T00:00:00.000Z', 12, '2027-12-21T00:00:00.000Z'],
  ] as [string, TermMonths, string][])('a volume expiring %s renewed for %i months expires %s', (from, term, expected) => {
    expect(renewedFrom(from, term)).toBe(expected);
  });

  it('renews an expired volume from now, not from its old expiry', () => {
    expect(renewedFrom('2026-01-31T00:00:00.000Z', 1)).toBe('2026-12-22T10:00:00.000Z');
    expect(renewedFrom('2026-11-22T10:00:00.000Z', 3)).toBe('2027-02-22T10:00:00.000Z');
    expect(renewedFrom('2026-10-31T00:00:00.000Z', 1, new Date('2027-01-31T08:00:00.000Z'))).toBe('2027-02-28T08:00:00.000Z');
  });

  it('prices size × price per GB-month × term exactly, in the asked currency or the billing one', () => {
    expect(quoteRenewal(volume(), 3).amount.format()).toBe('6.00000');
    expect(quoteRenewal(volume(), 12, 'IDR').amount.format()).toBe('384000');
    expect(quoteRenewal(volume({ billing: Money.parse('32000', 'IDR') }), 1).amount).toEqual(Money.parse('32000', 'IDR'));
    const odd = volume({ sizeGb: 7, price: { USD: Money.parse('0.00001', 'USD'), IDR: Money.parse('1', 'IDR') } });
    expect(quoteRenewal(odd, 12).amount.format()).toBe('0.00084');
  });

  it('sets term and billing to the renewal\'s', () => {
    const terms = renewTerms(volume(), quoteRenewal(volume(), 12, 'IDR'), NOW);
    expect(terms.termMonths).toBe(12);
    expect(terms.billing.currency).toBe('IDR');
    expect(terms.billing.format()).toBe('384000');
  });

  it('refuses a deleted or deleting volume with invalid_state', () => {
    const deleted = volume({ status: 'deleted', deletedAt: NOW, server: null });
    expect(() => quoteRenewal(deleted, 1)).toThrow(new DomainError('invalid_state', 'Volume vol_1 is deleted and cannot be renewed'));
    expect(() => quoteRenewal(volume({ status: 'deleting' }), 1)).toThrow('Volume vol_1 is being deleted and cannot be renewed');
  });
});

describe('RenewVolume and the worker, with in-memory adapters', () => {
  let clock: FixedClock;
  let volumes: InMemoryVolumeRepository;
  let operations: InMemoryOperationRepository;
  let wallet: InMemoryWalletLedger;
  let audit: InMemoryAuditTrail;
  let renew: RenewVolume;
  let advance: AdvanceOperations;

  beforeEach(async () => {
    clock = new FixedClock(NOW);
    volumes = new InMemoryVolumeRepository();
    operations = new InMemoryOperationRepository();
    wallet = new InMemoryWalletLedger();
    audit = new InMemoryAuditTrail();
    const uow = new InMemoryUnitOfWork();
    const executors = new OperationExecutors();
    new RenewalExecutor(volumes, executors, clock, new NoEventOutbox()).onModuleInit();
    renew = new RenewVolume(uow, volumes, new PortOperationAcceptance(uow, operations, wallet, audit), clock);
    advance = new AdvanceOperations(uow, operations, executors, wallet, clock, { ...loadSettings({}), workerLeaseMs: 30_000 });
    volumes.put(volume());
    await wallet.credit('org_1', Money.parse('10', 'USD'), 'test');
  });

  const balance = async () => (await wallet.balances('org_1')).find((b) => b.currency === 'USD')!;

  it('accepts: a pending operation with step renewing running, a hold, an audit entry; then the worker renews and captures', async () => {
    const { operation, volume: v } = await renew.execute(KEY, { volumeId: 'vol_1', termMonths: 3 }, '10.0.0.1');
    expect(v.expiresAt.toISOString()).toBe('2026-12-21T00:00:00.000Z');
    expect(operation.snapshot()).toMatchObject({
      type: 'volume.renew',
      status: 'pending',
      vmId: 'vm_1',
      volumeId: 'vol_1',
      steps: [{ name: 'renewing', status: 'running' }],
      createdAt: NOW,
      params: { term_months: 3, currency: 'USD', amount: '6.00000' },
    });
    expect((await balance()).available.format()).toBe('4.00000');
    expect((await balance()).reserved.format()).toBe('6.00000');
    expect(audit.entries).toEqual([
      {
        orgId: 'org_1',
        actorType: 'api_key',
        actorId: 'key_1',
        action: 'volume.renew',
        targetId: 'vol_1',
        ipAddress: '10.0.0.1',
        data: { operation_id: operation.id, term_months: 3, currency: 'USD', amount: '6.00000' },
      },
    ]);

    clock.advance(2000);
    expect(await advance.runOnce()).toEqual({ claimed: 1, succeeded: 1, failed: 0, skipped: 0 });
    const done = (await operations.findInOrg('org_1', operation.id))!.snapshot();
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { volume_id: 'vol_1', term_months: 3, expires_at: '2027-03-21T00:00:00.000Z', charged: { currency: 'USD', amount: '6.00000' } },
      finishedAt: new Date(NOW.getTime() + 2000),
    });
    const renewed = (await volumes.findInOrg('org_1', 'vol_1'))!;
    expect(renewed.expiresAt.toISOString()).toBe('2027-03-21T00:00:00.000Z');
    expect(renewed.termMonths).toBe(3);
    expect((await balance()).reserved.format()).toBe('0.00000');
    expect(wallet.entries.map((e) => e.kind)).toEqual(['credit', 'hold', 'capture']);
    expect(await advance.runOnce()).toEqual({ claimed: 0, succeeded: 0, failed: 0, skipped: 0 });
  });

  it('answers 404, 409 and 402 in that order', async () => {
    await expect(renew.execute(KEY, { volumeId: 'vol_x', termMonths: 1 }, null)).rejects.toMatchObject({ code: 'not_found' });
    await expect(renew.execute({ ...KEY, orgId: 'org_2' }, { volumeId: 'vol_1', termMonths: 1 }, null)).rejects.toMatchObject({ code: 'not_found' });
    await expect(renew.execute(KEY, { volumeId: 'vol_1', termMonths: 12 }, null)).rejects.toMatchObject({
      code: 'insufficient_balance',
      details: { required: '24.00000', available: '10.00000', currency: 'USD' },
    });
    volumes.put(volume({ id: 'vol_2' }));
    await renew.execute(KEY, { volumeId: 'vol_2', termMonths: 1 }, null);
    // vol_2 is busy: 409 even though 12 months would not be covered either.
    await expect(renew.execute(KEY, { volumeId: 'vol_2', termMonths: 12 }, null)).rejects.toMatchObject({ code: 'invalid_state' });
    volumes.put(volume({ id: 'vol_3', status: 'deleted', deletedAt: NOW, server: null }));
    await expect(renew.execute(KEY, { volumeId: 'vol_3', termMonths: 12 }, null)).rejects.toMatchObject({ code: 'invalid_state' });
  });

  it('fails the operation and releases the hold when the volume was deleted meanwhile; the volume is untouched', async () => {
    const { operation } = await renew.execute(KEY, { volumeId: 'vol_1', termMonths: 1 }, null);
    const deleted = volume({ status: 'deleted', deletedAt: NOW, server: null, mountPath: null, mounted: false });
    volumes.put(deleted);
    expect(await advance.runOnce()).toEqual({ claimed: 1, succeeded: 0, failed: 1, skipped: 0 });
    expect((await operations.lock(operation.id))!.snapshot()).toMatchObject({
      status: 'failed',
      error: { code: 'invalid_state', message: 'Volume vol_1 is deleted and cannot be renewed' },
      steps: [{ name: 'renewing', status: 'failed' }],
    });
    expect(await volumes.findInOrg('org_1', 'vol_1')).toEqual(deleted);
    expect((await balance()).available.format()).toBe('10.00000');
    expect(wallet.entries.map((e) => e.kind)).toEqual(['credit', 'hold', 'release']);
  });

  it('takes over an operation whose worker died once its lease has expired, not before', async () => {
    const { operation } = await renew.execute(KEY, { volumeId: 'vol_1', termMonths: 1 }, null);
    const dead = (await operations.lock(operation.id))!;
    dead.claim('dead-worker', new Date(NOW.getTime() + 30_000), NOW);
    await operations.save(dead);

    clock.set(new Date(NOW.getTime() + 30_000));
    expect(await advance.runOnce()).toEqual({ claimed: 0, succeeded: 0, failed: 0, skipped: 0 });
    clock.set(new Date(NOW.getTime() + 30_001));
    expect(await advance.runOnce()).toEqual({ claimed: 1, succeeded: 1, failed: 0, skipped: 0 });
    expect((await operations.lock(operation.id))!.snapshot()).toMatchObject({ status: 'succeeded', attempts: 2, lockedBy: advance.workerId });
    expect(wallet.entries.map((e) => e.kind)).toEqual(['credit', 'hold', 'capture']);
  });

  it(`gives up on an operation interrupted ${MAX_ATTEMPTS} times: failed, hold released`, async () => {
    const { operation } = await renew.execute(KEY, { volumeId: 'vol_1', termMonths: 1 }, null);
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const op = (await operations.lock(operation.id))!;
      op.claim(`dead-${i}`, new Date(clock.now().getTime() + 1000), clock.now());
      await operations.save(op);
      clock.advance(1001);
    }
    expect(await advance.runOnce()).toEqual({ claimed: 1, succeeded: 0, failed: 1, skipped: 0 });
    expect((await operations.lock(operation.id))!.snapshot()).toMatchObject({
      status: 'failed',
      attempts: MAX_ATTEMPTS + 1,
      error: { code: 'internal', message: `The operation was abandoned after ${MAX_ATTEMPTS} interrupted attempts` },
    });
    expect((await volumes.findInOrg('org_1', 'vol_1'))!.expiresAt.toISOString()).toBe('2026-12-21T00:00:00.000Z');
    expect(wallet.entries.map((e) => e.kind)).toEqual(['credit', 'hold', 'release']);
  });
});
