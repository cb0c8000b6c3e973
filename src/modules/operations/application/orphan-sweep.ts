import { Logger } from '@nestjs/common';

/** What a provider holds that the orphan sweeps read a page at a time (BlockStorage.listDisks, ComputeProvider.listInstances, ...). */
export const ORPHAN_SWEEP_PAGE = 500;

/** One page of a provider's listing: the things whose key is greater than `after` (all when unset), at most `limit`, ordered by key. */
export interface SweepPage {
  after?: string;
  limit: number;
}

/** What one kind of orphan sweep walks and deletes, and how its log lines name it. */
export interface OrphanKind<T> {
  /** The log line of a delete, e.g. `deleted the disk of a deleted volume at the provider`. */
  deleted: string;
  /** The log line of a failed delete, e.g. `could not delete an orphan disk; the next sweep tries again`. */
  failed: string;
  /** One page of the provider's live things, ordered by key. */
  list(page: SweepPage): Promise<T[]>;
  /** The service's id the thing belongs to (the volume, the server, the snapshot, the image): the page key. */
  key(item: T): string;
  /** Of these keys, those with no live owner and no unfinished operation naming them. */
  goneAmong(keys: readonly string[]): Promise<string[]>;
  /** Deletes it at the provider (idempotent: deleting one already gone succeeds). */
  remove(item: T): Promise<void>;
  /** The fields that name it in the log lines. */
  fields(item: T): Record<string, string>;
}

/**
 * The loop every orphan sweep shares (the disks and snapshots of the storage provider, the
 * instances and images of the compute provider): it reads the provider's truth first, a page at a
 * time (memory stays bounded however many there are), asks the service which of that page have no
 * live owner and no unfinished operation naming them (`goneAmong`), and deletes those at the
 * provider, each by an idempotent call (two processes sweeping at once delete it once there). It
 * holds no database connection while it calls the provider, stops between two deletes once
 * `stopping()` says so, logs each delete (and each failed one, left for the next sweep) and returns
 * how many it deleted. A provider that cannot list throws (the job logs it; nothing is touched).
 * Each kind's use case extends it with its OrphanKind.
 */
export abstract class OrphanSweep<T> {
  private readonly logger: Logger;

  protected constructor(
    context: string,
    private readonly kind: OrphanKind<T>,
  ) {
    this.logger = new Logger(context);
  }

  async execute(stopping: () => boolean = () => false, pageSize = ORPHAN_SWEEP_PAGE): Promise<number> {
    const k = this.kind;
    let deleted = 0;
    let after: string | undefined;
    while (!stopping()) {
      const items = await k.list({ after, limit: pageSize });
      if (items.length === 0) break;
      after = k.key(items[items.length - 1]);
      const gone = new Set(await k.goneAmong(items.map((i) => k.key(i))));
      for (const item of items.filter((i) => gone.has(k.key(i)))) {
        if (stopping()) break;
        try {
          await k.remove(item);
          deleted += 1;
          this.logger.log({ msg: k.deleted, ...k.fields(item) });
        } catch (err) {
          this.logger.warn({ msg: k.failed, ...k.fields(item), err: err instanceof Error ? err.message : String(err) });
        }
      }
      if (items.length < pageSize) break;
    }
    return deleted;
  }
}
