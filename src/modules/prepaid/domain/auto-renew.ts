import { invalidRequest } from '../../../shared/kernel/errors/domain-error';
import { Currency } from '../../../shared/kernel/money/money';
import { TermMonths } from './term';

/**
 * Automatic renewal (terms.md), the same for every prepaid resource: when on, the term sweep
 * renews the resource from its wallet ahead of `expires_at`, as the customer's own renewal would.
 */

/** One automatic renewal attempt, as shown: accepted (its operation), or refused for want of money (the 402's details). */
export interface AutoRenewAttempt {
  at: string;
  outcome: 'accepted' | 'insufficient_balance';
  operation_id: string | null;
  required: string | null;
  available: string | null;
  currency: Currency | null;
}

export interface AutoRenew {
  enabled: boolean;
  /** null: the resource's own term_months at the time of the attempt. */
  termMonths: TermMonths | null;
  lastAttempt: AutoRenewAttempt | null;
  /** null unless enabled (and while an accepted renewal runs). */
  nextAttemptAt: Date | null;
}

export const AUTO_RENEW_OFF: AutoRenew = { enabled: false, termMonths: null, lastAttempt: null, nextAttemptAt: null };

/** The `auto_renew` member of a Server or Volume. */
export function presentAutoRenew(a: AutoRenew | undefined) {
  const v = a ?? AUTO_RENEW_OFF;
  return {
    enabled: v.enabled,
    term_months: v.termMonths,
    last_attempt: v.lastAttempt ? { ...v.lastAttempt } : null,
    next_attempt_at: v.nextAttemptAt ? v.nextAttemptAt.toISOString() : null,
  };
}

/** What is stored when auto-renew is set: on or off, its term, and AUTO_RENEW_LEAD_S (which schedules its attempts). */
export interface AutoRenewSetting {
  enabled: boolean;
  termMonths: TermMonths | null;
  leadS: number;
}

/** What a purchase or PATCH sets: `{enabled, term_months?}`. */
export interface AutoRenewInput {
  enabled: boolean;
  /** undefined: unchanged (PATCH) or null (purchase); null: the resource's own term. */
  termMonths?: TermMonths | null;
}

/**
 * `auto_renew` of a request body, or 400 naming `auto_renew`, `auto_renew.enabled`,
 * `auto_renew.term_months` or an unknown member. `terms`: the terms the resource may be renewed for.
 */
export function checkAutoRenew(value: unknown, terms: readonly number[]): AutoRenewInput {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest('auto_renew must be an object: {enabled, term_months?}', { field: 'auto_renew' });
  }
  const body = value as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (key !== 'enabled' && key !== 'term_months') {
      throw invalidRequest(`auto_renew.${key} is not a member of auto_renew (enabled, term_months)`, { field: `auto_renew.${key}` });
    }
  }
  if (typeof body.enabled !== 'boolean') {
    throw invalidRequest('auto_renew.enabled is required: true or false', { field: 'auto_renew.enabled' });
  }
  const term = body.term_months;
  if (term !== undefined && term !== null && !(typeof term === 'number' && terms.includes(term))) {
    throw invalidRequest(`auto_renew.term_months must be one of ${terms.join(', ')}, or null (the resource's own term)`, { field: 'auto_renew.term_months' });
  }
  return { enabled: body.enabled, ...(term !== undefined ? { termMonths: term as TermMonths | null } : {}) };
}

/**
 * What a PATCH's `auto_renew` changes on a resource whose auto-renew is `current`: the setting to
 * store and the audit diff (`{old, new}` of `{enabled, term_months}`), or undefined when nothing
 * changes. A `term_months` left out keeps the current one.
 */
export function autoRenewChange(current: AutoRenew | undefined, input: AutoRenewInput, leadS: number):
  { setting: AutoRenewSetting; diff: { old: { enabled: boolean; term_months: TermMonths | null }; new: { enabled: boolean; term_months: TermMonths | null } } } | undefined {
  const old = { enabled: current?.enabled ?? false, term_months: current?.termMonths ?? null };
  const next = { enabled: input.enabled, term_months: input.termMonths === undefined ? old.term_months : input.termMonths };
  if (next.enabled === old.enabled && next.term_months === old.term_months) return undefined;
  return { setting: { enabled: next.enabled, termMonths: next.term_months, leadS }, diff: { old, new: next } };
}
