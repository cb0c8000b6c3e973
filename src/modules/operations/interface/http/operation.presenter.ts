import { createHash } from 'node:crypto';
import { Operation } from '../../domain/operation';

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

/** Strong ETag of an Operation representation, from its JSON text: a digest, so any change of any member changes it. */
export function operationEtag(json: string): string {
  return `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
}

/** If-None-Match (RFC 9110 13.1.2, weak comparison): `*`, or a list holding `etag` (with or without W/). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const bare = (tag: string): string => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}
