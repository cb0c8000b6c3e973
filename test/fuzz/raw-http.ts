import { Socket, connect } from 'node:net';
import { scaled } from '../support/deadlines';

export interface RawRequest {
  method: string;
  /** Sent as is on the request line (already percent-encoded where wanted). */
  target: string;
  /** Sent as is, in order (duplicates and odd bytes included). */
  headers: [string, string][];
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  ms: number;
}

/**
 * One HTTP/1.1 request on a fresh connection (`Connection: close`), bytes exactly as described:
 * Node's client would refuse the odd header bytes a hostile client sends. Resolves with the
 * parsed answer (Content-Length or chunked), rejects when no complete answer came in `timeoutMs`
 * (5 s on a quiet machine, stretched by the load: deadlines.ts; the fuzz files' own limit on an
 * answer's time is what they assert, this one only ends a wait that would otherwise never end).
 */
export function sendRaw(port: number, req: RawRequest, timeoutMs = scaled(5000)): Promise<RawResponse> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) return reject(err);
      try {
        resolve({ ...parseResponse(Buffer.concat(chunks), req.method === 'HEAD'), ms: performance.now() - started });
      } catch (e) {
        reject(e as Error);
      }
    };
    const timer = setTimeout(() => finish(new Error(`no complete answer in ${timeoutMs} ms (got ${Buffer.concat(chunks).length} bytes)`)), timeoutMs);
    socket.on('data', (b: Buffer) => {
      chunks.push(b);
      if (isComplete(Buffer.concat(chunks), req.method === 'HEAD')) finish();
    });
    // The server may answer (413, 431) and close before it read the whole request: the answer counts.
    socket.on('error', (err) => (chunks.length > 0 ? finish() : finish(err)));
    socket.on('close', () => (chunks.length > 0 ? finish() : finish(new Error('connection closed without an answer'))));
    const head =
      `${req.method} ${req.target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
      req.headers.map(([k, v]) => `${k}: ${v}\r\n`).join('') +
      (req.body ? `Content-Length: ${req.body.length}\r\n` : '') +
      '\r\n';
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), req.body ?? Buffer.alloc(0)]));
  });
}

/** The final answer's head and what follows it; interim 1xx answers (100 Continue) are skipped. */
function splitHead(buf: Buffer): { head: string; rest: Buffer } | undefined {
  for (;;) {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const head = buf.subarray(0, end).toString('latin1');
    if (!/^HTTP\/1\.[01] 1\d\d /.test(head)) return { head, rest: buf.subarray(end + 4) };
    buf = buf.subarray(end + 4);
  }
}

function headersOf(head: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return headers;
}

function dechunk(buf: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
    if (Number.isNaN(size)) throw new Error('bad chunk size');
    if (size === 0) return Buffer.concat(parts);
    if (buf.length < eol + 2 + size + 2) return undefined;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** Whether the whole answer is in (an answer to HEAD has no body, whatever its Content-Length). */
function isComplete(buf: Buffer, head: boolean): boolean {
  const split = splitHead(buf);
  if (!split) return false;
  if (head) return true;
  const h = headersOf(split.head);
  if (h['transfer-encoding']?.includes('chunked')) return dechunk(split.rest) !== undefined;
  if (h['content-length'] !== undefined) return split.rest.length >= Number(h['content-length']);
  const status = Number(split.head.split(' ')[1]);
  return status === 204 || status === 304;
}

function parseResponse(buf: Buffer, head: boolean): Omit<RawResponse, 'ms'> {
  const split = splitHead(buf);
  if (!split) throw new Error(`incomplete answer: ${JSON.stringify(buf.subarray(0, 200).toString('latin1'))}`);
  const status = Number(split.head.split(' ')[1]);
  const headers = headersOf(split.head);
  let body = head ? Buffer.alloc(0) : split.rest;
  if (head) return { status, headers, body };
  if (headers['transfer-encoding']?.includes('chunked')) body = dechunk(body) ?? body;
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return { status, headers, body };
}
