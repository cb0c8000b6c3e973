/** Resources a reconciliation sweep reads from the database at a time. */
export const RECONCILE_SWEEP_PAGE = 200;

/** What a reconciliation sweep of one resource kind (volumes with their disks, servers with their instances) gives the shared loop. */
export interface ReconcileSweep {
  /** A page of the kind's settled resources (live, no operation in flight) whose id comes after `after`, by id. */
  settledAfter(after: string, limit: number): Promise<{ id: string; orgId: string }[]>;
  /** Compares one resource with the provider's truth and repairs what differs; whether it repaired anything. */
  reconcile(orgId: string, id: string): Promise<boolean>;
  /** A resource that could not be reconciled (the provider unreadable, a lost connection): the next sweep tries again. */
  skipped(id: string, err: unknown): void;
}

/**
 * The reconciliation sweeps' loop, one for every resource kind: the settled resources a page at a
 * time, each reconciled on its own (an error skips that one only), stopping between two resources
 * once `stopping()` says so. Returns how many were repaired.
 */
export async function reconcileSettled(sweep: ReconcileSweep, stopping: () => boolean, pageSize = RECONCILE_SWEEP_PAGE): Promise<number> {
  let repaired = 0;
  let after = '';
  while (!stopping()) {
    const page = await sweep.settledAfter(after, pageSize);
    if (page.length === 0) break;
    after = page[page.length - 1].id;
    for (const { id, orgId } of page) {
      if (stopping()) break;
      try {
        if (await sweep.reconcile(orgId, id)) repaired += 1;
      } catch (err) {
        sweep.skipped(id, err);
      }
    }
    if (page.length < pageSize) break;
  }
  return repaired;
}
