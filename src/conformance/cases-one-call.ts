// One-call authorization (issue 26): a connector that authorizes in one call and finds an attempt
// by our id before it knows the provider's reference (capabilities.queryByMerchantReference). Its
// lost answers are resolved by looking the attempt up, by resending the same request with the same
// key inside the key's retention, and past it by a person: "not found" is never proof. Each case
// makes the loss for real in the sandbox and checks the sandbox's ledger; the last one hands the
// connector's real answers to the core and checks what it decides.

import { describe, expect, it } from 'vitest';
import { newId } from '../core/ids.ts';
import type { CallOutcome } from '../core/outcome.ts';
import { DEFAULT_CORE_POLICY } from '../core/policy.ts';
import { newPayment, step } from '../core/step.ts';
import type { StepEnv } from '../core/draft.ts';
import type { Payment } from '../core/payment.ts';
import type { AuthorizeRequest, Connector } from '../connectors/contract.ts';
import { testCardNumber } from '../connectors/test-cards.ts';
import type { FaultSpec } from '../sandboxes/shared/control.ts';
import { useSandbox } from './context.ts';
import { authorizeRequest } from './harness.ts';
import type { ConformanceSandbox, ConformanceSubject } from './subject.ts';

/** Both embedded sandboxes take it (not in the shared control API's modes): perform the request, then answer (and store) a 500. */
const ERROR_500_AFTER_PROCESSING = { op: 'authorize', count: 1, mode: 'error_500_after_processing' } as unknown as FaultSpec;

interface Sent {
  readonly req: AuthorizeRequest;
  readonly sentAt: string;
}

function sendOf(connector: Connector, card = '4242424242424242'): Sent {
  return { req: { ...authorizeRequest(connector, { card }), providerRef: null }, sentAt: new Date().toISOString() };
}

function lookup(connector: Connector, s: Sent): Promise<CallOutcome> {
  return connector.query({ attemptId: s.req.attemptId, providerRef: null, amount: s.req.amount, currency: s.req.currency, sentAt: s.sentAt });
}

function refOf(o: CallOutcome): string | undefined {
  return 'providerRef' in o ? o.providerRef : undefined;
}

