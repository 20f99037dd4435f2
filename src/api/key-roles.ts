// Which key roles may call which merchant operation: the one table the API enforces and docs/api.md
// shows ("Keys and modes"; `npm run docs:roles` writes it there, test/unit/api/key-roles.test.ts fails
// when they drift, and test/integration/api/key-roles.test.ts when a /v1 route is missing from it).
// An operation not in the table is for `full` keys only, so a route added without a row is closed to
// the narrower roles rather than open to them. Checked right after authentication, before the body
// is read or the idempotency key claimed: a refused call writes nothing.

import type { NextFunction, Request, Response } from 'express';
import { KEY_ROLES } from '../core/api-keys.ts';
import type { KeyRole } from '../core/api-keys.ts';
import { apiKeyOf } from './http.ts';
import { ApiProblem } from './problems.ts';

export interface Operation {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** As the route is declared (`:id` for a path segment). */
  readonly path: string;
  /** Secret-key roles that may call it; `publishable`: only a publishable key opens it (no secret key at all). */
  readonly roles: readonly KeyRole[] | 'publishable';
}

const READ: readonly KeyRole[] = ['full', 'payments', 'refunds', 'read_only'];
const PAYMENTS: readonly KeyRole[] = ['full', 'payments'];
const REFUNDS: readonly KeyRole[] = ['full', 'refunds'];
const FULL: readonly KeyRole[] = ['full'];

export const OPERATIONS: readonly Operation[] = [
  { method: 'POST', path: '/v1/payments', roles: PAYMENTS },
  { method: 'GET', path: '/v1/payments', roles: READ },
  { method: 'GET', path: '/v1/payments/:id', roles: READ },
  { method: 'GET', path: '/v1/payments/:id/timeline', roles: READ },
  { method: 'POST', path: '/v1/payments/:id', roles: PAYMENTS },
  { method: 'POST', path: '/v1/payments/:id/capture', roles: PAYMENTS },
  { method: 'POST', path: '/v1/payments/:id/void', roles: PAYMENTS },
  { method: 'POST', path: '/v1/payments/:id/refunds', roles: REFUNDS },
  { method: 'GET', path: '/v1/refunds', roles: READ },
  { method: 'GET', path: '/v1/refunds/:id', roles: READ },
  { method: 'GET', path: '/v1/balances', roles: READ },
  { method: 'POST', path: '/v1/payment_methods', roles: PAYMENTS },
  { method: 'GET', path: '/v1/payment_methods/:id', roles: READ },
  { method: 'GET', path: '/v1/disputes', roles: READ },
  { method: 'GET', path: '/v1/disputes/:id', roles: READ },
  { method: 'GET', path: '/v1/disputes/:id/defense_reasons', roles: READ },
  // Answering a dispute gives money back or fights for it: the refunds role's business, as a refund is.
  { method: 'POST', path: '/v1/disputes/:id/evidence', roles: REFUNDS },
  { method: 'POST', path: '/v1/disputes/:id/accept', roles: REFUNDS },
  { method: 'POST', path: '/v1/files', roles: REFUNDS },
  { method: 'GET', path: '/v1/files/:id', roles: READ },
  { method: 'POST', path: '/v1/webhook_endpoints', roles: FULL },
  { method: 'GET', path: '/v1/webhook_endpoints', roles: READ },
  { method: 'POST', path: '/v1/webhook_endpoints/:id/rotate_signing_key', roles: FULL },
  { method: 'DELETE', path: '/v1/webhook_endpoints/:id', roles: FULL },
  { method: 'GET', path: '/v1/events', roles: READ },
  { method: 'GET', path: '/v1/events/:id', roles: READ },
  { method: 'POST', path: '/v1/events/:id/redeliver', roles: FULL },
  { method: 'POST', path: '/v1/api_keys', roles: FULL },
  { method: 'GET', path: '/v1/api_keys', roles: FULL },
  { method: 'DELETE', path: '/v1/api_keys/:id', roles: FULL },
  { method: 'POST', path: '/v1/api_keys/:id/roll', roles: FULL },
  { method: 'POST', path: '/v1/tokens', roles: 'publishable' },
  { method: 'GET', path: '/elements/card', roles: 'publishable' },
];

const segments = (path: string): string[] => path.replace(/\/+$/, '').split('/');

function matches(pattern: string, path: string): boolean {
  const want = segments(pattern);
  const got = segments(path);
  // Case-blind, as express's routing is: the row found is the route that will answer.
  return want.length === got.length && want.every((w, i) => (w.startsWith(':') ? got[i] !== '' : w === got[i]!.toLowerCase()));
}

/** The row for a request (HEAD is answered by GET routes), or undefined: then `full` only. */
export function operationFor(method: string, path: string): Operation | undefined {
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  return OPERATIONS.find((o) => o.method === m && matches(o.path, path));
}

/** The secret-key roles that may call this request. */
export function rolesAllowed(method: string, path: string): readonly KeyRole[] {
  const roles = operationFor(method, path)?.roles;
  return roles === undefined || roles === 'publishable' ? FULL : roles;
}

/** The narrowest role that opens it, for the answer's text: the one a merchant would give a tool for it. */
function roleNeeded(roles: readonly KeyRole[]): KeyRole {
  return roles.find((r) => r !== 'full') ?? 'full';
}

/** After bearerAuth on /v1: a key whose role is not in the operation's row gets 403 insufficient_role. */
export function requireRole() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const key = apiKeyOf(res);
    const path = req.originalUrl.split('?')[0]!;
    const roles = rolesAllowed(req.method, path);
    if (key.role === null || !roles.includes(key.role)) {
      const needed = roleNeeded(roles);
      const others = roles.filter((r) => r !== needed);
      throw new ApiProblem(
        'insufficient_role',
        `${req.method} ${operationFor(req.method, path)?.path ?? path} needs a key with role ${needed}${others.length === 0 ? '' : ` (or ${others.join(', ')})`}; this key is ${key.role ?? 'publishable'}; nothing was done`,
        undefined, undefined, { required_roles: roles, key_role: key.role },
      );
    }
    next();
  };
}

const CELL = (o: Operation, role: KeyRole): string => (o.roles !== 'publishable' && o.roles.includes(role) ? 'yes' : '—');

/** The table as docs/api.md shows it (between its markers). */
export function roleTableMarkdown(): string {
  const rows = OPERATIONS.map((o) => {
    const op = `\`${o.method} ${o.path.replace(/:(\w+)/g, '{$1}')}\``;
    return o.roles === 'publishable' ? `| ${op} | publishable key only | | | |` : `| ${op} | ${KEY_ROLES.map((r) => CELL(o, r)).join(' | ')} |`;
  });
  return [`| operation | ${KEY_ROLES.join(' | ')} |`, '|---|---|---|---|---|', ...rows].join('\n');
}
