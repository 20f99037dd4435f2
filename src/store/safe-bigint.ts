// pg returns BIGINT as a string (it may not fit a double); money must still be an exact integer.

/** Parses a BIGINT that pg returns as a string; refuses anything that is not a safe integer. */
export function safeBigint(value: string | number | bigint, column = 'bigint'): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`${column} value ${String(value)} is not a safe integer`);
  return n;
}
