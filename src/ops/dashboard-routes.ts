// /ops: the operations dashboard (one server-sent page, no build step), its small JSON admin API,
// and BullMQ's own board at /ops/queues for queue detail — all behind the admin token.
//
//   GET  /ops                               the page (it signs in, then reads the API below)
//   POST /ops/login | /ops/logout           session cookie from the token
//   GET  /ops/api/overview[?older_than=5m]  indicators, breakers, stuck payments, dead letters, discrepancies
//   GET  /ops/api/payments/:id              a payment with its attempts and timeline
//   POST /ops/api/payments/:id/resolve      { as: authorized|captured|failed|voided, note, operator?, override? } — as `switchyard payments resolve`
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
import { clearedCookie, requireAdmin, sessionCookie, tokenMatches } from './admin-auth.ts';
import { dashboardPage, disabledPage } from './dashboard-page.ts';
import { deadLetters, openDiscrepancies, replayDeadLetterRow } from './dead-letters.ts';
import { listStuckPayments, loadPaymentDetail, OpsInputError, resolvePayment } from './payment-ops.ts';

export interface OpsOptions {
  /** Null: the dashboard is off (and says how to turn it on). */
  readonly adminToken: string | null;
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
  const token = o.adminToken;
  if (token === null) {
    router.use('/ops', (_req, res) => page(res, disabledPage(), 503));
    return router;
  }
  const admin = requireAdmin(token);

  router.get('/ops', (_req, res) => page(res, dashboardPage()));
  router.post('/ops/login', express.urlencoded({ extended: false, limit: '4kb' }), express.json({ limit: '4kb' }), (req, res) => {
    const given = (req.body as { token?: unknown } | undefined)?.token;
    if (!tokenMatches(given, token)) {
      res.status(401);
      if (req.is('application/json') === false) page(res, dashboardPage('That is not the admin token.'), 401);
      else res.json({ error: 'wrong admin token' });
      return;
    }
    res.set('Set-Cookie', sessionCookie(token, Date.now(), req.get('x-forwarded-proto') === 'https'));
    if (req.is('application/json') === false) res.redirect(303, '/ops');
    else res.json({ ok: true });
  });
  router.post('/ops/logout', (_req, res) => {
    res.set('Set-Cookie', clearedCookie()).redirect(303, '/ops');
  });

  const api = express.Router();
  api.use(admin, express.json({ limit: '16kb' }));
  api.get('/overview', handle(async (req, res) => {
    const olderThan = typeof req.query['older_than'] === 'string' ? parseDuration(req.query['older_than']) : 5 * 60_000;
    if (olderThan === null) throw new OpsInputError('older_than must be a duration such as 5m or 1h');
    const [indicators, counters, stuck, dead, discrepancies] = await Promise.all([
      rt.metrics.indicators(),
      rt.metrics.counters(),
      listStuckPayments(rt.database.db, { olderThanMs: olderThan, now: rt.now(), limit: 100 }),
      deadLetters(rt, 100),
      openDiscrepancies(rt, 100),
    ]);
    res.set('Cache-Control', 'no-store').json({ indicators, counters, stuck, stuck_older_than_s: olderThan / 1000, dead_letters: dead, discrepancies });
  }));
  api.get('/payments/:id', handle(async (req, res) => {
    const detail = await loadPaymentDetail(rt.database.db, String(req.params['id']));
    if (detail === null) throw new OpsInputError(`no payment ${String(req.params['id'])}`);
    res.json(detail);
  }));
  api.post('/payments/:id/resolve', handle(async (req, res) => {
    const body = (req.body ?? {}) as { as?: unknown; note?: unknown; operator?: unknown; override?: unknown };
    const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    const r = await resolvePayment(rt, String(req.params['id']), text(body.as) ?? '', text(body.note) ?? '', { operator: text(body.operator), override: text(body.override) });
    res.json(r);
  }));
  api.post('/dead-letters/:id/replay', handle(async (req, res) => {
    const id = String(req.params['id']);
    if (!/^\d+$/.test(id)) throw new OpsInputError(`dead letter id "${id}" is not a number`);
    const ok = await replayDeadLetterRow(rt, Number(id));
    if (!ok) {
      res.status(404).json({ error: `no dead letter ${id}` });
      return;
    }
    res.json({ id: Number(id), replayed: true });
  }));
  router.use('/ops/api', api);

  const board = new ExpressAdapter();
  board.setBasePath('/ops/queues');
  createBullBoard({ queues: queueNames(rt).map((n) => new BullMQAdapter(rt.queues.get(n), { readOnlyMode: true })), serverAdapter: board, options: { uiConfig: { boardTitle: 'Switchyard queues' } } });
  router.use('/ops/queues', admin, board.getRouter() as Router);
  return router;
}
