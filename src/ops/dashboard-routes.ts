// /ops: the operations dashboard (one server-sent page, no build step), its small JSON admin API,
// and BullMQ's own board at /ops/queues for queue detail — all behind an operator's token
// (src/ops/operators.ts). Every action is recorded in the audit trail under the operator's name.
//
//   GET  /ops                               the page (it signs in, then reads the API below)
//   POST /ops/login | /ops/logout           a server-side session from an operator's token; sign-out ends it
//                                           (every POST: same-origin only, src/ops/same-origin.ts)
//   GET  /ops/api/overview[?older_than=5m]  indicators, breakers, stuck payments, dead letters, discrepancies
//   GET  /ops/api/audit[?operator=&target=] the operator audit trail, newest first
//   GET  /ops/api/payments/:id              a payment with its attempts and timeline
//   POST /ops/api/payments/:id/resolve      { as: authorized|captured|failed|voided, note, override? } — as `switchyard payments resolve`
//   POST /ops/api/dead-letters/:id/replay   as `switchyard dlq replay`
//   GET  /ops/queues                        bull-board (read-only: replays go through the outbox)

import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import type { Runtime } from '../app/runtime.ts';
import { TIMER_QUEUE, callQueueName } from '../jobs/queues.ts';
import { DELIVERY_QUEUE, INBOUND_QUEUE, MERCHANT_EVENT_QUEUE } from '../webhooks/webhook-jobs.ts';
import { parseDuration } from '../routing/duration.ts';
import { listAudit, recordAudit } from './audit.ts';
import { callerIn, callerOf, clearedCookie, requireOperator, secureCookieFor, sessionCookie } from './operator-auth.ts';
import type { CookiePolicy } from './operator-auth.ts';
import { openSession, revokeSession } from './operator-sessions.ts';
import { sameOriginOnly } from './same-origin.ts';
import type { Operators } from './operators.ts';
import { dashboardPage, disabledPage } from './dashboard-page.ts';
import { deadLetters, openDiscrepancies, replayDeadLetterRow } from './dead-letters.ts';
import { listStuckPayments, loadPaymentDetail, OpsInputError, resolvePayment } from './payment-ops.ts';

export interface OpsOptions {
  /** No operators: the dashboard is off (and says how to turn it on). */
  readonly operators: Operators;
  readonly cookies: CookiePolicy;
}

/** Every queue the gateway uses: one per connector account, timers, and the webhook queues. */
function queueNames(rt: Runtime): string[] {
  return [...Object.keys(rt.config.current().config.connectors).map(callQueueName), TIMER_QUEUE, INBOUND_QUEUE, MERCHANT_EVENT_QUEUE, DELIVERY_QUEUE];
}

type Handler = (req: Request, res: Response) => Promise<void>;

/** JSON errors for the admin API: operator mistakes are 4xx with their reason. */
function handle(run: Handler) {
  return (req: Request, res: Response, next: NextFunction): void => {
    run(req, res).catch((err: unknown) => {
      if (err instanceof OpsInputError) res.status(/^no payment/.test(err.message) ? 404 : 422).json({ error: err.message });
      else next(err);
    });
  };
}

