import { loadSettings } from '../../src/shared/config/settings';
import { InMemoryAuditTrail } from '../../src/modules/audit/testing/in-memory-audit-trail';
import { Principal } from '../../src/modules/auth/domain/principal';
import { UpdateVolume } from '../../src/modules/volumes/application/update-volume.use-case';
import { Volume } from '../../src/modules/volumes/domain/volume';
import { InMemoryVolumeRepository } from '../../src/modules/volumes/testing/in-memory-volumes';
import { InMemoryUnitOfWork } from '../../src/shared/database/in-memory-unit-of-work';
import { Money } from '../../src/shared/kernel/money/money';
import { refusalOf } from '../support/assertions';

const volume = (over: Partial<Volume> = {}): Volume => ({
  id: 'vol_1', orgId: 'org_1', name: 'data', status: 'available', type: 'premium', regionId: 'id-jkt', zoneId: 'id-jkt-a', sizeGb: 10,
  server: null, mountPath: null, mounted: false, termMonths: 1, billing: Money.parse('0.2', 'USD'),
  price: { USD: Money.parse('0.02', 'USD'), IDR: Money.parse('320', 'IDR') }, expiresAt: new Date('2026-12-01T00:00:00Z'), note: null,
  labels: {}, deleteProtection: true, createdAt: new Date('2026-11-01T00:00:00Z'), deletedAt: null, ...over,
});
const session = (role: 'owner' | 'admin' | 'developer' | 'viewer'): Principal => ({
  kind: 'session', orgId: 'org_1', credentialId: 'ses_1', userId: `usr_${role}`, role, scopes: ['vm:read', 'vm:write'],
});
const KEY: Principal = { kind: 'api_key', orgId: 'org_1', credentialId: 'key_1', userId: null, role: null, scopes: ['vm:read', 'vm:write'] };

async function rejection(work: Promise<unknown>) {
  return work.then(
    () => {
      throw new Error('accepted');
    },
    (err: unknown) => refusalOf(() => {
      throw err;
    }),
  );
}

describe('UpdateVolume (in-memory adapters)', () => {
  let volumes: InMemoryVolumeRepository;
  let audit: InMemoryAuditTrail;
  let update: UpdateVolume;
  beforeEach(() => {
    volumes = new InMemoryVolumeRepository();
    audit = new InMemoryAuditTrail();
    update = new UpdateVolume(new InMemoryUnitOfWork(), volumes, audit, loadSettings({ NODE_ENV: 'test' }));
    volumes.put(volume());
    volumes.put(volume({ id: 'vol_2', name: 'taken' }));
  });

  it('turning protection off: developer 403 and nothing written; admin, owner and an API key may', async () => {
    expect(await rejection(update.execute(session('developer'), { volumeId: 'vol_1', deleteProtection: false, note: 'x' }, null))).toEqual({
      code: 'forbidden',
      message: 'Role developer may not turn delete_protection off; it needs one of: admin, owner',
      details: undefined,
    });
    expect(volumes.volumes.get('vol_1')).toEqual(volume());
    expect(audit.entries).toEqual([]);
    for (const who of [session('admin'), session('owner'), KEY]) {
      volumes.put(volume());
      expect((await update.execute(who, { volumeId: 'vol_1', deleteProtection: false }, '10.0.0.1')).deleteProtection).toBe(false);
    }
    expect(audit.entries.map((e) => [e.actorType, e.actorId, e.data])).toEqual([
      ['user', 'usr_admin', { changes: { delete_protection: { old: true, new: false } } }],
      ['user', 'usr_owner', { changes: { delete_protection: { old: true, new: false } } }],
      ['api_key', 'key_1', { changes: { delete_protection: { old: true, new: false } } }],
    ]);
  });

  it('a change to nothing writes no audit entry; a taken name is 409 conflict naming name; a deleted volume 409 invalid_state', async () => {
    expect(await update.execute(session('developer'), { volumeId: 'vol_1', name: 'data', labels: {}, deleteProtection: true }, null)).toEqual(volume());
    expect(audit.entries).toEqual([]);
    expect(await rejection(update.execute(KEY, { volumeId: 'vol_1', name: 'taken' }, null))).toEqual({
      code: 'conflict',
      message: 'The organization already has a volume named taken; names are unique among volumes not deleted',
      details: { field: 'name' },
    });
    volumes.put(volume({ id: 'vol_2', name: 'taken', status: 'deleted', deletedAt: new Date() }));
    expect((await update.execute(KEY, { volumeId: 'vol_1', name: 'taken' }, null)).name).toBe('taken');
    expect(await rejection(update.execute(KEY, { volumeId: 'vol_2', note: 'x' }, null))).toEqual({
      code: 'invalid_state', message: 'Volume vol_2 is deleted and cannot be changed', details: undefined,
    });
    expect(await rejection(update.execute(KEY, { volumeId: 'vol_9', note: 'x' }, null))).toEqual({ code: 'not_found', message: 'Volume vol_9 not found', details: undefined });
    expect(await rejection(update.execute(KEY, { volumeId: 'vol_9', labels: { A: 'x' } }, null))).toEqual(
      expect.objectContaining({ code: 'invalid_request', details: { field: 'labels.A' } }),
    );
  });
});
