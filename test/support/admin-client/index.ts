import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adminServerOf } from '../../../src/app.factory';
import { answerClientErrors } from '../../../src/shared/http/client-errors';
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
 * Opens a listener of its own for a test app's admin listener, on an ephemeral port of 127.0.0.1,
 * and gives its port. A test app's listeners are not listening (supertest opens and closes them per
 * request, and closing the public one closes the admin one), so this one hands every request to
 * the admin listener's handler, answers malformed requests as the admin listener does (the error
 * envelope), and is closed with the app.
 */
export async function openAdminListener(t: TestApp): Promise<number> {
  const admin = adminServerOf(t.app);
  if (!admin) throw new Error('the test app was started without an admin listener (adminPort)');
  const server = createServer((req, res) => admin.emit('request', req, res));
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = t.close.bind(t);
  t.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await close();
  };
  return (server.address() as AddressInfo).port;
}

/**
 * The generated admin client (test/support/admin-client/generated, from the admin API's own
 * OpenAPI document by `npm run admin:client`) bound to a test app's admin listener (through
 * openAdminListener). A route or member the document and the service disagree on fails the tests
 * that use it: the client only knows the document.
 */
export async function adminClient(t: TestApp): Promise<Client> {
  return createClient({ baseUrl: `http://127.0.0.1:${await openAdminListener(t)}` });
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
