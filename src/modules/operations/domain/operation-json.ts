import { Operation } from './operation';

/** The Operation of interface.md 2.3: volume_id for disk operations, deployment_id for template ones, snapshot_id for snapshot ones, image_id for image ones. */
export function presentOperation(operation: Operation) {
  const o = operation.snapshot();
  return {
    id: o.id,
    type: o.type,
    status: o.status,
    vm_id: o.vmId,
    ...(o.type.startsWith('volume.') ? { volume_id: o.volumeId } : {}),
    ...(o.type.startsWith('template.') ? { deployment_id: o.deploymentId } : {}),
    ...(o.type.startsWith('snapshot.') ? { snapshot_id: typeof o.params.snapshot_id === 'string' ? o.params.snapshot_id : null } : {}),
    ...(o.type.startsWith('image.') ? { image_id: typeof o.params.image_id === 'string' ? o.params.image_id : null } : {}),
    ...(o.type.startsWith('ip.') ? { reserved_ip_id: typeof o.params.reserved_ip_id === 'string' ? o.params.reserved_ip_id : null } : {}),
    steps: o.steps.map((s) => ({ name: s.name, status: s.status })),
    result: o.result,
    error: o.error,
    created_at: o.createdAt.toISOString(),
    finished_at: o.finishedAt ? o.finishedAt.toISOString() : null,
  };
}

export type OperationJson = ReturnType<typeof presentOperation>;

/**
 * A JSON value with its objects' members in the order PostgreSQL's jsonb keeps them (shorter
 * names first, then by their bytes): the order a stored result or error comes back in, so that
 * an Operation presented before it is read back (an event at commit) is byte for byte its GET.
 */
export function inJsonbOrder<T>(value: T): T {
  if (Array.isArray(value)) return value.map(inJsonbOrder) as T;
  if (!value || typeof value !== 'object') return value;
  const keys = Object.keys(value).sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return Object.fromEntries(keys.map((k) => [k, inJsonbOrder((value as Record<string, unknown>)[k])])) as T;
}
