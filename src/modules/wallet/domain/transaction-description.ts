/** What a ledger row was for, as the description needs it (read with the row; null for credits). */
export interface TransactionSubject {
  /** The operation's type, such as volume.renew. */
  operationType: string;
  /** The months bought or renewed (the operation's params); null when it has none. */
  termMonths: number | null;
  /** The disk's or server's name as it is now; null when none is known. */
  name: string | null;
  /** The disk's or server's id; null when none is known. */
  targetId: string | null;
}

const WHAT: Record<string, [string, 'disk' | 'server' | 'snapshot' | 'image']> = {
  'volume.create': ['Purchase', 'disk'],
  'volume.renew': ['Renewal', 'disk'],
  'vm.create': ['Purchase', 'server'],
  'vm.renew': ['Renewal', 'server'],
  'snapshot.create': ['Purchase', 'snapshot'],
  'snapshot.renew': ['Renewal', 'snapshot'],
  'image.create': ['Purchase', 'image'],
  'image.renew': ['Renewal', 'image'],
  'volume.resize': ['Resize', 'disk'],
  'vm.resize': ['Plan change', 'server'],
};

const months = (n: number): string => (n === 1 ? '1 month' : `${n} months`);

/** "Renewal of disk data-1 for 1 month": the charge an operation stands for. */
function charge(s: TransactionSubject): string {
  const known = WHAT[s.operationType];
  const [action, noun] = known ?? ['Charge for', s.operationType.startsWith('vm.') ? 'server' : s.operationType.startsWith('volume.') ? 'disk' : 'operation'];
  const target = s.name ?? s.targetId;
  const base = known ? `${action} of ${noun}${target ? ` ${target}` : ''}` : `${action} ${s.operationType}${target ? ` of ${noun} ${target}` : ''}`;
  return s.termMonths !== null ? `${base} for ${months(s.termMonths)}` : base;
}

/**
 * The line a customer reads on a statement for one wallet transaction: a credit names its source
 * (a top-up and its reference, or the operator); a capture is the charge itself ("Renewal of disk
 * data-1 for 1 month"); a hold reserves for it; a release gives the reservation back; a staff
 * adjustment or a refund of a top-up gives its reason.
 */
export function describeTransaction(t: {
  type: 'credit' | 'hold' | 'capture' | 'release' | 'adjustment_credit' | 'adjustment_debit' | 'refund';
  topUpId: string | null;
  operationId: string | null;
  subject: TransactionSubject | null;
  /** An adjustment's or a refund's reason, as the staff gave it. */
  reason?: string | null;
}): string {
  if (t.type === 'adjustment_credit' || t.type === 'adjustment_debit') {
    return `${t.type === 'adjustment_credit' ? 'Credit' : 'Debit'} by support${t.reason ? `: ${t.reason}` : ''}`;
  }
  if (t.type === 'refund') return `Refund of top-up ${t.topUpId ?? 'unknown'}${t.reason ? `: ${t.reason}` : ''}`;
  if (t.type === 'credit') return t.topUpId !== null ? `Top-up ${t.topUpId}` : 'Credit added by the operator';
  const what = t.subject ? charge(t.subject) : `Operation ${t.operationId ?? 'unknown'}`;
  if (t.type === 'capture') return what;
  const lower = what.charAt(0).toLowerCase() + what.slice(1);
  return t.type === 'hold' ? `Reserved for ${lower}` : `Reservation released (not charged): ${lower}`;
}
