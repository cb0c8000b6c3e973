import { assertNotSuspended } from '../../prepaid/domain/suspension';
import { DomainError, invalidRequest, invalidState } from '../../../shared/kernel/errors/domain-error';
import { OperationStep } from '../../operations/domain/operation';
import { Volume } from './volume';

/**
 * The rules of buying, attaching, detaching and deleting a disk that need no database
 * (lifecycle.md "Buying" and "Attach, detach, delete, edit").
 */

export const MAX_MOUNT_PATH_LENGTH = 255;
export const MOUNT_PATH_RULE = `an absolute path: "/" followed by at most ${MAX_MOUNT_PATH_LENGTH - 1} characters, no NUL, no "." or ".." segment`;

/** The mount path, or 400 naming `field`: absolute, at most 255 characters, no "." or ".." segment. */
export function checkMountPath(value: unknown, field = 'mount_path'): string {
  if (typeof value !== 'string') throw invalidRequest(`${field} must be a string: ${MOUNT_PATH_RULE}`, { field });
  const segments = value.split('/').slice(1);
  if (!value.startsWith('/') || value.length > MAX_MOUNT_PATH_LENGTH || value.includes('\u0000') || segments.some((s) => s === '.' || s === '..')) {
    throw invalidRequest(`${field} must be ${MOUNT_PATH_RULE}; got ${JSON.stringify(value.slice(0, 80))}`, { field });
  }
  return value;
}

/** Where a disk is mounted when the caller names no path: `/mnt/<name>`. */
export const defaultMountPath = (name: string): string => `/mnt/${name}`;

const pending = (name: string): OperationStep => ({ name, status: 'pending' });

/** volume.create: payment_reserved (done at acceptance), creating_volume (restoring, from a snapshot), attaching (with a server), ready. */
export function purchaseSteps(withServer: boolean, restore = false): OperationStep[] {
  return [
    { name: 'payment_reserved', status: 'succeeded' },
    pending(restore ? 'restoring' : 'creating_volume'),
    ...(withServer ? [pending('attaching')] : []),
    pending('ready'),
  ];
}
export const attachSteps = (): OperationStep[] => [pending('attaching'), pending('mounting')];
export const detachSteps = (): OperationStep[] => [pending('unmounting'), pending('detaching')];
/** volume.delete: unmounting and detaching only when the disk is attached, then deleting. */
export const deleteSteps = (detach: boolean): OperationStep[] => [
  ...(detach ? [pending('unmounting'), pending('detaching')] : []),
  pending('deleting'),
];

/** 409 invalid_state naming the unfinished operation in the way (details.operation_id). */
export function operationInTheWay(volumeId: string, operationId: string): DomainError {
  return new DomainError(
    'invalid_state',
    `Volume ${volumeId} already has an operation pending or running (${operationId}); wait for it to end`,
    { operation_id: operationId },
  );
}

/** 409 invalid_state: the volume's server is being deleted; details.operation_id names its vm.delete (when it still runs). */
export function serverBeingDeleted(volume: Volume, operationId: string | null): DomainError {
  return new DomainError(
    'invalid_state',
    `Volume ${volume.id} is on server ${volume.server?.id}, which is being deleted${operationId ? ` (${operationId})` : ''}; the deletion detaches it`,
    operationId ? { operation_id: operationId } : {},
  );
}

/** 409 quota_exceeded: the server holds its offer's limit of data disks (counting those on their way). */
export function serverFull(serverId: string, limit: number): DomainError {
  return new DomainError(
    'quota_exceeded',
    `Server ${serverId} already holds ${limit} data disks (the limit), counting attaches and purchases still in progress`,
    { limit, server_id: serverId },
  );
}

/** Attach: the volume must be available (detached and ready). */
export function assertAttachable(volume: Volume): void {
  assertNotSuspended(volume, 'Volume', 'attach it');
  if (volume.status !== 'available') {
    throw invalidState(`Volume ${volume.id} is ${volume.status}; only an available (detached) volume can be attached`);
  }
}

/** Detach: the volume must be attached. */
export function assertDetachable(volume: Volume): void {
  assertNotSuspended(volume, 'Volume', 'detach it');
  if (volume.status !== 'attached') {
    throw invalidState(`Volume ${volume.id} is ${volume.status}; only an attached volume can be detached`);
  }
}

/**
 * Delete: not already deleting or deleted, not protected, and not attached unless the caller
 * asked for the detach (?detach=true). Returns whether the delete detaches first. The caller
 * checks the unfinished operation in between (the order of the messages below is the order of lifecycle.md).
 */
export function assertDeletable(volume: Volume, detach: boolean): { detachFirst: boolean } {
  if (volume.status === 'deleting' || volume.status === 'deleted' || volume.deletedAt) {
    throw invalidState(`Volume ${volume.id} is ${volume.status === 'deleting' ? 'already being deleted' : 'deleted'}`);
  }
  if (volume.deleteProtection) {
    throw invalidState(`Volume ${volume.id} has delete_protection on; turn it off (PATCH) before deleting it`);
  }
  if (volume.status === 'attached' && !detach) {
    throw invalidState(`Volume ${volume.id} is attached to server ${volume.server?.id}; detach it first or delete with ?detach=true`);
  }
  return { detachFirst: volume.status === 'attached' };
}
