import { Operation } from './operation';

/** The Operation of interface.md 2.3: volume_id for disk operations, deployment_id for template ones. */
export function presentOperation(operation: Operation) {
  const o = operation.snapshot();
  return {
    id: o.id,
    type: o.type,
    status: o.status,
    vm_id: o.vmId,
    ...(o.type.startsWith('volume.') ? { volume_id: o.volumeId } : {}),
    ...(o.type.startsWith('template.') ? { deployment_id: o.deploymentId } : {}),
    steps: o.steps.map((s) => ({ name: s.name, status: s.status })),
    result: o.result,
    error: o.error,
    created_at: o.createdAt.toISOString(),
    finished_at: o.finishedAt ? o.finishedAt.toISOString() : null,
  };
}

export type OperationJson = ReturnType<typeof presentOperation>;
