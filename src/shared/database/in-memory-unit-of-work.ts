import { UnitOfWork } from './unit-of-work';

/** For unit tests with in-memory adapters: runs the work directly. */
export class InMemoryUnitOfWork extends UnitOfWork {
  run<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  /** In-memory adapters do not roll back: the work runs as is. */
  savepoint<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  /** In-memory adapters have no snapshots: the work runs as is. */
  readSnapshot<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }
}
