// Who is asking, on the operations pages. Scripts send their operator token as a bearer token; a
// browser signs in once with it and gets an HttpOnly, SameSite=Strict cookie naming a server-side
// session (src/ops/operator-sessions.ts), so the token never sits in the page and signing out
// really ends the session. The operator's name always comes from the token, never from the request.
//
// The cookie is marked Secure when the configuration says the dashboard is served over HTTPS, or
// when a proxy the configuration trusts (SWITCHYARD_TRUSTED_PROXIES) says so in X-Forwarded-Proto:
// from anyone else that header is only a claim.

import { BlockList, isIP } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import type { Db } from '../store/db.ts';
import type { Operator, Operators } from './operators.ts';
import { liveSession, SESSION_MS } from './operator-sessions.ts';

export const SESSION_COOKIE = 'sy_ops';
export const SECURE_COOKIE_ENV = 'SWITCHYARD_OPS_SECURE_COOKIE';
export const TRUSTED_PROXIES_ENV = 'SWITCHYARD_TRUSTED_PROXIES';

export interface CookiePolicy {
  /** Always Secure (the dashboard is reached over HTTPS). */
  readonly secure: boolean;
  /** Peers whose X-Forwarded-Proto is believed (addresses or CIDR ranges). */
  readonly trustedProxies: readonly string[];
}

export class CookiePolicyError extends Error {
  override readonly name = 'CookiePolicyError';
}

export function cookiePolicyFromEnv(env: NodeJS.ProcessEnv = process.env): CookiePolicy {
  const s = (env[SECURE_COOKIE_ENV] ?? '').trim().toLowerCase();
  if (!['', 'true', 'false'].includes(s)) throw new CookiePolicyError(`${SECURE_COOKIE_ENV}=${env[SECURE_COOKIE_ENV] ?? ''} must be true or false`);
  const proxies = (env[TRUSTED_PROXIES_ENV] ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '');
  for (const p of proxies) {
    const [net, bits] = p.split('/');
    const family = isIP(net ?? '');
    const ok = family !== 0 && (bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32)));
    if (!ok) throw new CookiePolicyError(`${TRUSTED_PROXIES_ENV}: ${p} is not an IP address or CIDR range`);
  }
  return { secure: s === 'true', trustedProxies: proxies };
}

/** The trusted proxies as a BlockList (addresses or CIDR ranges, as cookiePolicyFromEnv checked them). */
export function trustList(ranges: readonly string[]): BlockList {
  const list = new BlockList();
  for (const r of ranges) {
    const [net, bits] = r.split('/') as [string, string | undefined];
    const family = isIP(net) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(net, bits === undefined ? (family === 'ipv6' ? 128 : 32) : Number(bits), family);
  }
  return list;
}

/** Whether the session cookie for this request gets the Secure flag. */
export function secureCookieFor(req: Request, p: CookiePolicy, trusted: BlockList = trustList(p.trustedProxies)): boolean {
  if (p.secure) return true;
  const peer = (req.socket.remoteAddress ?? '').replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
  if (peer === '' || p.trustedProxies.length === 0) return false;
  if (!trusted.check(peer, isIP(peer) === 6 ? 'ipv6' : 'ipv4')) return false;
  // The nearest proxy's word is the last one in the list.
  const proto = (req.get('x-forwarded-proto') ?? '').split(',').pop()?.trim().toLowerCase();
  return proto === 'https';
}

export function sessionCookie(secret: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${secret}; Path=/ops; HttpOnly; SameSite=Strict; Max-Age=${SESSION_MS / 1000}${secure ? '; Secure' : ''}`;
}

export function clearedCookie(): string {
  return `${SESSION_COOKIE}=; Path=/ops; HttpOnly; SameSite=Strict; Max-Age=0`;
}

export function cookieValue(req: Request, name = SESSION_COOKIE): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

export interface OpsAuth {
  readonly db: Db;
  readonly operators: Operators;
  readonly now: () => Date;
}

export interface Caller {
  readonly operator: Operator;
  /** The session the request came with (null: a bearer token). */
  readonly sessionId: string | null;
}

/** The operator behind this request (bearer token or live session), or null. */
export async function callerOf(req: Request, a: OpsAuth): Promise<Caller | null> {
  const auth = req.headers.authorization;
  if (auth !== undefined && auth.startsWith('Bearer ')) {
    const op = a.operators.byToken(auth.slice(7).trim());
    return op === null ? null : { operator: op, sessionId: null };
  }
  const secret = cookieValue(req);
  if (secret === undefined) return null;
  const s = await liveSession(a.db, a.operators, secret, a.now());
  return s === null ? null : { operator: s.operator, sessionId: s.id };
}

/** 401 unless the request carries an operator's token or a live session; the caller lands in res.locals.caller. */
export function requireOperator(a: OpsAuth) {
  return (req: Request, res: Response, next: NextFunction): void => {
    callerOf(req, a).then((caller) => {
      if (caller !== null) {
        res.locals['caller'] = caller;
        next();
        return;
      }
      res.status(401).set('WWW-Authenticate', 'Bearer realm="switchyard-ops"').json({ error: 'operator token required (Authorization: Bearer <your operator token>, or sign in at /ops)' });
    }, next);
  };
}

export function callerIn(res: Response): Caller {
  const c = res.locals['caller'] as Caller | undefined;
  if (c === undefined) throw new Error('requireOperator did not run');
  return c;
}
