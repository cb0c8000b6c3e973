import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { newId } from '../kernel/ids/ids';
import { errorEnvelope } from './error-envelope';

/** What Node's HTTP parser refused, as status and message (code invalid_request, like a 413). */
function answerFor(code: string | undefined): { status: number; reason: string; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'Request Header Fields Too Large', message: 'Request line and headers are too large (at most 16 KiB together)' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, reason: 'Payload Too Large', message: 'Chunk extensions of the request body are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout', message: 'The request did not arrive in time' };
    default:
      return { status: 400, reason: 'Bad Request', message: 'Malformed HTTP request (request line, header names or values, or framing)' };
  }
}

/**
 * Requests Node's HTTP parser refuses before Express sees them (a path or headers over 16 KiB,
 * a control character in a header value, broken framing) are answered with the error envelope
 * and an X-Request-Id, instead of Node's bare 400, 408, 413 or 431 without a body. As in
 * Node's own handler, a socket that cannot be written to, or whose response already started,
 * is closed without an answer.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, reason, message } = answerFor(err.code);
    const requestId = newId('req');
    const body = JSON.stringify(errorEnvelope('invalid_request', message, requestId));
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n' +
        '\r\n' +
        body,
      // The server's sockets allow half-open connections: close this one once the answer is out.
      () => socket.destroy(),
    );
  });
  answerUnmetExpectations(server);
}

/**
 * An `Expect` header other than `100-continue`: Node answers a bare 417 before any route runs.
 * Answered here with the envelope instead (417, code invalid_request, naming the header); the
 * connection closes, so a body the client may still send is never read.
 */
function answerUnmetExpectations(server: Server): void {
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const requestId = newId('req');
    const body = JSON.stringify(
      errorEnvelope('invalid_request', 'Unsupported Expect header: only 100-continue is supported', requestId, { field: 'Expect' }),
    );
    res.shouldKeepAlive = false;
    res.writeHead(417, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'X-Request-Id': requestId,
      Connection: 'close',
    });
    res.end(body);
  });
}
