import { Injectable } from '@nestjs/common';
import { invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { Principal } from '../../auth/domain/principal';
import { VolumeType } from '../../options/domain/catalog';
import { Volume, VolumeFilter, VolumeStatus } from '../domain/volume';
import { parseLabelSelector } from '../../prepaid/domain/labels';
import { VolumeRepository } from './volumes.port';

/** GET /v1/volumes as sent (the HTTP layer has checked types, enums and the name rule). */
export interface ListVolumesInput {
  limit?: string;
  cursor?: string;
  region?: string;
  zone?: string;
  type?: VolumeType;
  status?: VolumeStatus;
  serverId?: string;
  name?: string;
  /** `key=value`, once or repeated. */
  label?: string | string[];
  /** ISO 8601 date-time with a zone (or a date: midnight UTC). */
  expiresBefore?: string;
  /** `true` or `false` (checked by the HTTP layer). */
  autoRenew?: string;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/** `expires_before`: an ISO 8601 date-time with Z or an offset, or a date (midnight UTC); else 400 naming it. */
export function parseInstant(text: string, field: string): Date {
  const bad = () => invalidRequest(`${field} must be an ISO 8601 date-time with a time zone, such as 2026-12-31T00:00:00Z, or a date`, { field });
  if (!ISO_INSTANT.test(text)) throw bad();
  // A real calendar day (no Feb 30): JavaScript would roll it over silently.
  const [y, m, d] = text.slice(0, 10).split('-').map(Number);
  const day = new Date(Date.UTC(y, m - 1, d));
  if (y < 1 || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) throw bad();
  const date = new Date(text.length === 10 ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(date.getTime())) throw bad();
  return date;
}

/** The caller's volumes: one by id (deleted ones included), or a filtered page. */
@Injectable()
export class VolumeQueries {
  constructor(private readonly volumes: VolumeRepository) {}

  async get(principal: Principal, id: string): Promise<Volume> {
    const volume = await this.volumes.findInOrg(principal.orgId, id);
    if (!volume) throw notFound(`Volume ${id} not found`);
    return volume;
  }

  /**
   * Newest first; without `status` the volumes not deleted, `status=deleted` the deleted ones.
   * A cursor is a position in that order: used with other filters, the listing goes on after
   * that position under the new filters.
   */
  async list(principal: Principal, input: ListVolumesInput): Promise<{ volumes: Volume[]; nextCursor: string | null }> {
    const limit = parseLimit(input.limit);
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const selectors = input.label === undefined ? [] : Array.isArray(input.label) ? input.label : [input.label];
    const filter: VolumeFilter = {
      regionId: input.region,
      zoneId: input.zone,
      type: input.type,
      status: input.status,
      serverId: input.serverId,
      name: input.name,
      labels: selectors.map((s) => parseLabelSelector(s)),
      expiresBefore: input.expiresBefore === undefined ? undefined : parseInstant(input.expiresBefore, 'expires_before'),
      autoRenew: input.autoRenew === undefined ? undefined : input.autoRenew === 'true',
    };
    const page = await this.volumes.listInOrg(principal.orgId, { limit, after, filter });
    return { volumes: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}
