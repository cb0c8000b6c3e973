import { AutoRenew, AutoRenewAttempt } from '../domain/auto-renew';
import { TermMonths } from '../domain/term';

/** The auto-renew columns a server or volume row carries (migration AutoRenew1764000000342). */
export interface AutoRenewRow {
  auto_renew_enabled?: boolean;
  auto_renew_term_months?: number | null;
  auto_renew_last_attempt?: AutoRenewAttempt | null;
  auto_renew_next_at?: Date | null;
}

/** The SELECT list of those columns for a table aliased `alias`. */
export const autoRenewColumns = (alias: string): string =>
  `${alias}.auto_renew_enabled, ${alias}.auto_renew_term_months, ${alias}.auto_renew_last_attempt, ${alias}.auto_renew_next_at`;

export function toAutoRenew(r: AutoRenewRow): AutoRenew {
  const enabled = r.auto_renew_enabled ?? false;
  return {
    enabled,
    termMonths: (r.auto_renew_term_months ?? null) as TermMonths | null,
    lastAttempt: r.auto_renew_last_attempt ?? null,
    nextAttemptAt: enabled ? (r.auto_renew_next_at ?? null) : null,
  };
}
