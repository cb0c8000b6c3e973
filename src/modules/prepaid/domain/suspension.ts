import { DomainError } from '../../../shared/kernel/errors/domain-error';

/**
 * terms.md "Expiry: suspension": while a resource is suspended (its term ended, not renewed yet)
 * GET, PATCH, renew and DELETE work; every other action on it is 409 invalid_state with
 * `details.reason: "suspended"`.
 */
export const suspendedError = (kind: 'Server' | 'Volume', id: string, action: string): DomainError =>
  new DomainError('invalid_state', `${kind} ${id} is suspended (its term ended); renew it to ${action}`, { reason: 'suspended' });

/** 409 invalid_state with details.reason "suspended" when the resource is. */
export function assertNotSuspended(resource: { id: string; status: string }, kind: 'Server' | 'Volume', action: string): void {
  if (resource.status === 'suspended') throw suspendedError(kind, resource.id, action);
}
