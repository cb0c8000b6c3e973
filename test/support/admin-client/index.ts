import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adminServerOf } from '../../../src/app.factory';
import type { TestApp } from '../test-app';
import { type Client, createClient } from './generated/client';

export * as adminApi from './generated/sdk.gen';

/** What a test reads of an answer of the generated client: as supertest shows it (status, parsed body, lower-case headers). */
export interface AdminAnswer {
  status: number;
  /** The parsed JSON body: a test asserts its whole shape with toEqual. */
  body: any;
  headers: Record<string, string>;
}

/**
 * The generated admin client (test/support/admin-client/generated, from the admin API's own
 * OpenAPI document by `npm run admin:client`) bound to a test app's admin listener. A test app's
 * listeners are not listening (supertest opens and closes them per request, and closing the public
 * one closes the admin one), so the client gets a listener of its own on an ephemeral port of
 * 127.0.0.1 that hands every request to the admin listener's handler, closed with the app. A route
 * or member the document and the service disagree on fails the tests that use it: the client only
 * knows the document.
 */
export async function adminClient(t: TestApp): Promise<Client> {
  const admin = adminServerOf(t.app);
  if (!admin) throw new Error('the test app was started without an admin listener (adminPort)');
  const server = createServer((req, res) => admin.emit('request', req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = t.close.bind(t);
  t.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await close();
  };
  const { port } = server.address() as AddressInfo;
  return createClient({ baseUrl: `http://127.0.0.1:${port}` });
}

/** An answer of the generated client as an AdminAnswer: the body is the parsed JSON (data or error alike). */
export async function answer(call: Promise<{ data?: unknown; error?: unknown; response?: Response }>): Promise<AdminAnswer> {
  const result = await call;
  const response = result.response;
  if (!response) throw new Error(`no HTTP answer from the admin listener: ${String(((result.error as Error)?.cause as Error)?.stack ?? result.error)}`);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  const body = response.ok ? result.data : result.error;
  return { status: response.status, body: body === '' ? {} : body, headers };
}