async function until<T>(what: () => Promise<T>, done: (x: T) => boolean, timeoutMs = 8_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const x = await what();
    if (done(x) || Date.now() > end) return x;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function registerOneCallCases<S extends ConformanceSandbox>(subject: ConformanceSubject<S>): void {
  describe('one-call authorization: lost answers', () => {
    const kit = useSandbox(subject);
    const capable = (c: Connector): boolean => c.capabilities.queryByMerchantReference && !c.capabilities.preparesAuthorization;
    const resends = subject.sdkResendsAfterReset ?? 1;

    it('a timeout after processing is unknown; the lookup pages the list and finds the authorization', async () => {
      const { connector, sandbox, connectorWith, ledgerOf } = kit();
      if (!capable(connector)) return;
      const s = sendOf(connector);
      await sandbox.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 2_000, process: 'before', count: 1 });
      const o = await connectorWith({ timeoutMs: 600 }).authorize(s.req);
      expect(o, JSON.stringify(o)).toMatchObject({ kind: 'unknown', reason: 'timeout' });
      // Newer authorizations in the window push ours off the first page (the kit's connector pages small).
      for (let i = 0; i < 3; i++) expect((await connector.authorize(sendOf(connector).req)).kind).toBe('succeeded');
      const q = await lookup(connector, s);
      expect(q, JSON.stringify(q)).toMatchObject({ kind: 'succeeded', amount: 1000 });
      expect(refOf(q)).toBeTruthy();
      expect(await ledgerOf(s.req.attemptId)).toMatchObject([{ id: refOf(q), authorized: 1000 }]);
    });

    it('a timeout before processing: a resend meanwhile is 409 (unknown), the lookup finds nothing yet, then finds it, and a resend replays it', async () => {
      const { connector, sandbox, connectorWith, ledgerOf } = kit();
      if (!capable(connector)) return;
      const s = sendOf(connector);
      await sandbox.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 2_500, process: 'after', count: 1 });
      const o = await connectorWith({ timeoutMs: 600 }).authorize(s.req);
      expect(o, JSON.stringify(o)).toMatchObject({ kind: 'unknown', reason: 'timeout' });
      const inFlight = await connector.authorize(s.req);
      expect(inFlight, JSON.stringify(inFlight)).toMatchObject({ kind: 'unknown', reason: 'in_progress' });
      const early = await lookup(connector, s);
      expect(early, JSON.stringify(early)).toMatchObject({ kind: 'unknown', reason: 'not_found' });
      const found = await until(() => lookup(connector, s), (q) => q.kind === 'succeeded');
      expect(found, JSON.stringify(found)).toMatchObject({ kind: 'succeeded', amount: 1000 });
      const replayed = await connector.authorize(s.req);
      expect(replayed, JSON.stringify(replayed)).toMatchObject({ kind: 'succeeded', amount: 1000, providerRef: refOf(found) });
      expect(await ledgerOf(s.req.attemptId)).toMatchObject([{ authorized: 1000 }]);
    });

    it('a reset before processing is unknown; not found; the same key then authorizes exactly once', async () => {
      const { connector, sandbox, ledgerOf } = kit();
      if (!capable(connector)) return;
      const s = sendOf(connector);
      await sandbox.scheduleFault({ op: 'authorize', mode: 'reset_before_processing', count: 1 + resends });
      const o = await connector.authorize(s.req);
      expect(o, JSON.stringify(o)).toMatchObject({ kind: 'unknown' });
      const q = await lookup(connector, s);
      expect(q, JSON.stringify(q)).toMatchObject({ kind: 'unknown', reason: 'not_found' });
      expect(await ledgerOf(s.req.attemptId)).toHaveLength(0);
      const again = await connector.authorize(s.req);
      expect(again, JSON.stringify(again)).toMatchObject({ kind: 'succeeded', amount: 1000 });
      expect(await ledgerOf(s.req.attemptId)).toMatchObject([{ authorized: 1000 }]);
    });

    it('a 500 after processing is stored: the resend replays the 500 (still unknown), the lookup finds the authorization', async () => {
      const { connector, sandbox, ledgerOf } = kit();
      if (!capable(connector)) return;
      const s = sendOf(connector);
      await sandbox.scheduleFault(ERROR_500_AFTER_PROCESSING);
      const o = await connector.authorize(s.req);
      expect(o, JSON.stringify(o)).toMatchObject({ kind: 'unknown', reason: 'server_error' });
      const replayed = await connector.authorize(s.req);
      expect(replayed, JSON.stringify(replayed)).toMatchObject({ kind: 'unknown', reason: 'server_error' });
      const q = await lookup(connector, s);
      expect(q, JSON.stringify(q)).toMatchObject({ kind: 'succeeded', amount: 1000 });
      expect(await ledgerOf(s.req.attemptId)).toMatchObject([{ authorized: 1000 }]);
    });

    it('a lost decline is found by the lookup as that decline, with its reference', async () => {
      const { connector, sandbox, ledgerOf } = kit();
      if (!capable(connector)) return;
      const s = sendOf(connector, testCardNumber('insufficient_funds'));
      await sandbox.scheduleFault({ op: 'authorize', mode: 'accept_then_drop', count: 1 + resends });
      const o = await connector.authorize(s.req);
      expect(o.kind).toBe('unknown');
      const q = await lookup(connector, s);
      expect(q, JSON.stringify(q)).toMatchObject({ kind: 'declined', code: 'insufficient_funds', class: 'soft', retryElsewhere: false });
      expect(refOf(q)).toBeTruthy();
      expect((await ledgerOf(s.req.attemptId)).every((e) => e.authorized === 0)).toBe(true);
    });

    // Last in the block: it moves the sandbox clock past the key's retention.
    it('not found past the retention stays unknown; the core parks the attempt for review, no resend, no failover', async () => {
      const { connector, sandbox, ledgerOf } = kit();
      if (!capable(connector)) return;
      // The core's own payment, so the connector is called with the attempt id and key the core chose.
      const env: StepEnv = {
        policies: { [connector.account]: connector.policy, other: connector.policy }, openBreakers: new Set(), core: DEFAULT_CORE_POLICY, maxAttempts: 3, newId: (k) => newId(k),
      };
      const t0 = new Date();
      const made = newPayment({
        id: newId('payment'), merchantId: 'mer_kit', livemode: false, reference: 'kit', amount: 1000, currency: 'EUR', captureMethod: 'manual', allowPartialAuthorization: false, metadata: {},
        routing: { snapshot: 'kit', rule: 'default', candidates: [connector.account, 'other'], skipped: [] },
      }, t0, env);
      let p: Payment = made.payment;
      const attempt = p.attempts[0]!;
      const effect = made.effects.find((e) => e.type === 'provider_call' && e.op === 'authorize');
      expect(effect, 'one-call: the first effect is the authorize call').toBeDefined();
      const req: AuthorizeRequest = {
        paymentId: p.id, attemptId: attempt.id, amount: 1000, currency: 'EUR', captureMethod: 'manual', paymentMethod: { testCard: '4242424242424242' }, idempotencyKey: attempt.authKey, providerRef: null,
      };
      await sandbox.scheduleFault({ op: 'authorize', mode: 'reset_before_processing', count: 1 + resends });
      const o = await connector.authorize(req);
      expect(o.kind).toBe('unknown');
      const apply = (input: Parameters<typeof step>[1], at: Date): void => {
        const r = step(p, input, at, env);
        expect(r.kind, JSON.stringify(r)).toBe('applied');
        if (r.kind === 'applied') p = r.payment;
      };
      apply({ type: 'call_result', ref: { op: 'authorize', attemptId: attempt.id, sendNo: 1 }, outcome: o }, t0);
      expect(p.state).toBe('auth_unknown');
      await sandbox.advanceClock(connector.policy.keyRetentionMs / 1000 + 60);
      const q = await connector.query({ attemptId: attempt.id, providerRef: null, amount: 1000, currency: 'EUR', sentAt: p.attempts[0]!.firstSentAt });
      expect(q, JSON.stringify(q)).toMatchObject({ kind: 'unknown', reason: 'not_found' });
      apply({ type: 'call_result', ref: { op: 'query', attemptId: attempt.id }, outcome: q }, new Date(t0.getTime() + connector.policy.keyRetentionMs + 60_000));
      expect(p.state).toBe('needs_review');
      expect(p.attempts).toHaveLength(1);
      expect(p.attempts[0]!.sends).toBe(1);
      expect(await ledgerOf(attempt.id)).toHaveLength(0);
    });
  });
}
