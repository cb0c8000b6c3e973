import { OperationType } from '../domain/operation';

/** What the worker reports for metrics. */
export abstract class OperationsTelemetry {
  /** A claim took `size` operations (0 included). */
  abstract claimed(size: number): void;
  /** An operation of `type` ended, `seconds` after it was accepted. */
  abstract ended(type: OperationType, status: 'succeeded' | 'failed', seconds: number): void;
}

export class NoOperationsTelemetry extends OperationsTelemetry {
  claimed(): void {}
  ended(): void {}
}
