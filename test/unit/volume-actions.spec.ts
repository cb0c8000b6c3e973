import { Money } from '../../src/shared/kernel/money/money';
import { Volume } from '../../src/modules/volumes/domain/volume';
import {
  assertAttachable, assertDeletable, assertDetachable, checkMountPath, defaultMountPath, deleteSteps, purchaseSteps,
} from '../../src/modules/volumes/domain/volume-actions';
import { refusalOf } from '../support/assertions';

const volume = (over: Partial<Volume> = {}): Volume => ({
  id: 'vol_1', orgId: 'org_1', name: 'data-1', status: 'available', type: 'premium', regionId: 'id-jkt', zoneId: 'id-jkt-a', sizeGb: 100,
  server: null, mountPath: null, mounted: false, termMonths: 1, billing: Money.parse('2.00000', 'USD'),
  price: { USD: Money.parse('0.02000', 'USD'), IDR: Money.parse('320', 'IDR') }, expiresAt: new Date('2026-12-21T00:00:00Z'),
  note: null, labels: {}, deleteProtection: false, createdAt: new Date('2026-11-21T00:00:00Z'), deletedAt: null, ...over,
});
const attached = (over: Partial<Volume> = {}) => volume({ status: 'attached', server: { id: 'vm_1', name: 'web' }, mountPath: '/mnt/d', mounted: true, ...over });

describe('volume actions (domain)', () => {
  it('mount paths: absolute, at most 255 characters, no . or .. segment; the default is /mnt/<name>', () => {
    for (const ok of ['/', '/mnt/data', '/srv/my data', `/${'a'.repeat(254)}`, '/a/.hidden/b']) expect(checkMountPath(ok)).toBe(ok);
    for (const bad of ['mnt', '', './x', '/a/../b', '/a/./b', '/..', `/${'a'.repeat(255)}`, '/a\u0000b']) {
      expect(refusalOf(() => checkMountPath(bad))).toEqual(expect.objectContaining({ code: 'invalid_request', details: { field: 'mount_path' } }));
    }
    expect(refusalOf(() => checkMountPath(5))).toEqual(expect.objectContaining({ details: { field: 'mount_path' } }));
    expect(defaultMountPath('db-1')).toBe('/mnt/db-1');
  });

  it('steps of a purchase with and without a server, of a delete with and without a detach', () => {
    expect(purchaseSteps(false).map((s) => `${s.name}:${s.status}`)).toEqual(['payment_reserved:succeeded', 'creating_volume:pending', 'ready:pending']);
    expect(purchaseSteps(true).map((s) => s.name)).toEqual(['payment_reserved', 'creating_volume', 'attaching', 'ready']);
    expect(deleteSteps(true).map((s) => s.name)).toEqual(['unmounting', 'detaching', 'deleting']);
    expect(deleteSteps(false).map((s) => s.name)).toEqual(['deleting']);
  });

  it('attach needs available, detach needs attached', () => {
    expect(() => assertAttachable(volume())).not.toThrow();
    for (const status of ['creating', 'attached', 'deleting', 'deleted'] as const) {
      expect(refusalOf(() => assertAttachable(volume({ status })))).toEqual(expect.objectContaining({ code: 'invalid_state' }));
    }
    expect(() => assertDetachable(attached())).not.toThrow();
    expect(refusalOf(() => assertDetachable(volume())).message).toBe('Volume vol_1 is available; only an attached volume can be detached');
  });

  it('delete: refused when deleting, deleted, protected, or attached without detach; detaches first when attached', () => {
    expect(assertDeletable(volume(), false)).toEqual({ detachFirst: false });
    expect(assertDeletable(volume(), true)).toEqual({ detachFirst: false });
    expect(assertDeletable(attached(), true)).toEqual({ detachFirst: true });
    expect(refusalOf(() => assertDeletable(attached(), false)).message).toBe('Volume vol_1 is attached to server vm_1; detach it first or delete with ?detach=true');
    expect(refusalOf(() => assertDeletable(volume({ deleteProtection: true }), false)).message).toBe('Volume vol_1 has delete_protection on; turn it off (PATCH) before deleting it');
    expect(refusalOf(() => assertDeletable(volume({ status: 'deleting' }), true)).message).toBe('Volume vol_1 is already being deleted');
    expect(refusalOf(() => assertDeletable(volume({ status: 'deleted', deletedAt: new Date() }), true)).message).toBe('Volume vol_1 is deleted');
  });
});
