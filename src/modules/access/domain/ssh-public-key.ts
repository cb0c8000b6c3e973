import { KeyObject, createHash, createPublicKey } from 'node:crypto';
import { DomainError, invalidRequest } from '../../../shared/kernel/errors/domain-error';

/** The key types accepted, as the first field of an OpenSSH public key line names them. */
export const SSH_KEY_TYPES = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa'] as const;
export type SshKeyType = (typeof SSH_KEY_TYPES)[number];

export const MAX_PUBLIC_KEY_LENGTH = 16384;
export const MIN_RSA_BITS = 2048;
export const MAX_SSH_KEY_NAME_LENGTH = 64;

export interface ParsedPublicKey {
  type: SshKeyType;
  /** The line as stored: trimmed, single spaces between fields, the comment kept. */
  normalized: string;
  /** `SHA256:` and the unpadded base64 of the blob's SHA-256, as `ssh-keygen -l` prints it. */
  fingerprint: string;
  /** Key size: the RSA modulus or the curve's bits (256 for Ed25519). */
  bits: number;
}

/** The NIST curves by the name the blob carries: JWK curve name and coordinate length in bytes. */
const CURVES: Record<string, { crv: string; bytes: number; bits: number }> = {
  nistp256: { crv: 'P-256', bytes: 32, bits: 256 },
  nistp384: { crv: 'P-384', bytes: 48, bits: 384 },
  nistp521: { crv: 'P-521', bytes: 66, bits: 521 },
};

const ACCEPTED = 'ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 or ssh-rsa of 2048 bits or more';
const refuse = (why: string): DomainError => invalidRequest(`public_key ${why}`, { field: 'public_key' });

/** Why a known OpenSSH type that is not accepted is refused. */
function refusedType(type: string): string {
  // Echo a type only when it looks like one (never a long or odd first field: it may be anything).
  if (!/^[a-z0-9@.-]{1,64}$/.test(type)) return `must be "<type> <base64>[ <comment>]" with type ${ACCEPTED}`;
  if (type === 'ssh-dss') return 'type ssh-dss (DSA) is not accepted: DSA keys are obsolete; use ' + ACCEPTED;
  if (type.includes('-cert-v01@openssh.com')) return `type ${type} is a certificate, not accepted; give the plain public key (${ACCEPTED})`;
  if (type.startsWith('sk-')) return `type ${type} is a security-key (FIDO) key, not accepted; use ${ACCEPTED}`;
  return `must be "<type> <base64>[ <comment>]" with type ${ACCEPTED}`;
}

/**
 * A reader of the blob's RFC 4253 section 6.6 fields: each a uint32 length and that many bytes.
 * Every read checks the length against what is left (a truncated blob is refused, never read past).
 */
class BlobReader {
  private offset = 0;
  constructor(private readonly blob: Buffer) {}

