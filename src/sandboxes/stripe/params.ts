// Reading typed values out of form parameters with Stripe's validation errors (param named).

import { invalidParam, missingParam, unknownParam } from './errors.ts';
import type { FormParams, FormValue } from './form-encoding.ts';

export function assertKnownParams(params: FormParams, allowed: ReadonlySet<string>): void {
  for (const name of Object.keys(params)) if (!allowed.has(name)) throw unknownParam(name);
}

export function readString(params: FormParams, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidParam(name, `Invalid string: ${name} must be a string.`);
  return value;
}

/** A positive integer amount in minor units; Stripe takes no decimals. */
export function readAmount(params: FormParams, name: string): number | undefined {
  const raw = readString(params, name);
  if (raw === undefined) return undefined;
  if (!/^\d{1,12}$/.test(raw) || Number(raw) < 1) throw invalidParam(name, `Invalid integer: ${raw}. ${name} must be a positive integer in the smallest currency unit.`, 'parameter_invalid_integer');
  return Number(raw);
}

export function readInteger(params: FormParams, name: string, min: number, max: number): number | undefined {
  const raw = readString(params, name);
  if (raw === undefined) return undefined;
  if (!/^-?\d{1,12}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw invalidParam(name, `Invalid integer: ${raw}. ${name} must be between ${min} and ${max}.`, 'parameter_invalid_integer');
  }
  return Number(raw);
}

export function readBoolean(params: FormParams, name: string): boolean | undefined {
  const raw = readString(params, name);
  if (raw === undefined) return undefined;
  if (raw !== 'true' && raw !== 'false') throw invalidParam(name, `Invalid boolean: ${raw}`);
  return raw === 'true';
}

export function readEnum<T extends string>(params: FormParams, name: string, values: readonly T[]): T | undefined {
  const raw = readString(params, name);
  if (raw === undefined) return undefined;
  if (!(values as readonly string[]).includes(raw)) throw invalidParam(name, `Invalid ${name}: must be one of ${values.join(', ')}`);
  return raw as T;
}

export function readCurrency(params: FormParams, name: string): string | undefined {
  const raw = readString(params, name);
  if (raw === undefined) return undefined;
  if (!/^[A-Za-z]{3}$/.test(raw)) throw invalidParam(name, `Invalid currency: ${raw}.`);
  return raw.toLowerCase();
}

/** Stripe metadata: string values; an empty value unsets the key. Limits as Stripe documents them. */
export function readMetadata(params: FormParams, name: string, base: Record<string, string> = {}): Record<string, string> {
  const value = params[name];
  if (value === undefined) return { ...base };
  if (value === '') return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidParam(name, `Invalid hash: ${name} must be an object.`);
  const merged: Record<string, string> = { ...base };
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw invalidParam(`${name}[${key}]`, 'Metadata values must be strings.');
    if (key.length > 40) throw invalidParam(`${name}[${key}]`, 'Metadata keys can be at most 40 characters long.');
    if (v.length > 500) throw invalidParam(`${name}[${key}]`, 'Metadata values can be at most 500 characters long.');
    if (v === '') delete merged[key];
    else merged[key] = v;
  }
  if (Object.keys(merged).length > 50) throw invalidParam(name, 'Metadata can have at most 50 keys.');
  return merged;
}

export function readExpand(params: FormParams): string[] {
  const value = params['expand'];
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string')) throw invalidParam('expand', 'Invalid array: expand must be a list of strings.');
  return value;
}

/** `payment_method_options[card][<option>]`, or undefined. */
export function readCardOption(params: FormParams, option: string): string | undefined {
  const options = params['payment_method_options'];
  if (options === undefined) return undefined;
  const card = typeof options === 'object' && !Array.isArray(options) ? options['card'] : undefined;
  const value: FormValue | undefined = card !== undefined && typeof card === 'object' && !Array.isArray(card) ? card[option] : undefined;
  if (value !== undefined && typeof value !== 'string') throw invalidParam(`payment_method_options[card][${option}]`, 'Invalid string.');
  return value;
}

export function required<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw missingParam(name);
  return value;
}

/** `created` as Stripe filters lists: an exact value or a range of gt / gte / lt / lte (unix seconds). */
export function createdFilter(params: FormParams): (created: number) => boolean {
  const created = params['created'];
  if (created === undefined) return () => true;
  if (typeof created === 'string') {
    const exact = readInteger(params, 'created', 0, Number.MAX_SAFE_INTEGER);
    return (c) => c === exact;
  }
  if (Array.isArray(created)) throw invalidParam('created', 'Invalid created filter.');
  const bound = (op: string): number | undefined => readInteger(created, op, 0, Number.MAX_SAFE_INTEGER);
  const [gt, gte, lt, lte] = [bound('gt'), bound('gte'), bound('lt'), bound('lte')];
  return (c) => (gt === undefined || c > gt) && (gte === undefined || c >= gte) && (lt === undefined || c < lt) && (lte === undefined || c <= lte);
}
