// Query parameters of the list operations, declared once: a route parses req.query with the
// declarations and the OpenAPI document lists the same declarations (src/api/list-queries.ts
// declares each list's). Express 5's query parser does not nest brackets: `created[gte]=…`
// arrives as the flat key "created[gte]", and a parameter given twice as an array of strings.

import { z } from 'zod';
import { maskCardNumbers } from '../core/card-number-detector.ts';
import { ID_PREFIXES, isId } from '../core/ids.ts';
import type { IdKind } from '../core/ids.ts';
import type { CreatedRange, PageRequest } from '../store/keyset-page.ts';
import { MAX_PAGE_SIZE, UnknownCursorError } from '../store/keyset-page.ts';
import { ApiProblem } from './problems.ts';
import type { FieldError } from './problems.ts';

/** One query parameter: `schema` checks one value (a string); `many` lets it repeat (`status=a&status=b`), each value checked. */
export interface QueryParam<T> {
  readonly schema: z.ZodType<T>;
  readonly many: boolean;
  readonly description: string;
}

export const one = <T>(schema: z.ZodType<T>, description: string): QueryParam<T> & { readonly many: false } => ({ schema, many: false, description });

/** Repeatable: at most MAX_REPEATS values (a query string is no place for a bulk lookup). */
export const many = <T>(schema: z.ZodType<T>, description: string): QueryParam<T> & { readonly many: true } => ({ schema, many: true, description });

export const MAX_REPEATS = 20;

export type QueryParams = Readonly<Record<string, QueryParam<unknown>>>;

/** What parseQuery answers: each parameter given, as its schema's output (an array when it repeats). */
export type ParsedQuery<D extends QueryParams> = {
  readonly [K in keyof D]?: D[K] extends QueryParam<infer T> & { readonly many: true } ? readonly T[] : D[K] extends QueryParam<infer T> ? T : never;
};

/** How a rejected name is shown: never a card number someone typed where a parameter name goes. */
const shown = (name: string): string => maskCardNumbers(name, '[card]');

/**
 * Checks every parameter given against the declarations and answers them parsed, or throws one
 * 400 validation_error naming each bad parameter (an unknown one, one given twice that may not
 * be, a bad value).
 */
