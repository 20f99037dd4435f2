// Customer authentication (issue 27): a connector that can send the customer to the provider's
// 3-D Secure page (it implements resume) must redirect, resume from what the page sent back, never
// take the browser's word, and leave nothing charged when the customer fails or never comes back.
// The kit plays the customer over plain HTTP (customer-browser.ts): it opens the provider's page,
// presses a button and catches the request the page sends to the connector's returnUrl, which it
// reads as the gateway's return endpoint does (readCustomerReturn: the provider's evidence for the
// attempt, and only the fields the resume uses).

import { describe, expect, it } from 'vitest';
import { customerReturnFields } from '../core/authentication.ts';
import type { CallOutcome } from '../core/outcome.ts';
import type { AuthenticationRequest, Connector } from '../connectors/contract.ts';
import { testCardNumber } from '../connectors/test-cards.ts';
import type { TestCardScenario } from '../connectors/test-cards.ts';
import type { FaultSpec } from '../sandboxes/shared/control.ts';
import { useSandbox } from './context.ts';
import { pressButton } from './customer-browser.ts';
import { authorizePayment, keyFor, settleModification } from './harness.ts';
import type { AuthorizeOptions, PaymentHandle } from './harness.ts';
import { capture } from './cases-payments.ts';
import type { ConformanceSandbox, ConformanceSubject } from './subject.ts';

/** Where the connector is told to send the browser back. Nothing listens: the kit stops before the request. */
const RETURN_ORIGIN = 'http://127.0.0.1:9';
const COMPLETE = 'Complete authentication';
const FAIL = 'Fail authentication';

const BROWSER = {
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) switchyard-kit', acceptHeader: 'text/html', language: 'en-GB', colorDepth: 24,
  screenHeight: 900, screenWidth: 1440, timeZoneOffset: 0, javaEnabled: false, javaScriptEnabled: true,
} as const;

function authentication(attemptId: string, mode: AuthenticationRequest['mode'] = 'automatic', returnUrl: string | null = `${RETURN_ORIGIN}/authenticate/${attemptId}/return`): AuthenticationRequest {
  return { mode, forced: false, returnUrl, origin: returnUrl === null ? null : RETURN_ORIGIN, browserInfo: BROWSER, shopperIp: '192.0.2.10' };
}

type Action = Extract<CallOutcome, { kind: 'action_required' }>;

async function challenged(connector: Connector, scenario: TestCardScenario = 'authentication_challenge', o: AuthorizeOptions = {}): Promise<{ p: PaymentHandle; action: Action }> {
  const attemptId = o.attemptId ?? `attempt_kit${Math.random().toString(36).slice(2, 12)}`;
  const p = await authorizePayment(connector, { ...o, attemptId, card: testCardNumber(scenario), authentication: authentication(attemptId) });
  expect(p.outcome, JSON.stringify(p.outcome)).toMatchObject({ kind: 'action_required' });
  const action = p.outcome as Action;
  expect(action.redirect, 'a redirect the gateway can present').toBeDefined();
  expect(['GET', 'POST']).toContain(action.redirect!.method);
  expect(p.providerRef, 'the provider names the payment awaiting its customer').toBeTruthy();
  return { p, action };
}

/** The customer presses a button; what the provider's page sent back, as the browser brought it. */
async function returnOf(action: Action, button: string, ca: string | undefined): Promise<Record<string, string>> {
  const back = await pressButton(action.redirect!, { button, stopAtOrigin: RETURN_ORIGIN, ...(ca === undefined ? {} : { ca }) });
  expect(new URL(back.url).pathname).toMatch(/^\/authenticate\/.+\/return$/);
  return customerReturnFields(back.form, back.query);
}

/** What the gateway's return endpoint keeps of a real return: it must carry the provider's evidence for the attempt. */
function kept(connector: Connector, p: PaymentHandle, fields: Record<string, string>): Record<string, string> {
  expect(typeof connector.readCustomerReturn, 'a connector with resume reads its customers\' returns').toBe('function');
  const reading = connector.readCustomerReturn!(fields, { providerRef: p.providerRef });
  expect(reading, JSON.stringify(reading)).toMatchObject({ ok: true });
  const keep = reading.ok ? reading.keep : {};
  // Secrets and 3-D Secure 1 data the resume never sends are not kept.
  expect(Object.keys(keep).filter((k) => /secret|^MD$|^PaRes$/i.test(k))).toEqual([]);
  return { ...keep };
}

async function customer(connector: Connector, p: PaymentHandle, action: Action, button: string, ca: string | undefined): Promise<Record<string, string>> {
  return kept(connector, p, await returnOf(action, button, ca));
}

