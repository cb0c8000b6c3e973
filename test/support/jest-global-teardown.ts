/** Jest globalTeardown: removes the run's cache (test-run-cache.ts). */
import { removeTestRunCache } from './test-run-cache';

export default function globalTeardown(): void {
  removeTestRunCache();
}
