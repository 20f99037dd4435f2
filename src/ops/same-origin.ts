// The dashboard's state-changing requests come from its own page. SameSite=Strict keeps the session
// cookie off cross-site requests, but not off a sibling site's (same-site is not same-origin), and
// sign-in needs no cookie at all (a forged one signs the victim in as the attacker). So a browser's
// POST must say it is same-origin: Sec-Fetch-Site when the browser sends it, else Origin against the
// Host it was sent to. Scripts and the CLI send neither and are judged by their bearer token alone.

import type { NextFunction, Request, Response } from 'express';

/** Why this request is refused as cross-origin, or null. */
export function crossOriginRefusal(req: Request): string | null {
  const site = req.get('sec-fetch-site');
  // "none": the user's own action (a bookmark, the address bar), not another page's.
  if (site !== undefined) return site === 'same-origin' || site === 'none' ? null : `Sec-Fetch-Site: ${site}`;
  const origin = req.get('origin');
  if (origin === undefined) return null;
  if (!URL.canParse(origin)) return 'an Origin that is not a URL';
  const host = req.get('host');
  return host !== undefined && new URL(origin).host === host.toLowerCase() ? null : 'another Origin';
}

/** 403 for a browser request from another origin (before any body is read or session looked up). */
export function sameOriginOnly(req: Request, res: Response, next: NextFunction): void {
  const why = crossOriginRefusal(req);
  if (why === null) {
    next();
    return;
  }
  res.status(403).set('Cache-Control', 'no-store').json({ error: `cross-origin request refused (${why}): the dashboard acts only on requests from its own pages` });
}
