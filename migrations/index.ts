import { InitialSchema1763769600000 } from './1763769600000-initial-schema';
import { AccountsAuditLog1764000000130 } from './1764000000130-accounts-audit-log';

/** Every migration, in order. Listed as classes so ts (tests) and js (dist) load the same set. */
export const MIGRATIONS = [InitialSchema1763769600000, AccountsAuditLog1764000000130];
