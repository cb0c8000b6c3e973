/** Wake-ups of the delivery workers: sent in the transaction that made deliveries due, received once it commits (every process). */
export abstract class WebhookSignals {
  /** In the transaction that made deliveries due: wakes the delivery workers once it commits. */
  abstract announce(): void;
  /** Calls `listener` whenever deliveries may have become due. Returns a function that unsubscribes. */
  abstract onWork(listener: () => void): () => void;
}
