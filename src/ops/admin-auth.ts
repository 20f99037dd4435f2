// The operations pages sit behind one admin token, read from the environment only
// (SWITCHYARD_ADMIN_TOKEN). Scripts send it as a bearer token; a browser signs in once and gets
// an HttpOnly, SameSite=Strict session cookie holding an HMAC of the token and its issue time, so
// the token never sits in the page, rotating the token ends every session, and sessions expire.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

export const ADMIN_TOKEN_ENV = 'SWITCHYARD_ADMIN_TOKEN';
export const SESSION_COOKIE = 'sy_ops';
const SESSION_MS = 12 * 3_600_000;
const MIN_TOKEN_LENGTH = 24;

/** The token, null when unset (the dashboard is then off), or the problem with it. */
export function adminTokenFromEnv(env: NodeJS.ProcessEnv = process.env): { ok: true; token: string | null } | { ok: false; problem: string } {
  const token = env[ADMIN_TOKEN_ENV];
  if (token === undefined || token === '') return { ok: true, token: null };
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
    return { ok: false, problem: `${ADMIN_TOKEN_ENV} must be at least ${MIN_TOKEN_LENGTH} characters without spaces (try: openssl rand -hex 24)` };
  }
  return { ok: true, token };
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function mac(token: string, issuedAt: number): string {
  return createHmac('sha256', token).update(`switchyard-ops-session:${issuedAt}`).digest('base64url');
}

export function sessionCookie(token: string, now = Date.now(), secure = false): string {
  return `${SESSION_COOKIE}=${now}.${mac(token, now)}; Path=/ops; HttpOnly; SameSite=Strict; Max-Age=${SESSION_MS / 1000}${secure ? '; Secure' : ''}`;
}

export function clearedCookie(): string {
  return `${SESSION_COOKIE}=; Path=/ops; HttpOnly; SameSite=Strict; Max-Age=0`;
}

function cookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

export function isAdmin(req: Request, token: string, now = Date.now()): boolean {
  const auth = req.headers.authorization;
  if (auth !== undefined && auth.startsWith('Bearer ')) return same(auth.slice(7).trim(), token);
  const session = cookie(req, SESSION_COOKIE);
  if (session === undefined) return false;
  const [at, sig] = session.split('.');
  const issuedAt = Number(at);
  if (!Number.isSafeInteger(issuedAt) || sig === undefined || now - issuedAt > SESSION_MS || issuedAt > now + 60_000) return false;
  return same(sig, mac(token, issuedAt));
}

export function tokenMatches(given: unknown, token: string): boolean {
  return typeof given === 'string' && same(given, token);
}

/** 401 unless the request carries the admin token or a live session. */
export function requireAdmin(token: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (isAdmin(req, token)) {
      next();
      return;
    }
    res.status(401).set('WWW-Authenticate', 'Bearer realm="switchyard-ops"').json({ error: 'admin token required (Authorization: Bearer <SWITCHYARD_ADMIN_TOKEN>, or sign in at /ops)' });
  };
}