function resume(connector: Connector, p: PaymentHandle, returned: Record<string, string>, n = 1): Promise<CallOutcome> {
  return connector.resume!({
    paymentId: p.paymentId, attemptId: p.attemptId, providerRef: p.providerRef, amount: p.amount, currency: p.currency,
    idempotencyKey: keyFor(connector, p.paymentId, 'resume', n), returned,
  });
}

/** The cancel the gateway sends for an attempt it gives up on (abandoned, failed authentication, an action it cannot present). */
async function cancel(connector: Connector, p: PaymentHandle): Promise<CallOutcome> {
  const ref = p.providerRef!;
  const v = await connector.void({ paymentId: p.paymentId, attemptId: p.attemptId, providerRef: ref, amount: p.amount, currency: p.currency, idempotencyKey: keyFor(connector, p.paymentId, 'void') });
  return settleModification(connector, v, { op: 'void', paymentRef: ref, amount: p.amount, currency: p.currency });
}

/** A fault on the resume call (Stripe: the PaymentIntent retrieve; Adyen: /payments/details). */
const resumeFault = (mode: FaultSpec['mode'], count: number): FaultSpec => ({ op: 'resume', mode, count });

export function registerAuthenticationCases<S extends ConformanceSandbox>(subject: ConformanceSubject<S>): void {
  describe('customer authentication (3-D Secure by redirect)', () => {
    const kit = useSandbox(subject);
    const capable = (c: Connector): boolean => c.resume !== undefined;

    it('the challenge card asks for the customer; Complete, then resume: authorized once, and it captures', async () => {
      const { connector, ledgerOf } = kit();
      if (!capable(connector)) return;
      const { p, action } = await challenged(connector);
      expect(await ledgerOf(p.attemptId), 'nothing authorised before the customer authenticates').toSatisfy((rows: { authorized: number }[]) => rows.every((r) => r.authorized === 0));
      const returned = await customer(connector, p, action, COMPLETE, subject.browserCa);
      const o = await resume(connector, p, returned);
      expect(o, JSON.stringify(o)).toMatchObject({ kind: 'succeeded', amount: 1000 });
      expect(await ledgerOf(p.attemptId)).toMatchObject([{ authorized: 1000, captured: 0 }]);
      // The same resume again (a worker retried it) answers the same, and authorises nothing more.
      expect(await resume(connector, p, returned)).toMatchObject({ kind: 'succeeded', amount: 1000 });
      expect((await capture(connector, { ...p, providerRef: 'providerRef' in o ? o.providerRef ?? p.providerRef : p.providerRef }, 1000)).kind).toBe('succeeded');
      expect(await ledgerOf(p.attemptId)).toMatchObject([{ authorized: 1000, captured: 1000 }]);
    });

    it('Fail authentication: the resume is a decline (authentication_failed), and the cancel leaves nothing charged', async () => {
      const { connector, ledgerOf } = kit();
      if (!capable(connector)) return;
      const { p, action } = await challenged(connector);
      const o = await resume(connector, p, await customer(connector, p, action, FAIL, subject.browserCa));
      expect(o, JSON.stringify(o)).toMatchObject({ kind: 'declined', code: 'authentication_failed' });
      // A provider object that could still be confirmed (Stripe: requires_payment_method) is cancelled, confirmed, before the decline counts as proof.
      if (o.kind === 'declined' && o.stillOpen === true) expect((await cancel(connector, p)).kind).toBe('succeeded');
      expect((await ledgerOf(p.attemptId)).every((r) => r.authorized === 0 && r.captured === 0)).toBe(true);
    });

    it('authenticated, then declined by the issuer: the resume answers the decline, not an approval', async () => {
      const { connector, ledgerOf } = kit();
      if (!capable(connector)) return;
      const { p, action } = await challenged(connector, 'authentication_then_insufficient_funds');
      const o = await resume(connector, p, await customer(connector, p, action, COMPLETE, subject.browserCa));
      expect(o, JSON.stringify(o)).toMatchObject({ kind: 'declined', code: 'insufficient_funds' });
      expect((await ledgerOf(p.attemptId)).every((r) => r.authorized === 0)).toBe(true);
    });

    it('a customer who never comes back: the cancel is confirmed, the page no longer completes, nothing is charged', async () => {
      const { connector, ledgerOf } = kit();
      if (!capable(connector)) return;
      const { p, action } = await challenged(connector);
      expect((await cancel(connector, p)).kind).toBe('succeeded');
      // The customer comes back late and presses Complete: the provider must not authorise it.
      const late = await customer(connector, p, action, COMPLETE, subject.browserCa).catch(() => null);
      if (late !== null) expect((await resume(connector, p, late)).kind).not.toBe('succeeded');
      expect((await ledgerOf(p.attemptId)).every((r) => r.authorized === 0 && r.captured === 0)).toBe(true);
    });

    it('authentication none, or no page to come back to: declined authentication_required, no page offered', async () => {
      const { connector, ledgerOf } = kit();
      if (!capable(connector)) return;
      for (const auth of [authentication('x', 'none'), authentication('x', 'automatic', null)]) {
        const p = await authorizePayment(connector, { card: testCardNumber('authentication_challenge'), authentication: auth });
        expect(p.outcome, JSON.stringify(p.outcome)).toMatchObject({ kind: 'declined', code: 'authentication_required' });
        expect((await ledgerOf(p.attemptId)).every((r) => r.authorized === 0)).toBe(true);
      }
    });

    it('what the browser claims is not trusted: a return with forged fields never authorises', async () => {
      const { connector, ledgerOf } = kit();
      if (!capable(connector)) return;
      const { p } = await challenged(connector);
      // The customer never pressed anything; the "return" is made up (Adyen: a redirectResult of another shape).
      const o = await resume(connector, p, { redirectResult: 'forged-by-the-browser' });
      expect(o.kind, JSON.stringify(o)).not.toBe('succeeded');
      expect((await ledgerOf(p.attemptId)).every((r) => r.authorized === 0)).toBe(true);
    });

    it('a return without the provider\'s evidence for the attempt is no return: nothing to resume from', async () => {
      const { connector } = kit();
      if (!capable(connector)) return;
      const { p } = await challenged(connector);
      const read = (fields: Record<string, string>) => connector.readCustomerReturn!(fields, { providerRef: p.providerRef });
      // The attempt id alone (a URL anyone can build), or 3-D Secure 1 fields no page of ours sends.
      expect(read({})).toMatchObject({ ok: false });
      expect(read({ MD: 'md', PaRes: 'pares' })).toMatchObject({ ok: false });
    });

    it('another payment\'s real return never resumes this one into an approval', async () => {
      const { connector, ledgerOf } = kit();
      if (!capable(connector)) return;
      const mine = await challenged(connector);
      const theirs = await challenged(connector);
      const fields = await returnOf(theirs.action, COMPLETE, subject.browserCa);
      const reading = connector.readCustomerReturn!(fields, { providerRef: mine.p.providerRef });
      // Refused as evidence (Stripe: another PaymentIntent), or the provider's answer is bound to the other payment (Adyen).
      if (reading.ok) expect((await resume(connector, mine.p, { ...reading.keep })).kind).not.toBe('succeeded');
      expect((await ledgerOf(mine.p.attemptId)).every((r) => r.authorized === 0)).toBe(true);
    });

    it('the same return resumed again under another key: never a decline nor proof; "processed already" is unknown (in progress)', async () => {
      const { connector, ledgerOf } = kit();
      if (!capable(connector)) return;
      const { p, action } = await challenged(connector);
      const returned = await customer(connector, p, action, COMPLETE, subject.browserCa);
      expect(await resume(connector, p, returned, 1)).toMatchObject({ kind: 'succeeded', amount: 1000 });
      // Adyen answers a processed redirectResult with 422 errorCode 704 and says nothing of the
      // result (its AUTHORISATION notification does); a provider with a lookup answers the result.
      const again = await resume(connector, p, returned, 2);
      if (again.kind === 'unknown') expect(again.reason, JSON.stringify(again)).toBe('in_progress');
      else expect(again, JSON.stringify(again)).toMatchObject({ kind: 'succeeded', amount: 1000 });
      expect(await ledgerOf(p.attemptId)).toMatchObject([{ authorized: 1000 }]);
    });

    // Faults last: they are global to the block's sandbox.
    it('a lost resume answer is unknown, never a decline; the same resume again authorises exactly once', async () => {
      const { connector, sandbox, ledgerOf } = kit();
      if (!capable(connector)) return;
      for (const [mode, count] of [['error_503', 1], ['reset_before_processing', 1 + (subject.sdkResendsAfterReset ?? 1)], ['accept_then_drop', 1 + (subject.sdkResendsAfterReset ?? 1)]] as const) {
        const { p, action } = await challenged(connector);
        const returned = await customer(connector, p, action, COMPLETE, subject.browserCa);
        await sandbox.scheduleFault(resumeFault(mode, count));
        const lost = await resume(connector, p, returned);
        expect(lost, `${mode}: ${JSON.stringify(lost)}`).toMatchObject({ kind: 'unknown' });
        const again = await resume(connector, p, returned);
        expect(again, `${mode}: ${JSON.stringify(again)}`).toMatchObject({ kind: 'succeeded', amount: 1000 });
        expect(await ledgerOf(p.attemptId), mode).toMatchObject([{ authorized: 1000 }]);
      }
    });
  });
}