export function parseQuery<D extends QueryParams>(params: D, query: unknown): ParsedQuery<D> {
  const given = (query ?? {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(given)) {
    const p = Object.hasOwn(params, name) ? params[name] : undefined;
    if (p === undefined) {
      errors.push({ path: shown(name), message: unknownMessage(name, params) });
      continue;
    }
    const values = Array.isArray(raw) ? (raw as unknown[]) : [raw];
    if (!p.many && values.length > 1) {
      errors.push({ path: name, message: `give ${name} once (it was given ${values.length} times)` });
      continue;
    }
    if (values.length > MAX_REPEATS) {
      errors.push({ path: name, message: `give ${name} at most ${MAX_REPEATS} times` });
      continue;
    }
    const parsed: unknown[] = [];
    for (const v of values) {
      const r = p.schema.safeParse(v);
      if (r.success) parsed.push(r.data);
      else errors.push({ path: name, message: r.error.issues[0]?.message ?? 'not valid' });
    }
    if (parsed.length === values.length) out[name] = p.many ? [...new Set(parsed)] : parsed[0];
  }
  if (errors.length > 0) throw queryProblem(errors);
  return out as ParsedQuery<D>;
}

export function queryProblem(errors: readonly FieldError[]): ApiProblem {
  const first = errors[0]!;
  return new ApiProblem('validation_error', `${first.path}: ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`, errors);
}

function unknownMessage(name: string, params: QueryParams): string {
  const base = name.replace(/\[.*$/, '');
  const family = Object.keys(params).filter((k) => k.startsWith(`${base}[`));
  if (family.length > 0 && base !== '') return `unknown parameter; ${base} takes ${family.join(', ')}`;
  return `unknown parameter; this list takes ${Object.keys(params).join(', ')}`;
}

/** The declarations as OpenAPI query parameters (a repeatable one is an array, form style, exploded). */
export function openApiQueryParameters(params: QueryParams): Record<string, unknown>[] {
  return Object.entries(params).map(([name, p]) => {
    const one = z.toJSONSchema(p.schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    delete one['$schema'];
    return {
      name, in: 'query', required: false, description: p.description,
      ...(p.many ? { schema: { type: 'array', items: one, maxItems: MAX_REPEATS }, style: 'form', explode: true } : { schema: one }),
    };
  });
}

// The parameters every list takes.

const cursor = (kind: IdKind, name: string) =>
  z.string().refine((s) => isId(kind, s), { message: `${name} must be a ${kind} id` });

/** limit, starting_after and ending_before, with cursors of this kind of id. */
export function pageParams(kind: IdKind) {
  return {
    limit: one(z.coerce.number({ error: 'limit must be a whole number from 1 to 100' }).int({ error: 'limit must be a whole number from 1 to 100' }).min(1, { error: 'limit must be at least 1' }).max(MAX_PAGE_SIZE, { error: `limit must be at most ${MAX_PAGE_SIZE}` }).meta({ default: 10 }), `How many to answer, 1–${MAX_PAGE_SIZE} (default 10).`),
    starting_after: one(cursor(kind, 'starting_after'), `A ${ID_PREFIXES[kind]}_… id from an earlier page (its next_cursor): the page of those older than it.`),
    ending_before: one(cursor(kind, 'ending_before'), `A ${ID_PREFIXES[kind]}_… id: the page of those newer than it (paging back), still newest first; next_cursor then continues backwards.`),
  };
}

const INSTANT_EXAMPLE = '2026-12-01T00:00:00Z';
const INSTANT_MESSAGE = `must be an ISO 8601 instant with seconds and a time zone (Z or ±hh:mm), e.g. ${INSTANT_EXAMPLE}`;

/**
 * An ISO 8601 instant with its offset, as the resources' created_at: unix seconds are refused by
 * name, so a client used to them learns why. Years 0001–9999 and offsets up to ±14:00 (what
 * PostgreSQL's timestamptz takes, and every zone in use).
 */
export const instant = z.string().superRefine((v, ctx) => {
  if (/^[+-]?\d+(\.\d+)?$/.test(v)) {
    ctx.addIssue({ code: 'custom', message: `unix seconds are not taken; ${INSTANT_MESSAGE}` });
    return;
  }
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(v);
  const offsetOk = offset === null || Number(offset[2]) * 60 + Number(offset[3]) <= 14 * 60;
  if (!z.iso.datetime({ offset: true }).safeParse(v).success || v.startsWith('0000') || !offsetOk) ctx.addIssue({ code: 'custom', message: INSTANT_MESSAGE });
}).meta({ format: 'date-time', examples: [INSTANT_EXAMPLE] });

/** created[gte], created[gt], created[lte], created[lt]. */
export function createdParams() {
  return {
    'created[gte]': one(instant, 'Created at or after this instant (ISO 8601 with offset; unix seconds are refused).'),
    'created[gt]': one(instant, 'Created after this instant.'),
    'created[lte]': one(instant, 'Created at or before this instant.'),
    'created[lt]': one(instant, 'Created before this instant.'),
  };
}

type PageQuery = ParsedQuery<ReturnType<typeof pageParams>>;
type CreatedQuery = ParsedQuery<ReturnType<typeof createdParams>>;

/** The page asked for; both cursors at once is a 400 naming them. */
export function pageRequest(q: PageQuery): PageRequest {
  if (q.starting_after !== undefined && q.ending_before !== undefined) {
    throw queryProblem([{ path: 'ending_before', message: 'give starting_after or ending_before, not both' }]);
  }
  const cursor = q.starting_after !== undefined ? { after: q.starting_after } : q.ending_before !== undefined ? { before: q.ending_before } : undefined;
  return { limit: q.limit ?? 10, ...(cursor === undefined ? {} : { cursor }) };
}

/** The created bounds; both forms of one side, or a range that holds nothing by construction, is a 400. */
export function createdRange(q: CreatedQuery): CreatedRange | undefined {
  const errors: FieldError[] = [];
  if (q['created[gte]'] !== undefined && q['created[gt]'] !== undefined) errors.push({ path: 'created[gt]', message: 'give created[gte] or created[gt], not both' });
  if (q['created[lte]'] !== undefined && q['created[lt]'] !== undefined) errors.push({ path: 'created[lt]', message: 'give created[lte] or created[lt], not both' });
  const lower = q['created[gte]'] ?? q['created[gt]'];
  const upper = q['created[lte]'] ?? q['created[lt]'];
  if (lower !== undefined && upper !== undefined && Date.parse(lower) > Date.parse(upper)) {
    errors.push({ path: q['created[gte]'] === undefined ? 'created[gt]' : 'created[gte]', message: `${lower} is after the upper bound ${upper}` });
  }
  if (errors.length > 0) throw queryProblem(errors);
  const r: CreatedRange = {
    ...(q['created[gte]'] === undefined ? {} : { gte: q['created[gte]'] }),
    ...(q['created[gt]'] === undefined ? {} : { gt: q['created[gt]'] }),
    ...(q['created[lte]'] === undefined ? {} : { lte: q['created[lte]'] }),
    ...(q['created[lt]'] === undefined ? {} : { lt: q['created[lt]'] }),
  };
  return Object.keys(r).length === 0 ? undefined : r;
}

/** Reads a page, answering a cursor that is not one of the merchant's as a 400 naming its parameter (the same for another merchant's id: it says nothing of it). */
export async function readPage<T>(kind: IdKind, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof UnknownCursorError)) throw err;
    const name = err.side === 'after' ? 'starting_after' : 'ending_before';
    throw queryProblem([{ path: name, message: `no ${kind} ${err.id} of yours to page from` }]);
  }
}