function page(res: Response, html: string, status = 200): void {
  res.status(status).set({ 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Security-Policy': "default-src 'self'; script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline' 'self'; frame-ancestors 'none'", 'X-Frame-Options': 'DENY' }).send(html);
}

export function createOpsRouter(rt: Runtime, o: OpsOptions): Router {
  const router = express.Router();
  if (o.operators.size === 0) {
    router.use('/ops', (_req, res) => page(res, disabledPage(), 503));
    return router;
  }
  const auth = { db: rt.database.db, operators: o.operators, now: rt.now };
  const admin = requireOperator(auth);

  // Sign-in, sign-out and every action: from the dashboard's own pages only (src/ops/same-origin.ts).
  router.use('/ops', (req, res, next) => (['GET', 'HEAD', 'OPTIONS'].includes(req.method) ? next() : sameOriginOnly(req, res, next)));
  router.get('/ops', (_req, res) => page(res, dashboardPage()));
  router.post('/ops/login', express.urlencoded({ extended: false, limit: '4kb' }), express.json({ limit: '4kb' }), handle(async (req, res) => {
    const op = o.operators.byToken((req.body as { token?: unknown } | undefined)?.token);
    if (op === null) {
      res.status(401);
      if (req.is('application/json') === false) page(res, dashboardPage('That is not an operator token.'), 401);
      else res.json({ error: 'not an operator token' });
      return;
    }
    const now = rt.now();
    const session = await rt.database.db.transaction(async (tx) => {
      const s = await openSession(tx, op, now);
      await recordAudit(tx, { operator: op.name, action: 'operator.sign_in', target: `session:${s.id.slice(0, 16)}`, after: { expires_at: s.expiresAt.toISOString() }, at: now });
      return s;
    });
    res.set('Set-Cookie', sessionCookie(session.secret, secureCookieFor(req, o.cookies)));
    if (req.is('application/json') === false) res.redirect(303, '/ops');
    else res.json({ ok: true, operator: op.name });
  }));
  router.post('/ops/logout', handle(async (req, res) => {
    const caller = await callerOf(req, auth);
    if (caller?.sessionId != null) {
      const id = caller.sessionId;
      const now = rt.now();
      await rt.database.db.transaction(async (tx) => {
        if (await revokeSession(tx, id, now)) await recordAudit(tx, { operator: caller.operator.name, action: 'operator.sign_out', target: `session:${id.slice(0, 16)}`, at: now });
      });
    }
    res.set('Set-Cookie', clearedCookie()).redirect(303, '/ops');
  }));

  const api = express.Router();
  api.use(admin, express.json({ limit: '16kb' }));
  api.get('/overview', handle(async (req, res) => {
    const olderThan = typeof req.query['older_than'] === 'string' ? parseDuration(req.query['older_than']) : 5 * 60_000;
    if (olderThan === null) throw new OpsInputError('older_than must be a duration such as 5m or 1h');
    const [indicators, counters, stuck, dead, discrepancies, audit] = await Promise.all([
      rt.metrics.indicators(),
      rt.metrics.counters(),
      listStuckPayments(rt.database.db, { olderThanMs: olderThan, now: rt.now(), limit: 100 }),
      deadLetters(rt, 100),
      openDiscrepancies(rt, 100),
      listAudit(rt.database.db, { limit: 50 }),
    ]);
    res.set('Cache-Control', 'no-store').json({
      indicators, counters, stuck, stuck_older_than_s: olderThan / 1000, dead_letters: dead, discrepancies,
      operator: callerIn(res).operator.name, audit: audit.map((a) => ({ ...a, at: a.at.toISOString() })),
    });
  }));
  api.get('/payments/:id', handle(async (req, res) => {
    const detail = await loadPaymentDetail(rt.database.db, String(req.params['id']));
    if (detail === null) throw new OpsInputError(`no payment ${String(req.params['id'])}`);
    res.json(detail);
  }));
  api.post('/payments/:id/resolve', handle(async (req, res) => {
    const body = (req.body ?? {}) as { as?: unknown; note?: unknown; override?: unknown };
    const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    const r = await resolvePayment(rt, String(req.params['id']), text(body.as) ?? '', text(body.note) ?? '', callerIn(res).operator.name, { override: text(body.override) });
    res.json(r);
  }));
  api.post('/dead-letters/:id/replay', handle(async (req, res) => {
    const id = String(req.params['id']);
    if (!/^\d+$/.test(id)) throw new OpsInputError(`dead letter id "${id}" is not a number`);
    const ok = await replayDeadLetterRow(rt, Number(id), callerIn(res).operator.name);
    if (!ok) {
      res.status(404).json({ error: `no dead letter ${id}` });
      return;
    }
    res.json({ id: Number(id), replayed: true });
  }));
  api.get('/audit', handle(async (req, res) => {
    const q = (k: string) => (typeof req.query[k] === 'string' && req.query[k] !== '' ? req.query[k] : undefined);
    const limit = q('limit') === undefined ? 200 : Number(q('limit'));
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new OpsInputError('limit must be a whole number from 1 to 1000');
    const operator = q('operator');
    const target = q('target');
    const rows = await listAudit(rt.database.db, { limit, ...(operator === undefined ? {} : { operator }), ...(target === undefined ? {} : { target }) });
    res.set('Cache-Control', 'no-store').json({ audit: rows.map((r) => ({ ...r, at: r.at.toISOString() })) });
  }));
  router.use('/ops/api', api);

  const board = new ExpressAdapter();
  board.setBasePath('/ops/queues');
  createBullBoard({ queues: queueNames(rt).map((n) => new BullMQAdapter(rt.queues.get(n), { readOnlyMode: true })), serverAdapter: board, options: { uiConfig: { boardTitle: 'Switchyard queues' } } });
  router.use('/ops/queues', admin, board.getRouter() as Router);
  return router;
}
