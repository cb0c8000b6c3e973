import { region } from './fixtures';

/** The demo catalog of servers.md: plans, images and a region's server offer, in the seed format. */
export const SERVER_PLANS = [
  { id: 'cx1', vcpus: 1, memory_gb: 2, disk_gb: 40 },
  { id: 'cx2', vcpus: 2, memory_gb: 4, disk_gb: 80 },
  { id: 'cx4', vcpus: 4, memory_gb: 8, disk_gb: 160 },
];
export const IMAGES = [
  { id: 'debian-12', name: 'Debian 12', type: 'system' },
  { id: 'docker-ce', name: 'Docker CE', type: 'app' },
  { id: 'ubuntu-24.04', name: 'Ubuntu 24.04', type: 'system' },
];

/** A region selling cx1, cx2, cx4 (USD 4.5/9/18, IDR 72000/144000/288000 a month) for 1, 3, 12 months with `vcpus` vCPUs. */
export function serverRegion(id = 'id-jkt', vcpus = 256, overrides: Record<string, unknown> = {}) {
  return region(id, {
    server_offer: {
      vcpu_capacity: vcpus,
      terms: [1, 3, 12],
      plans: [
        { plan: 'cx1', price_per_month: { USD: '4.50000', IDR: '72000' } },
        { plan: 'cx2', price_per_month: { USD: '9.00000', IDR: '144000' } },
        { plan: 'cx4', price_per_month: { USD: '18.00000', IDR: '288000' } },
      ],
    },
    ...overrides,
  });
}

/** Timestamps as the API writes them. */
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const OP_ID = /^op_[A-Za-z0-9_-]{20,}$/;
export const VM_ID = /^vm_[A-Za-z0-9_-]{20,}$/;
