// The sandbox control API as an express Router, so the gateway can mount it in-process and
// startControlServer can serve it on its own port. It never shares a provider's listener:
// an outage must not take the switch that ends it down with it.
// Routes carry their full `/_sandbox/...` paths: mount with `app.use(createControlRouter(...))`.

import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { z } from 'zod';
import type { FaultSpec, SandboxControl, WebhookSettings } from './control.ts';

const faultBody = z
  .object({
    op: z.enum(['create', 'authorize', 'capture', 'refund', 'void', 'release', 'resume', 'any']),
    mode: z.enum(['error_503', 'reset_before_processing', 'accept_then_drop', 'latency', 'rate_limited', 'release_refused', 'release_fail_later', 'already_done', 'reverse_before', 'reverse_after', 'reverse_twice', 'reverse_before_then_drop']),
    count: z.number().int().min(1).default(1),
    latency_ms: z.number().int().min(0).optional(),
    process: z.enum(['before', 'after']).optional(),
  })
  .strict()
  .refine((b) => b.mode !== 'latency' || b.latency_ms !== undefined, { message: 'latency_ms is required for mode latency', path: ['latency_ms'] });

const outageBody = z.object({ seconds: z.number().min(0) }).strict();

const webhooksBody = z
  .object({
    enabled: z.boolean().optional(),
    duplicate: z.number().min(0).max(1).optional(),
    reorder: z.boolean().optional(),
    delay_ms: z.number().int().min(0).optional(),
  })
  .strict();

const clockBody = z.object({ advance_s: z.number().min(0) }).strict();
const technicalCancelBody = z.object({ in_flight: z.enum(['cancelled', 'authorised']) }).strict();
const announceBody = z.object({ except: z.array(z.string().min(1)).optional() }).strict();

/** null: back to the provider's own key lifetime (Stripe 24 h, Adyen 7 days). */
const idempotencyBody = z.object({ key_ttl_s: z.number().positive().nullable() }).strict();
const rawCardDataBody = z.object({ enabled: z.boolean() }).strict();
/** `payment`: the provider's own reference of a captured payment (a PaymentIntent id, an Adyen pspReference). */
const openDisputeBody = z.object({ payment: z.string().min(1).max(64), amount: z.number().int().min(1).optional(), reason: z.string().min(1).max(64).optional() }).strict();
const decideDisputeBody = z.object({ outcome: z.enum(['won', 'lost']) }).strict();

class BadBody extends Error {
  constructor(
    readonly field: string | null,
    message: string,
  ) {
    super(message);
  }
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.map(String).join('.') || (issue?.code === 'unrecognized_keys' ? issue.keys.join(',') : null);
  throw new BadBody(field, field ? `${field}: ${issue?.message ?? 'invalid'}` : (issue?.message ?? 'invalid body'));
}

