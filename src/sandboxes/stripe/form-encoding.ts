// Stripe v1 request parameters: application/x-www-form-urlencoded with `a[b]` for nested keys and
// `a[0]` for arrays (what stripe-node sends, brackets unescaped). Values stay strings, as on the wire.

export type FormValue = string | FormValue[] | { [key: string]: FormValue };
export type FormParams = { [key: string]: FormValue };

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export class FormEncodingError extends Error {}

export function parseStripeForm(encoded: string | URLSearchParams): FormParams {
  const root: FormParams = {};
  const entries = typeof encoded === 'string' ? new URLSearchParams(encoded) : encoded;
  for (const [name, value] of entries) setPath(root, splitKey(name), value);
  return arraysFromIndexedObjects(root) as FormParams;
}

/** `a[b][0]` -> ['a', 'b', '0']; `a[]` appends. */
function splitKey(name: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name);
  if (match === null) throw new FormEncodingError(`malformed parameter name: ${name}`);
  const parts = [match[1] ?? ''];
  for (const bracket of (match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)) parts.push(bracket[1] ?? '');
  for (const part of parts) if (FORBIDDEN_KEYS.has(part)) throw new FormEncodingError(`forbidden parameter name: ${name}`);
  return parts;
}

function setPath(root: FormParams, parts: string[], value: string): void {
  let node: { [key: string]: FormValue } = root;
  parts.forEach((rawPart, i) => {
    // `a[]` means "next index".
    const part = rawPart === '' ? String(Object.keys(node).length) : rawPart;
    if (i === parts.length - 1) {
      node[part] = value;
      return;
    }
    const next = node[part];
    if (next === undefined) {
      const created: { [key: string]: FormValue } = {};
      node[part] = created;
      node = created;
    } else if (typeof next === 'object' && !Array.isArray(next)) {
      node = next;
    } else {
      throw new FormEncodingError(`parameter ${parts.slice(0, i + 1).join('.')} is both a value and an object`);
    }
  });
}

function arraysFromIndexedObjects(value: FormValue): FormValue {
  if (typeof value === 'string' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  const converted: { [key: string]: FormValue } = {};
  for (const key of keys) converted[key] = arraysFromIndexedObjects(value[key] as FormValue);
  const indexed = keys.length > 0 && keys.every((k) => /^\d+$/.test(k));
  if (!indexed) return converted;
  return keys.sort((a, b) => Number(a) - Number(b)).map((k) => converted[k] as FormValue);
}

/** Stable serialization for comparing the parameters of two requests. */
export function canonicalParams(value: FormValue): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalParams).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalParams(value[k] as FormValue)}`).join(',')}}`;
}
