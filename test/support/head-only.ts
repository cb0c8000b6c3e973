import type { Server } from 'node:http';
import { AddressInfo, connect } from 'node:net';

/**
 * Sends a request head (and `partialBody`) on a raw socket, never the rest of the declared body;
 * resolves with the raw answer, or 'no answer' after `waitMs`. A server that waited for the
 * declared body before answering does not answer.
 */
export async function headOnly(server: Server, head: string, partialBody = '', waitMs = 3000): Promise<string> {
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(text || 'no answer');
    }, waitMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text);
      if (end >= 0 && length && text.length >= end + 4 + Number(length[1])) {
        clearTimeout(timer);
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
    socket.write(head + partialBody);
  });
}

export const rawBodyOf = (raw: string): unknown => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
export const rawStatusOf = (raw: string): number => Number(raw.slice(9, 12));
export const rawRequestIdOf = (raw: string): string | undefined => /x-request-id: (\S+)/i.exec(raw)?.[1];
