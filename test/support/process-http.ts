import { validatedFetch } from './openapi-validation';

/** One answer of a server process, as a black-box test reads it. */
export interface Answer {
  status: number;
  /** The JSON body, parsed (undefined when there is none). */
  body: any;
  /** The body as sent, byte for byte (what a replay must repeat). */
  text: string;
  headers: Headers;
}

/** The IDEMPOTENCY_SECRET the server processes of one test share: either can open the other's sealed answers. */
export const SHARED_IDEMPOTENCY_SECRET = 'two-processes-share-this-secret-0123456789';

/**
 * One request to a server process (`p.url`), its response validated against the OpenAPI document
 * that process serves (validatedFetch). `body` is sent as JSON, `rawBody` as given.
 */
export async function callProcess(
  p: { url: string },
  method: string,
  path: string,
  opts: { token?: string; org?: string; body?: unknown; rawBody?: string; idempotencyKey?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.idempotencyKey) headers['Idempotency-Key'] = opts.idempotencyKey;
  if (opts.org) headers['X-Org-ID'] = opts.org;
  const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await validatedFetch(`${p.url}${path}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text, headers: res.headers };
}
