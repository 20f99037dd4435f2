// A minimal DER encoder: just the ASN.1 types an X.509 v3 certificate needs. It exists so the
// sandbox can mint its TLS certificate with node:crypto alone, without an openssl binary.

export type Der = Buffer;

function lengthOctets(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** Tag-length-value with a raw tag byte. */
export function tlv(tag: number, content: Buffer): Der {
  return Buffer.concat([Buffer.from([tag]), lengthOctets(content.length), content]);
}

export const sequence = (...items: readonly Der[]): Der => tlv(0x30, Buffer.concat(items));
export const set = (...items: readonly Der[]): Der => tlv(0x31, Buffer.concat(items));
export const octetString = (content: Buffer): Der => tlv(0x04, content);
export const utf8String = (s: string): Der => tlv(0x0c, Buffer.from(s, 'utf8'));
export const booleanTrue = (): Der => tlv(0x01, Buffer.from([0xff]));
/** A BIT STRING whose content is whole bytes (no unused bits). */
export const bitString = (content: Buffer): Der => tlv(0x03, Buffer.concat([Buffer.from([0]), content]));
/** [n] EXPLICIT: a constructed context tag around one encoded value. */
export const explicit = (n: number, inner: Der): Der => tlv(0xa0 | n, inner);
/** [n] IMPLICIT primitive: a context tag replacing the value's own tag. */
export const implicitPrimitive = (n: number, content: Buffer): Der => tlv(0x80 | n, content);

/** A non-negative INTEGER from big-endian bytes: leading zeros trimmed, a 0x00 added when the high bit is set. */
export function unsignedInteger(bytes: Buffer): Der {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  let content = bytes.subarray(start);
  if (content.length === 0) content = Buffer.from([0]);
  if ((content[0] ?? 0) & 0x80) content = Buffer.concat([Buffer.from([0]), content]);
  return tlv(0x02, content);
}

export function objectIdentifier(dotted: string): Der {
  const parts = dotted.split('.').map((p) => Number(p));
  const [first, second, ...rest] = parts;
  if (first === undefined || second === undefined || parts.some((p) => !Number.isSafeInteger(p) || p < 0)) {
    throw new RangeError(`not an object identifier: ${dotted}`);
  }
  const out: number[] = [first * 40 + second];
  for (const arc of rest) {
    const base128: number[] = [];
    let n = arc;
    do {
      base128.unshift(n % 128);
      n = Math.floor(n / 128);
    } while (n > 0);
    for (let i = 0; i < base128.length - 1; i++) base128[i] = (base128[i] ?? 0) | 0x80;
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime before 2050, GeneralizedTime from 2050 on (RFC 5280 4.1.2.5). */
export function time(date: Date): Der {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const compact = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(compact.slice(2), 'ascii')) : tlv(0x18, Buffer.from(compact, 'ascii'));
}