  field(what: string): Buffer {
    if (this.offset + 4 > this.blob.length) throw refuse(`is truncated: its key data ends before the ${what}`);
    const length = this.blob.readUInt32BE(this.offset);
    this.offset += 4;
    if (length > this.blob.length - this.offset) throw refuse(`is truncated: its key data ends inside the ${what}`);
    const out = this.blob.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  /** An mpint (RFC 4251 section 5): positive, minimal two's complement; its magnitude without the sign byte. */
  positiveMpint(what: string): Buffer {
    const bytes = this.field(what);
    if (bytes.length === 0 || (bytes[0] & 0x80) !== 0) throw refuse(`has an invalid RSA ${what}`);
    return bytes[0] === 0 ? bytes.subarray(1) : bytes;
  }

  end(): void {
    if (this.offset !== this.blob.length) throw refuse('has data after its key fields');
  }
}

/** Node builds the key from its JWK: it checks the Ed25519 length, the EC point on its curve, the RSA numbers. */
function keyFromJwk(jwk: Record<string, string>, what: string): KeyObject {
  try {
    return createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    throw refuse(`is not a valid ${what} key: its key data does not make a public key`);
  }
}

function checkBlob(type: SshKeyType, blob: Buffer): number {
  const reader = new BlobReader(blob);
  const inner = reader.field('key type').toString('latin1');
  if (inner !== type) throw refuse(`names type ${type} but its key data holds a key of type "${inner.slice(0, 40)}"`);
  const b64url = (b: Buffer): string => b.toString('base64url');
  if (type === 'ssh-ed25519') {
    const x = reader.field('Ed25519 key');
    reader.end();
    if (x.length !== 32) throw refuse('is not a valid ssh-ed25519 key: the key must be 32 bytes');
    keyFromJwk({ kty: 'OKP', crv: 'Ed25519', x: b64url(x) }, 'ssh-ed25519');
    return 256;
  }
  if (type === 'ssh-rsa') {
    const e = reader.positiveMpint('exponent');
    const n = reader.positiveMpint('modulus');
    reader.end();
    const key = keyFromJwk({ kty: 'RSA', n: b64url(n), e: b64url(e) }, 'ssh-rsa');
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS) throw refuse(`is an RSA key of ${bits} bits; at least ${MIN_RSA_BITS} are required`);
    return bits;
  }
  const curveName = type.slice('ecdsa-sha2-'.length);
  const curve = CURVES[curveName];
  const named = reader.field('curve name').toString('latin1');
  const point = reader.field('EC point');
  reader.end();
  if (named !== curveName) throw refuse(`names curve ${curveName} but its key data names "${named.slice(0, 40)}"`);
  // SEC 1 uncompressed point: 0x04, X, Y (OpenSSH writes no other form).
  if (point.length !== 1 + 2 * curve.bytes || point[0] !== 0x04) throw refuse(`is not a valid ${type} key: the point must be uncompressed`);
  keyFromJwk({ kty: 'EC', crv: curve.crv, x: b64url(point.subarray(1, 1 + curve.bytes)), y: b64url(point.subarray(1 + curve.bytes)) }, type);
  return curve.bits;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Parses an OpenSSH public key line (`<type> <base64>[ <comment>]`, fields separated by runs of
 * spaces) and validates it: an accepted type, base64 that decodes, the blob's inner type (and
 * curve) matching the line's, fields that end where the blob ends, and a key Node's crypto
 * builds (RSA: 2048 bits or more). Anything else is 400 naming `public_key`.
 */
export function parsePublicKey(input: unknown): ParsedPublicKey {
  if (typeof input !== 'string') throw invalidRequest('public_key must be a string: an OpenSSH public key line', { field: 'public_key' });
  if (input.length > MAX_PUBLIC_KEY_LENGTH) throw refuse(`must be at most ${MAX_PUBLIC_KEY_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(input)) throw refuse('must be one line without control characters (tabs, line breaks)');
  const fields = input.trim().split(/ +/);
  if (fields.length < 2 || fields[0] === '') throw refuse(`must be "<type> <base64>[ <comment>]" with type ${ACCEPTED}`);
  const [type, data, ...comment] = fields;
  if (!(SSH_KEY_TYPES as readonly string[]).includes(type)) throw refuse(refusedType(type));
  if (!BASE64.test(data)) throw refuse('key data is not valid base64');
  const blob = Buffer.from(data, 'base64');
  const bits = checkBlob(type as SshKeyType, blob);
  return {
    type: type as SshKeyType,
    normalized: [type, data, ...comment].join(' '),
    fingerprint: fingerprintOf(blob),
    bits,
  };
}

/** OpenSSH's SHA256 fingerprint of a key blob. */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The name rule of an SSH key: 1 to 64 characters, no control character, not blank. */
export function validateSshKeyName(name: unknown): string {
  const rule = `1 to ${MAX_SSH_KEY_NAME_LENGTH} characters, not blank, without control characters`;
  if (typeof name !== 'string') throw invalidRequest(`name must be a string: ${rule}`, { field: 'name' });
  // eslint-disable-next-line no-control-regex
  if (name.length === 0 || [...name].length > MAX_SSH_KEY_NAME_LENGTH || name.trim() === '' || /[\u0000-\u001f\u007f-\u009f]/.test(name)) {
    throw invalidRequest(`name must be ${rule}`, { field: 'name' });
  }
  return name;
}
