import { Injectable } from '@nestjs/common';
import { JsonObject, Operation, OperationType } from '../domain/operation';

/**
 * Does the work of one type of operation. Implemented by the module that owns the resource
 * (volumes for volume.renew) and registered with OperationExecutors, so the worker stays generic.
 */
export interface OperationExecutor {
  readonly type: OperationType;
  /**
   * Runs inside the worker's transaction, which also marks the operation succeeded and captures
   * its hold. Returns the operation's result; throws (a DomainError names the code) to fail it,
   * and then everything it wrote is rolled back.
   */
  execute(operation: Operation): Promise<JsonObject>;
}

/** The executors by operation type. */
@Injectable()
export class OperationExecutors {
  private readonly byType = new Map<OperationType, OperationExecutor>();

  register(executor: OperationExecutor): void {
    if (this.byType.has(executor.type)) throw new Error(`An executor for ${executor.type} is registered already`);
    this.byType.set(executor.type, executor);
  }

  get(type: OperationType): OperationExecutor | undefined {
    return this.byType.get(type);
  }
}
