import { DomainError, invalidRequest } from '../../../shared/kernel/errors/domain-error';

/**
 * An order or a query naming a region that does not exist: 400 naming the member, with the ids
 * that would do in `details.valid` (every region, by id).
 */
export const unknownRegion = (regionId: string, valid: readonly string[], field = 'region'): DomainError =>
  invalidRequest(`${field} ${regionId} is no region; valid: ${[...valid].sort().join(', ') || 'none'}`, { field, valid: [...valid].sort() });

/**
 * A zone that does not exist: 400 naming the member, with the region's zones, by id, in
 * `details.valid`.
 */
export const unknownZone = (zoneId: string, regionId: string, valid: readonly string[], field = 'zone'): DomainError =>
  invalidRequest(`${field} ${zoneId} is no zone of region ${regionId}; valid: ${[...valid].sort().join(', ') || 'none'}`, { field, valid: [...valid].sort() });
