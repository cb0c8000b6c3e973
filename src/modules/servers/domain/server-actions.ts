import { DomainError, invalidRequest, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { OperationStep, OperationType } from '../../operations/domain/operation';
import { Server, ServerStatus } from './server';
import { suspendedError } from '../../prepaid/domain/suspension';

/** Live servers (not deleted; creating and deleting ones and seeded ones included) an organization may hold (servers.md). */
export const SERVER_QUOTA = 25;
/** At most this many distinct SSH keys are injected into a new server. */
export const MAX_SSH_KEYS = 10;
/** user_data: at most this many bytes of UTF-8. */
export const MAX_USER_DATA_BYTES = 32768;

/** 400 naming user_data unless it is at most 32768 bytes of UTF-8 without NUL; "" means none (null). */
export function checkUserData(value: string | undefined): string | null {
  if (value === undefined || value === '') return null;
  if (value.includes('\u0000')) throw invalidRequest('user_data must not contain NUL characters', { field: 'user_data' });
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_USER_DATA_BYTES) throw invalidRequest(`user_data must be at most ${MAX_USER_DATA_BYTES} bytes of UTF-8; got ${bytes}`, { field: 'user_data' });
  return value;
}

/** vm.create's steps: payment_reserved done at acceptance. */
export const createSteps = (): OperationStep[] => [
  { name: 'payment_reserved', status: 'succeeded' },
  { name: 'creating_instance', status: 'pending' },
  { name: 'booting', status: 'pending' },
  { name: 'ready', status: 'pending' },
];

export type PowerAction = 'vm.start' | 'vm.stop' | 'vm.reboot';

/** What each power action needs and does (servers.md statuses table): from, at acceptance, success, failure. */
export const POWER_ACTIONS: Record<PowerAction, { from: ServerStatus; during: ServerStatus; success: ServerStatus; failure: ServerStatus; verb: string }> = {
  'vm.start': { from: 'stopped', during: 'starting', success: 'running', failure: 'stopped', verb: 'started' },
  'vm.stop': { from: 'running', during: 'stopping', success: 'stopped', failure: 'running', verb: 'stopped' },
  'vm.reboot': { from: 'running', during: 'rebooting', success: 'running', failure: 'running', verb: 'rebooted' },
};

export function powerSteps(type: PowerAction, flag: boolean): OperationStep[] {
  const names =
    type === 'vm.start' ? ['powering_on', 'booting'] : type === 'vm.stop' ? [flag ? 'powering_off' : 'shutting_down'] : [flag ? 'resetting' : 'rebooting', 'booting'];
  return names.map((name) => ({ name, status: 'pending' }));
}

/** 409 invalid_state: the server has an unfinished vm.* or template.* operation (named in details.operation_id). */
export const serverBusy = (serverId: string, operationId: string): DomainError =>
  new DomainError('invalid_state', `Server ${serverId} has an operation pending or running (${operationId}); wait for it to end`, { operation_id: operationId });

/** 409 invalid_state unless the server is in `from` (a deleted one says so). */
export function assertStatus(server: Server, type: OperationType, from: readonly ServerStatus[]): void {
  if (server.deletedAt || server.status === 'deleted') throw invalidState(`Server ${server.id} is deleted`);
  if (server.status === 'suspended' && !from.includes('suspended')) throw suspendedError('Server', server.id, `run ${type}`);
  if (!from.includes(server.status)) {
    throw invalidState(`Server ${server.id} is ${server.status}; ${type} needs it ${from.join(' or ')}`);
  }
}

/** 409 quota_exceeded: the organization holds its limit of live servers (SERVER_QUOTA unless staff set another). */
export const serverQuotaReached = (limit: number = SERVER_QUOTA): DomainError =>
  new DomainError('quota_exceeded', `The organization already holds ${limit} servers that are not deleted (creating and deleting ones included); delete one first`, { limit });

/** A region without `vcpus` free vCPUs for a purchase of `planId` (409 out_of_stock). */
export const outOfVcpus = (regionId: string, vcpus: number, planId: string): DomainError =>
  new DomainError('out_of_stock', `Region ${regionId} has fewer than ${vcpus} free vCPUs for plan ${planId}`);

export const purchasesPaused = (regionId: string): DomainError =>
  new DomainError('purchases_paused', `Server purchases are paused in ${regionId} at the moment; nothing was reserved. Retry later`);

export const computeUnavailable = (): DomainError =>
  new DomainError('provider_unavailable', 'The compute provider is unavailable; nothing was recorded. Retry later');

/**
 * Whether an organization's image (`img_…`) may be installed on a server in `regionId` with a
 * boot disk of `diskGb` (plan `planId`): 404 when it is not the organization's or is deleted; 400
 * naming `image` when it is in another region; 409 invalid_state while it is being created or
 * deleted, or suspended (details.reason); 400 naming `plan` when the boot disk is smaller than the image.
 */
export function checkImageUsable(
  imageId: string,
  image: { regionId: string; diskGb: number; status: string } | undefined,
  target: { regionId: string; diskGb: number; planId: string | null },
): void {
  if (!image || image.status === 'deleted') throw notFound(`Image ${imageId} not found`);
  if (image.regionId !== target.regionId) {
    throw invalidRequest(`image ${imageId} is in region ${image.regionId}; a server in ${target.regionId} cannot be made from it`, { field: 'image' });
  }
  if (image.status === 'suspended') {
    throw new DomainError('invalid_state', `Image ${imageId} is suspended (its term ended); renew it to build servers from it`, { reason: 'suspended' });
  }
  if (image.status !== 'available') throw invalidState(`Image ${imageId} is ${image.status}; servers are made from available images only`);
  if (target.diskGb < image.diskGb) {
    throw invalidRequest(
      `plan ${target.planId ?? '(none)'} has a ${target.diskGb} GB boot disk, smaller than image ${imageId}'s ${image.diskGb} GB; choose a plan with at least ${image.diskGb} GB`,
      { field: 'plan' },
    );
  }
}
