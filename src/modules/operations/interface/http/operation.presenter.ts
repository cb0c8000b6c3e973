import { createHash } from 'node:crypto';

export { presentOperation } from '../../domain/operation-json';
export type { OperationJson } from '../../domain/operation-json';

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
