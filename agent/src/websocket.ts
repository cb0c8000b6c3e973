import { createHash } from 'node:crypto';
import { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** The Sec-WebSocket-Accept of a handshake (RFC 6455 §4.2.2). */
export const acceptKey = (key: string): string => createHash('sha1').update(key + GUID).digest('base64');

/** One frame of RFC 6455, unmasked (a server's). */
export function frame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, len]) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (len >= 126 && len < 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 126;
    head.writeUInt16BE(len, 2);
  } else if (len >= 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([head, payload]);
}

/**
 * The messages of a WebSocket connection (RFC 6455), the little a console needs: text and binary
 * messages (fragments joined), pings answered, a close answered and ended. Client frames must be
 * masked (a client's unmasked frame closes the connection, 1002). Messages are capped at 1 MiB.
 */
export class WebSocketConnection {
  private buffered = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentOpcode = 0;
  private closed = false;

  constructor(
    private readonly socket: Duplex,
    private readonly onMessage: (data: Buffer, text: boolean) => void,
    private readonly onClose: () => void,
  ) {
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('close', () => this.end());
    socket.on('error', () => this.end());
  }

  send(data: Buffer | string): void {
    if (this.closed) return;
    this.socket.write(frame(typeof data === 'string' ? 1 : 2, typeof data === 'string' ? Buffer.from(data) : data));
  }

  close(code = 1000, reason = ''): void {
    if (this.closed) return;
    const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
    payload.writeUInt16BE(code, 0);
    payload.write(reason, 2);
    this.socket.write(frame(8, payload));
    this.socket.end();
    this.end();
  }

  private end(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }

  private read(chunk: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    for (;;) {
      if (this.buffered.length < 2) return;
      const b0 = this.buffered[0];
      const b1 = this.buffered[1];
      let len = b1 & 0x7f;
      let offset = 2;
      if (len === 126) {
        if (this.buffered.length < 4) return;
        len = this.buffered.readUInt16BE(2);
        offset = 4;
      } else if (len === 127) {
        if (this.buffered.length < 10) return;
        const big = this.buffered.readBigUInt64BE(2);
        if (big > BigInt(1 << 20)) return this.close(1009, 'message too big');
        len = Number(big);
        offset = 10;
      }
      if (!(b1 & 0x80)) return this.close(1002, 'client frames must be masked');
      if (this.buffered.length < offset + 4 + len) return;
      const mask = this.buffered.subarray(offset, offset + 4);
      const payload = Buffer.from(this.buffered.subarray(offset + 4, offset + 4 + len));
      for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4];
      this.buffered = this.buffered.subarray(offset + 4 + len);
      const opcode = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      if (opcode === 8) return this.close(1000);
      if (opcode === 9) {
        this.socket.write(frame(10, payload));
        continue;
      }
      if (opcode === 10) continue;
      if (opcode === 1 || opcode === 2) this.fragmentOpcode = opcode;
      this.fragments.push(payload);
      if (this.fragments.reduce((a, f) => a + f.length, 0) > 1 << 20) return this.close(1009, 'message too big');
      if (fin) {
        const data = Buffer.concat(this.fragments);
        this.fragments = [];
        this.onMessage(data, this.fragmentOpcode === 1);
      }
    }
  }
}
