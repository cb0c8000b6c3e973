import { invalidRequest } from './domain-error';
/** The message of 400 invalid_request for a member a request body may not hold (details.field names it). */
export function unknownMemberMessage(field: string): string {
  return `${field} is not a member of this request body (check its spelling: unknown members are refused)`;
}

/** Refuses a member of a request body that the route does not read (details.field names it). */
export function refuseUnknownMembers(body: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!known.includes(key)) throw invalidRequest(unknownMemberMessage(key), { field: key });
  }
}
