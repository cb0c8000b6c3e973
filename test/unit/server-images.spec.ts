import { checkImageUsable } from '../../src/modules/servers/domain/server-actions';
import { ServerImage, checkImageName, imageAmount, quoteImageRenewal } from '../../src/modules/images/domain/image';
import { InMemoryComputeProvider } from '../../src/modules/servers/testing/in-memory-compute-provider';
import { Money, pricePairOfMinor } from '../../src/shared/kernel/money/money';
import { refusalOf } from '../support/assertions';

const PRICE = pricePairOfMinor('1000', '160'); // USD 0.01000, IDR 160 per GB-month

const image = (over: Partial<ServerImage> = {}): ServerImage => ({
  id: 'img_1', orgId: 'org_a', name: 'golden', status: 'available', fromServerId: 'vm_1', regionId: 'id-jkt', diskGb: 80, os: 'debian-12',
  termMonths: 1, billing: Money.ofMinor('USD', 80000n), price: PRICE, expiresAt: new Date('2026-12-23T10:00:00Z'),
  autoRenew: { enabled: false, termMonths: null }, labels: {}, operationId: null, createdAt: new Date('2026-11-23T10:00:00Z'),
  deletedAt: null, suspendedAt: null, releaseAt: null, deletedReason: null, ...over,
});

describe('server images: price, renewal, names', () => {
  it('charges disk_gb × the snapshot price × term, exactly, in either currency', () => {
    expect(imageAmount(PRICE, 'USD', 1, 80).format()).toBe('0.80000');
    expect(imageAmount(PRICE, 'IDR', 3, 80).format()).toBe('38400');
    expect(imageAmount(PRICE, 'USD', 12, 40).format()).toBe('4.80000');
  });

  it('a renewal is quoted at the frozen price; refused while creating, deleting, deleted or busy', () => {
    expect(quoteImageRenewal(image(), 3).amount.format()).toBe('2.40000');
    expect(quoteImageRenewal(image({ status: 'suspended' }), 1, 'IDR').amount.format()).toBe('12800');
    for (const status of ['creating', 'deleting', 'deleted'] as const) expect(refusalOf(() => quoteImageRenewal(image({ status }), 1)).code).toBe('invalid_state');
    expect(refusalOf(() => quoteImageRenewal(image({ operationId: 'op_1' }), 1))).toEqual({
      code: 'invalid_state', message: 'Image img_1 has an unfinished operation op_1; wait for it to end', details: { operation_id: 'op_1' },
    });
  });

  it('names: 1 to 64 of letters, digits, ".", "_", "-", starting with a letter or digit; 400 naming the field', () => {
    expect(checkImageName('web.golden_2-a')).toBe('web.golden_2-a');
    expect(refusalOf(() => checkImageName('-x'))).toMatchObject({ code: 'invalid_request', details: { field: 'name' } });
    expect(refusalOf(() => checkImageName('a'.repeat(65)))).toMatchObject({ code: 'invalid_request', details: { field: 'name' } });
  });
});

describe('checkImageUsable: an organization image for a purchase or rebuild', () => {
  const target = { regionId: 'id-jkt', diskGb: 80, planId: 'cx2' };
  const usable = { regionId: 'id-jkt', diskGb: 80, status: 'available' };

  it('accepts an available image of the region no larger than the boot disk', () => {
    expect(() => checkImageUsable('img_1', usable, target)).not.toThrow();
    expect(() => checkImageUsable('img_1', usable, { ...target, diskGb: 160, planId: 'cx4' })).not.toThrow();
  });

  it('refuses in this order: 404 (none, deleted), 400 naming image (another region), 409 (suspended with reason; creating, deleting), 400 naming plan (too small)', () => {
    expect(refusalOf(() => checkImageUsable('img_1', undefined, target))).toMatchObject({ code: 'not_found', message: 'Image img_1 not found' });
    expect(refusalOf(() => checkImageUsable('img_1', { ...usable, status: 'deleted' }, target)).code).toBe('not_found');
    expect(refusalOf(() => checkImageUsable('img_1', { ...usable, regionId: 'sg-sin', diskGb: 160 }, target))).toEqual({
      code: 'invalid_request', message: 'image img_1 is in region sg-sin; a server in id-jkt cannot be made from it', details: { field: 'image' },
    });
    expect(refusalOf(() => checkImageUsable('img_1', { ...usable, status: 'suspended', diskGb: 160 }, target))).toEqual({
      code: 'invalid_state', message: 'Image img_1 is suspended (its term ended); renew it to build servers from it', details: { reason: 'suspended' },
    });
    for (const status of ['creating', 'deleting']) expect(refusalOf(() => checkImageUsable('img_1', { ...usable, status }, target)).code).toBe('invalid_state');
    expect(refusalOf(() => checkImageUsable('img_1', usable, { ...target, diskGb: 40, planId: 'cx1' }))).toEqual({
      code: 'invalid_request',
      message: "plan cx1 has a 40 GB boot disk, smaller than image img_1's 80 GB; choose a plan with at least 80 GB",
      details: { field: 'plan' },
    });
  });
});

describe('InMemoryComputeProvider: server images', () => {
  const create = {
    serverId: 'vm_1', step: 'op_1/creating_instance', zoneId: 'id-jkt-a', vcpus: 2, memoryGb: 4, diskGb: 80, image: 'debian-12', sshPublicKeys: [], userData: null,
  };

  it('copies a live instance once per image id (called again, the same copy); deleted, it is gone and never made again; deleting again succeeds', async () => {
    const p = new InMemoryComputeProvider();
    await p.createInstance(create);
    const made = await p.createImage({ imageId: 'img_1', step: 'op_2/imaging', serverId: 'vm_1' });
    expect(made).toMatchObject({ imageId: 'img_1', serverId: 'vm_1', zoneId: 'id-jkt-a', diskGb: 80, sourceImage: 'debian-12' });
    expect(await p.createImage({ imageId: 'img_1', step: 'op_2/imaging', serverId: 'vm_1' })).toEqual(made);
    expect(await p.getImage('img_1')).toEqual(made);
    expect(await p.listServerImages()).toEqual([made]);
    await p.deleteImage({ imageId: 'img_1', step: 'op_3/deleting' });
    await p.deleteImage({ imageId: 'img_1', step: 'op_3/deleting' });
    expect(await p.getImage('img_1')).toBeNull();
    expect(await p.listServerImages()).toEqual([]);
    await expect(p.createImage({ imageId: 'img_1', step: 'op_4/imaging', serverId: 'vm_1' })).rejects.toMatchObject({ code: 'invalid_state' });
  });

  it('a server without a live instance cannot be imaged', async () => {
    const p = new InMemoryComputeProvider();
    await expect(p.createImage({ imageId: 'img_2', step: 'op_1/imaging', serverId: 'vm_none' })).rejects.toMatchObject({
      code: 'invalid_state', message: 'The compute provider has no instance for server vm_none',
    });
  });
});
