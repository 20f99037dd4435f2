// RFC 8785 JSON Canonicalization Scheme for request fingerprints: object members sorted by their
// UTF-16 code units, no whitespace, numbers as ECMAScript prints them, strings as JSON.stringify
// escapes them. Only I-JSON is canonical: lone surrogates and non-finite numbers are refused.

export class NotCanonicalizableError extends Error {
  override readonly name = 'NotCanonicalizableError';
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function canonicalString(s: string): string {
  if (LONE_SURROGATE.test(s)) throw new NotCanonicalizableError('string contains a lone surrogate (not I-JSON)');
  return JSON.stringify(s);
}

export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new NotCanonicalizableError(`number ${value} is not finite`);
      // ECMAScript Number-to-String is exactly RFC 8785's number format (and -0 prints as 0).
      return JSON.stringify(value);
    case 'string':
      return canonicalString(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v: unknown) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
      // Default sort compares UTF-16 code units, which is what RFC 8785 §3.2.3 asks for.
      const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort();
      return `{${keys.map((k) => `${canonicalString(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
    }
    default:
      throw new NotCanonicalizableError(`a ${typeof value} is not JSON`);
  }
}
