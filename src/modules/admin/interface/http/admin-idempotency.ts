import type { Request } from 'express';
import { invalidRequest } from '../../../../shared/kernel/errors/domain-error';
import { IdempotencyScope } from '../../../idempotency/domain/idempotency';
import { IDEMPOTENCY_KEY_HEADER, idempotencyScope } from '../../../idempotency/interface/http/idempotent-request';

/**
 * Every admin write carries an Idempotency-Key (admin.md; 400 naming it without): its record is
 * kept under the staff member ('staff:<id>'), apart from every customer's keys.
 */
export function adminIdempotencyScope(req: Request): IdempotencyScope {
  if (req.headers['idempotency-key'] === undefined) {
    throw invalidRequest(`${IDEMPOTENCY_KEY_HEADER} is required on every admin write`, { field: IDEMPOTENCY_KEY_HEADER });
  }
  if (!req.staff) throw new Error('adminIdempotencyScope used on a route without the admin guard');
  return { ...idempotencyScope(req, `staff:${req.staff.staffId}`)!, caller: `staff:${req.staff.staffId}` };
}