export function createControlRouter(sandboxes: readonly SandboxControl[]): Router {
  const byAccount = new Map(sandboxes.map((s) => [s.account, s]));
  const router = express.Router();
  router.use('/_sandbox', express.json());

  const sandboxOf = (req: Request, res: Response): SandboxControl | undefined => {
    const account = String(req.params['account']);
    const sandbox = byAccount.get(account);
    if (sandbox === undefined) res.status(404).json({ error: { message: `unknown sandbox account: ${account}`, field: 'account' } });
    return sandbox;
  };

  router.get('/_sandbox', (_req, res) => {
    res.json({ sandboxes: sandboxes.map((s) => ({ account: s.account, type: s.type, url: s.url })) });
  });

  router.post('/_sandbox/:account/faults', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    const body = parse(faultBody, req.body);
    const spec: FaultSpec = {
      op: body.op,
      mode: body.mode,
      count: body.count,
      ...(body.latency_ms !== undefined && { latencyMs: body.latency_ms }),
      ...(body.process !== undefined && { process: body.process }),
    };
    res.json(await sandbox.scheduleFaultTracked(spec));
  });

  router.get('/_sandbox/:account/faults', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    res.json({ faults: (await sandbox.faults()).map((f) => ({ id: f.id, op: f.op, mode: f.mode, remaining: f.remaining, hit_keys: f.hitKeys })) });
  });

  router.delete('/_sandbox/:account/faults', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    res.json({ cleared: await sandbox.clearFaults() });
  });

  router.post('/_sandbox/:account/outage', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    const { seconds } = parse(outageBody, req.body);
    await sandbox.outage(seconds);
    res.json({ outage_s: seconds });
  });

  router.get('/_sandbox/:account/ledger', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    res.json({ payments: await sandbox.ledger() });
  });

  // Every request the provider listener of this process took (reads, faulted and refused ones
  // included): the bench counts provider calls per payment with it.
  router.get('/_sandbox/:account/requests', (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    res.json({ requests_received: sandbox.requestsReceived(), max_in_flight: sandbox.maxInFlight() });
  });

  router.post('/_sandbox/:account/webhooks', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    const body = parse(webhooksBody, req.body);
    const settings: Partial<WebhookSettings> = {
      ...(body.enabled !== undefined && { enabled: body.enabled }),
      ...(body.duplicate !== undefined && { duplicate: body.duplicate }),
      ...(body.reorder !== undefined && { reorder: body.reorder }),
      ...(body.delay_ms !== undefined && { delayMs: body.delay_ms }),
    };
    await sandbox.configureWebhooks(settings);
    res.json({ configured: body });
  });

  router.post('/_sandbox/:account/clock', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    const { advance_s } = parse(clockBody, req.body);
    await sandbox.advanceClock(advance_s);
    res.json({ advanced_s: advance_s });
  });

  router.post('/_sandbox/:account/reports/announce', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    const body = parse(announceBody, req.body);
    if (sandbox.announceReports === undefined) {
      res.status(404).json({ error: { message: `sandbox ${sandbox.account} (${sandbox.type}) announces no reports`, field: null } });
      return;
    }
    res.json({ announced: await sandbox.announceReports(body.except === undefined ? {} : { except: body.except }) });
  });

  router.post('/_sandbox/:account/technical-cancel', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    const { in_flight } = parse(technicalCancelBody, req.body);
    if (sandbox.configureTechnicalCancel === undefined) {
      res.status(404).json({ error: { message: `sandbox ${sandbox.account} (${sandbox.type}) has no cancel by merchant reference`, field: null } });
      return;
    }
    await sandbox.configureTechnicalCancel(in_flight);
    res.json({ in_flight });
  });

  router.post('/_sandbox/:account/raw-card-data', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    const { enabled } = parse(rawCardDataBody, req.body);
    await sandbox.configureRawCardData(enabled);
    res.json({ enabled });
  });

  // A chargeback on a captured payment, as the provider opens one (its own events follow), so a
  // merchant can try answering disputes against `npm start`.
  router.post('/_sandbox/:account/disputes', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    const body = parse(openDisputeBody, req.body);
    const opened = await sandbox.openDispute(body.payment, { ...(body.amount !== undefined && { amount: body.amount }), ...(body.reason !== undefined && { reason: body.reason }) });
    res.status(201).json({ dispute: opened.id });
  });

  // The issuer's decision on a defended dispute: the knob that makes it won or lost later.
  router.post('/_sandbox/:account/disputes/:dispute/decide', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    const { outcome } = parse(decideDisputeBody, req.body);
    await sandbox.decideDispute(String(req.params['dispute']), outcome);
    res.json({ dispute: req.params['dispute'], outcome });
  });

  router.post('/_sandbox/:account/idempotency', async (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    const { key_ttl_s } = parse(idempotencyBody, req.body);
    await sandbox.setKeyLifetime(key_ttl_s === null ? null : Math.round(key_ttl_s * 1000));
    res.json({ key_ttl_s });
  });

  router.get('/_sandbox/:account/ca.pem', (req, res) => {
    const sandbox = sandboxOf(req, res);
    if (!sandbox) return;
    if (sandbox.caPem === undefined) {
      res.status(404).json({ error: { message: `sandbox ${sandbox.account} serves no certificate`, field: null } });
      return;
    }
    res.type('application/x-pem-file').send(sandbox.caPem);
  });

  router.use('/_sandbox', (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (err instanceof BadBody) {
      res.status(400).json({ error: { message: err.message, field: err.field } });
    } else if (isJsonSyntaxError(err)) {
      res.status(400).json({ error: { message: 'body is not valid JSON', field: null } });
    } else if (err instanceof RangeError) {
      res.status(400).json({ error: { message: err.message, field: null } });
    } else {
      next(err);
    }
  });
  return router;
}

function isJsonSyntaxError(err: unknown): boolean {
  return err instanceof SyntaxError && (err as SyntaxError & { status?: number }).status === 400;
}
