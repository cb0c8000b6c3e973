import { Injectable } from '@nestjs/common';

/**
 * Tells the parts of the application that hold work open (the worker's claims, long-poll
 * requests) that a graceful shutdown has begun, before the HTTP drain waits for requests in
 * flight: the worker stops claiming, long-polls answer at once.
 */
@Injectable()
export class ShutdownNotice {
  private begun = false;
  private readonly listeners = new Set<() => void>();

  get shuttingDown(): boolean {
    return this.begun;
  }

  /** Called once by the signal handler; later calls do nothing. */
  begin(): void {
    if (this.begun) return;
    this.begun = true;
    for (const listener of [...this.listeners]) listener();
    this.listeners.clear();
  }

  /** Calls `listener` when shutdown begins (at once if it has). Returns a function that unsubscribes. */
  onBegin(listener: () => void): () => void {
    if (this.begun) {
      listener();
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
