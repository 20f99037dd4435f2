// Drives the planned lifecycles through the merchant API, as a careful merchant backend would:
// every POST has an idempotency key and is retried with the same key when the answer is lost
// (502 from a dead process, 500, 429, 409 in progress); some requests are replayed or sent twice
// at once on purpose. It records every final answer per key (for the byte-for-byte check) and
// every case whose answer is prescribed (400, 409, 422) that did not behave.

import { createHmac } from 'node:crypto';
import { actAsCustomer } from './customer.ts';
import type { CustomerResult } from './customer.ts';
import { AMOUNT_STEPS, floorToStep, VAULTED_CARD } from './plan.ts';
import type { PaymentPlan, Repeat, Step } from './plan.ts';
import { SHORT_KEYS_METADATA, STRIPE_ACCOUNT, STRIPE_WEBHOOK_SECRET } from './topology.ts';

export interface Answer {
  readonly status: number;
  readonly body: string;
}

export interface Exchange extends Answer {
  readonly merchant: number;
  readonly key: string;
  readonly path: string;
}

export type DriverInvariant = 'idempotency' | 'amounts' | 'legal_edges' | 'webhook_auth' | 'customer_deadline';

export interface Misbehaviour {
  readonly invariant: DriverInvariant;
  readonly planIndex: number;
  readonly paymentId: string | null;
  readonly detail: string;
}

export interface DriverResult {
  readonly operations: number;
  readonly exchanges: readonly Exchange[];
  readonly misbehaviours: readonly Misbehaviour[];
  /** Plan index -> payment id, for payments the API created. */
  readonly paymentIds: ReadonlyMap<number, string>;
  /** Forged webhook event ids the driver posted (none may change anything). */
  readonly forgedEvents: readonly string[];
  /** How the simulated customers' walks ended, per lifecycle (e.g. complete.returned). */
  readonly customers: Readonly<Record<string, number>>;
}

/** An attempt the gateway stopped waiting for its customer on: being cancelled, cancelled, or parked. */
const FENCED_STATUSES: ReadonlySet<string> = new Set(['fencing', 'abandoned', 'review']);

/** The merchant's page the customers come back to (never fetched: the walk ends at its Location). */
export const RETURN_URL_BASE = 'http://127.0.0.1:9/chaos-shop/return';

export interface DriverOptions {
  readonly baseUrl: string;
  readonly apiKeys: readonly string[];
  /** The merchants' publishable keys (POST /v1/tokens, for plans paid with a vaulted card). */
  readonly publishableKeys: readonly string[];
  readonly seed: number;
  readonly concurrency: number;
  /** Called as each operation starts (the fault injector's clock). */
  readonly onOperation: (op: number) => void;
  readonly onPaymentDone?: () => void;
  /** How long to wait for a payment or refund to settle before moving on. */
  readonly settleTimeoutMs: number;
  /** How long a request is retried (same key) before it counts as unanswered. */
  readonly requestTimeoutMs: number;
  /** A certificate authority the customers' browsers trust (the Adyen sandbox's pages). */
  readonly customerCa?: string;
}

type Json = Record<string, unknown>;

const RESTING = new Set(['authorized', 'captured', 'voided', 'declined', 'expired', 'failed', 'needs_review']);

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

function parse(body: string): Json {
  try {
    return JSON.parse(body) as Json;
  } catch {
    return {};
  }
}

export class Driver {
  private ops = 0;
  private readonly exchanges: Exchange[] = [];
  private readonly misbehaviours: Misbehaviour[] = [];
  private readonly paymentIds = new Map<number, string>();
  private readonly forged: string[] = [];
  private readonly customers: Record<string, number> = {};

  constructor(private readonly o: DriverOptions) {}

  private get ca(): { ca?: string } {
    return this.o.customerCa === undefined ? {} : { ca: this.o.customerCa };
  }

  async run(plans: readonly PaymentPlan[]): Promise<DriverResult> {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < plans.length) {
        const plan = plans[next++]!;
        try {
          await this.lifecycle(plan);
        } catch (err) {
          this.flag('idempotency', plan, null, `lifecycle stopped: ${(err as Error).message}`);
        }
        this.o.onPaymentDone?.();
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.o.concurrency, plans.length)) }, lane));
    return { operations: this.ops, exchanges: this.exchanges, misbehaviours: this.misbehaviours, paymentIds: this.paymentIds, forgedEvents: this.forged, customers: this.customers };
  }

  private flag(invariant: DriverInvariant, plan: PaymentPlan, paymentId: string | null, detail: string): void {
    this.misbehaviours.push({ invariant, planIndex: plan.index, paymentId, detail });
  }

  private tick(): void {
    this.ops += 1;
    this.o.onOperation(this.ops);
  }

  /** One POST with its key, retried with the same key until a final answer (or the deadline). */
  private async post(merchant: number, path: string, body: Json, key: string, record = true): Promise<Answer> {
    const deadline = Date.now() + this.o.requestTimeoutMs;
    let wait = 50;
    for (;;) {
      let answer: Answer | null = null;
      try {
        const res = await fetch(`${this.o.baseUrl}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${this.o.apiKeys[merchant]!}`, 'idempotency-key': key, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        answer = { status: res.status, body: await res.text() };
      } catch {
        answer = null; // connection lost: the answer is unknown, retry with the same key
      }
      const retry = answer === null || answer.status >= 500 || answer.status === 429 || (answer.status === 409 && parse(answer.body)['code'] === 'idempotency_request_in_progress');
      if (!retry && answer !== null) {
        if (record && answer.status !== 400) this.exchanges.push({ ...answer, merchant, key, path });
        return answer;
      }
      if (Date.now() > deadline) return answer ?? { status: 0, body: 'no answer' };
      await sleep(wait);
      wait = Math.min(wait * 2, 1_000);
    }
  }

  /**
   * The plan's card in the vault, as a merchant's checkout would put it there (POST /v1/tokens with
   * the publishable key, no Idempotency-Key): retried on a lost answer or a 5xx/429, which may leave an
   * unused payment method behind, as it would for a real checkout.
   */
  private async tokenize(merchant: number): Promise<string | null> {
    const deadline = Date.now() + this.o.requestTimeoutMs;
    const card = { number: VAULTED_CARD, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: '737', holder_name: 'Chaos Customer' };
    let wait = 50;
    for (;;) {
      try {
        const res = await fetch(`${this.o.baseUrl}/v1/tokens`, {
          method: 'POST', headers: { authorization: `Bearer ${this.o.publishableKeys[merchant]!}`, 'content-type': 'application/json' },
          body: JSON.stringify({ card }), signal: AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        if (res.status === 201) return String(parse(text)['id']);
        if (res.status < 500 && res.status !== 429) return null;
        const after = Number(res.headers.get('retry-after'));
        if (Number.isFinite(after) && after > 0) wait = Math.max(wait, after * 1000);
      } catch {
        // connection lost: tokenize again
      }
      if (Date.now() > deadline) return null;
      await sleep(wait);
      wait = Math.min(wait * 2, 2_000);
    }
  }

  /** Sends once, replays, or sends twice at once — per the plan — and returns the first final answer. */
  private async send(merchant: number, path: string, body: Json, key: string, repeat: Repeat): Promise<Answer> {
    this.tick();
    if (repeat === 'concurrent') {
      this.tick();
      const [a] = await Promise.all([this.post(merchant, path, body, key), this.post(merchant, path, body, key)]);
      return a;
    }
    const first = await this.post(merchant, path, body, key);
    if (repeat === 'replay') {
      this.tick();
      await this.post(merchant, path, body, key);
    }
    return first;
  }

  private async get(merchant: number, path: string): Promise<{ status: number; json: Json }> {
    for (;;) {
      try {
        const res = await fetch(`${this.o.baseUrl}${path}`, { headers: { authorization: `Bearer ${this.o.apiKeys[merchant]!}` }, signal: AbortSignal.timeout(30_000) });
        const text = await res.text();
        if (res.status < 500 && res.status !== 429) return { status: res.status, json: parse(text) };
      } catch {
        // retry
      }
      await sleep(200);
    }
  }

  /** Polls the payment until it rests (or, with `orAwaitingCustomer`, waits for its customer), or the timeout. */
  private async settlePayment(merchant: number, id: string, orAwaitingCustomer = false, timeoutMs = this.o.settleTimeoutMs): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    let wait = 100;
    for (;;) {
      const { json } = await this.get(merchant, `/v1/payments/${id}`);
      const status = String(json['status']);
      if (RESTING.has(status) || (orAwaitingCustomer && status === 'requires_action') || Date.now() > deadline) return json;
      await sleep(wait);
      wait = Math.min(wait * 2, 1_000);
    }
  }

  private async settleRefund(merchant: number, id: string): Promise<string> {
    const deadline = Date.now() + this.o.settleTimeoutMs;
    let wait = 100;
    for (;;) {
      const { json } = await this.get(merchant, `/v1/refunds/${id}`);
      const status = String(json['status']);
      if (status === 'succeeded' || status === 'failed' || status === 'reversed' || Date.now() > deadline) return status;
      await sleep(wait);
      wait = Math.min(wait * 2, 1_000);
    }
  }

  private async lifecycle(plan: PaymentPlan): Promise<void> {
    const m = plan.merchant;
    const k = (what: string): string => `chaos-${this.o.seed}-${plan.index}-${what}`;
    let vaultedId: string | null = null;
    if (plan.vaulted === true) {
      vaultedId = await this.tokenize(m);
      if (vaultedId === null) {
        this.flag('idempotency', plan, null, 'POST /v1/tokens gave no payment method');
        return;
      }
    }
    const createBody = {
      amount: plan.amount, currency: plan.currency, reference: k('ref'), capture_method: plan.captureMethod,
      payment_method: vaultedId === null ? { type: 'card', test_card: plan.card } : { type: 'card', id: vaultedId },
      ...(plan.authentication === undefined ? {} : { return_url: `${RETURN_URL_BASE}/${plan.index}` }),
      ...(plan.shortKeys === true ? { metadata: SHORT_KEYS_METADATA } : {}),
    };
    const created = await this.send(m, '/v1/payments', createBody, k('create'), plan.createRepeat);
    if (created.status !== 201 && created.status !== 202) {
      this.flag('idempotency', plan, null, `create answered ${created.status}: ${created.body.slice(0, 200)}`);
      return;
    }
    const id = String(parse(created.body)['id']);
    this.paymentIds.set(plan.index, id);
    let p = await this.settlePayment(m, id, plan.authentication !== undefined);
    if (plan.authentication !== undefined && p['status'] === 'requires_action') p = await this.authenticate(plan, id, p);
    let pendingRefunds = false;

    for (const [n, s] of plan.steps.entries()) {
      const status = String(p['status']);
      const authorized = Number(p['amount_authorized'] ?? 0);
      const captured = Number(p['amount_captured'] ?? 0);
      const refunded = Number(p['amount_refunded'] ?? 0);
      const key = k(`${n}-${s.kind}`);
      switch (s.kind) {
        case 'capture': {
          if (status !== 'authorized') continue;
          const amount = Math.max(AMOUNT_STEPS[plan.currency], floorToStep(Math.floor((authorized * s.percent) / 100), plan.currency));
          const a = await this.send(m, `/v1/payments/${id}/capture`, { amount }, key, s.repeat);
          // 402 capture_declined and 409 capture_rejected are the provider's answers under faults, not misbehaviour.
          if (a.status !== 200 && a.status !== 202 && a.status !== 402 && a.status !== 409) this.flag('idempotency', plan, id, `capture of ${amount} answered ${a.status}: ${a.body.slice(0, 200)}`);
          break;
        }
        case 'void': {
          if (status !== 'authorized') continue;
          const a = await this.send(m, `/v1/payments/${id}/void`, {}, key, s.repeat);
          if (a.status !== 200 && a.status !== 202 && a.status !== 402 && a.status !== 409) this.flag('idempotency', plan, id, `void answered ${a.status}: ${a.body.slice(0, 200)}`);
          break;
        }
        case 'refund': {
          if (status !== 'captured' || pendingRefunds) continue;
          const refundable = captured - refunded;
          const amount = s.percent >= 100 ? refundable : floorToStep(Math.floor((refundable * s.percent) / 100), plan.currency);
          if (amount < 1) continue;
          const a = await this.send(m, `/v1/payments/${id}/refunds`, { amount }, key, s.repeat);
          if (a.status === 201 || a.status === 202) {
            const final = await this.settleRefund(m, String(parse(a.body)['id']));
            if (final !== 'succeeded' && final !== 'failed' && final !== 'reversed') pendingRefunds = true;
          } else if (a.status !== 409 && a.status !== 402) {
            this.flag('idempotency', plan, id, `refund of ${amount} answered ${a.status}: ${a.body.slice(0, 200)}`);
          }
          break;
        }
        case 'refund_pair': {
          if (status !== 'captured' || pendingRefunds) continue;
          const half = floorToStep(Math.floor((captured - refunded) / 2), plan.currency);
          if (half < 1) continue;
          this.tick();
          this.tick();
          const answers = await Promise.all([this.post(m, `/v1/payments/${id}/refunds`, { amount: half }, `${key}-a`), this.post(m, `/v1/payments/${id}/refunds`, { amount: half }, `${key}-b`)]);
          for (const a of answers) {
            // As for a single refund: a 409 (another request still holds the key, the state moved, or the
            // provider rejected it) or a 402 (declined) is not a misbehaviour.
            if (a.status === 409 || a.status === 402) {
              pendingRefunds = true;
              continue;
            }
            if (a.status !== 201 && a.status !== 202) {
              this.flag('idempotency', plan, id, `one of two refunds of ${half} (${captured - refunded} refundable) answered ${a.status}: ${a.body.slice(0, 200)}`);
              continue;
            }
            const final = await this.settleRefund(m, String(parse(a.body)['id']));
            if (final !== 'succeeded' && final !== 'failed' && final !== 'reversed') pendingRefunds = true;
          }
          break;
        }
        case 'over_refund': {
          // Only when every refund this driver made is final: then what remains is exact.
          if (status !== 'captured' || pendingRefunds) continue;
          const amount = captured - refunded + 1;
          this.tick();
          const a = await this.post(m, `/v1/payments/${id}/refunds`, { amount }, key);
          // A refund the provider reversed after it succeeded (fault late_reversal) is refundable again;
          // the answer read before this step may predate the reversal.
          const fresh = a.status === 201 || a.status === 202 ? (await this.get(m, `/v1/payments/${id}`)).json : null;
          const reversedSince = fresh !== null && Array.isArray(fresh['refunds']) && (fresh['refunds'] as { status?: unknown }[]).some((r) => r.status === 'reversed' || r.status === 'failed');
          if ((a.status !== 422 || parse(a.body)['code'] !== 'amount_exceeds_captured') && !reversedSince) {
            this.flag('amounts', plan, id, `refund of ${amount} with ${captured - refunded} refundable answered ${a.status} (want 422 amount_exceeds_captured)`);
            if (a.status === 201 || a.status === 202) await this.settleRefund(m, String(parse(a.body)['id']));
          }
          break;
        }
        case 'over_capture': {
          if (status !== 'authorized') continue;
          this.tick();
          const a = await this.post(m, `/v1/payments/${id}/capture`, { amount: authorized + 1 }, key);
          if (a.status !== 422 || parse(a.body)['code'] !== 'amount_exceeds_authorized') {
            this.flag('amounts', plan, id, `capture of ${authorized + 1} with ${authorized} authorized answered ${a.status} (want 422 amount_exceeds_authorized)`);
          }
          break;
        }
        case 'race': {
          if (status !== 'authorized') continue;
          this.tick();
          this.tick();
          const [c, v] = await Promise.all([this.post(m, `/v1/payments/${id}/capture`, {}, `${key}-capture`), this.post(m, `/v1/payments/${id}/void`, {}, `${key}-void`)]);
          const ok = (x: Answer): boolean => x.status === 200 || x.status === 202;
          if (ok(c) && ok(v)) this.flag('legal_edges', plan, id, `capture (${c.status}) and void (${v.status}) of one authorization were both accepted`);
          // Both refused by the state machine (invalid_state) is wrong: one of them must win. A 409
          // capture_rejected / void_rejected is the provider's answer to the winner, not a refusal of both.
          const stateRefusal = (x: Answer): boolean => x.status === 409 && parse(x.body)['code'] === 'invalid_state';
          if (stateRefusal(c) && stateRefusal(v)) this.flag('legal_edges', plan, id, `capture (${c.status}) and void (${v.status}) were both refused`);
          break;
        }
        case 'reuse_key': {
          this.tick();
          const a = await this.post(m, '/v1/payments', { ...createBody, amount: plan.amount + 1 }, k('create'), false);
          if (a.status !== 422 || parse(a.body)['code'] !== 'idempotency_key_reused') this.flag('idempotency', plan, id, `create key reused with another body answered ${a.status} (want 422 idempotency_key_reused)`);
          break;
        }
        case 'bad_request': {
          this.tick();
          const a = await this.post(m, `/v1/payments/${id}/capture`, { amount: 1, status: 'captured' }, key);
          if (a.status !== 400 || parse(a.body)['code'] !== 'validation_error') this.flag('idempotency', plan, id, `capture with an unknown field answered ${a.status} (want 400 validation_error)`);
          break;
        }
        case 'forged_webhook': {
          this.tick();
          await this.forgeWebhook(plan, id, p);
          break;
        }
      }
      if (s.kind !== 'forged_webhook' && s.kind !== 'reuse_key') p = await this.settlePayment(m, id);
    }
  }

  /**
   * The customer at the provider's page, as the plan says: complete or fail it, leave it (the
   * deadline passes), or press Complete after expires_at. Then the payment is settled: an abandoned
   * one only after its deadline and the cancel the gateway must send.
   */
  private async authenticate(plan: PaymentPlan, id: string, p: Json): Promise<Json> {
    const auth = plan.authentication!;
    const next = p['next_action'] as { url?: string; expires_at?: string } | null | undefined;
    const m = plan.merchant;
    if (typeof next?.url !== 'string' || typeof next.expires_at !== 'string') {
      // The create's answer came after the deadline (retried through API kills and outages): the
      // gateway has given up on the customer and its cancel is in flight. No page to offer is then
      // right; the run's checks still require the cancel to settle the payment.
      const attempts = (p['attempts'] as { status?: string }[] | undefined) ?? [];
      if (FENCED_STATUSES.has(attempts[attempts.length - 1]?.status ?? '')) {
        const tag = `${auth.lifecycle}.too_late`;
        this.customers[tag] = (this.customers[tag] ?? 0) + 1;
        return this.settlePayment(m, id, false, this.o.settleTimeoutMs);
      }
      this.flag('customer_deadline', plan, id, `requires_action without next_action url and expires_at: ${JSON.stringify(next)} (attempt ${attempts[attempts.length - 1]?.status ?? 'none'})`);
      return p;
    }
    const expiresAt = Date.parse(next.expires_at);
    const returnUrl = `${RETURN_URL_BASE}/${plan.index}`;
    this.tick();
    let r: CustomerResult;
    switch (auth.lifecycle) {
      case 'complete':
      case 'fail':
        r = await actAsCustomer(next.url, { choice: auth.lifecycle, returnUrl, deadlineMs: 60_000, ...this.ca });
        break;
      case 'abandon':
        r = await actAsCustomer(next.url, { choice: 'complete', returnUrl, leaveOnChallenge: true, deadlineMs: 60_000, ...this.ca });
        break;
      case 'complete_late':
        r = await actAsCustomer(next.url, {
          choice: 'complete', returnUrl, deadlineMs: 60_000 + Math.max(0, expiresAt - Date.now()), ...this.ca,
          beforeSubmit: () => sleep(Math.max(0, expiresAt + auth.lateByMs - Date.now())),
        });
        break;
    }
    const tag = `${auth.lifecycle}${plan.card === '4000008260003178' ? '_8260' : ''}.${r.outcome}`;
    this.customers[tag] = (this.customers[tag] ?? 0) + 1;
    // Back at the merchant's page, the gateway must have named this payment.
    if (r.outcome === 'returned' && r.paymentId !== id) this.flag('customer_deadline', plan, id, `the customer came back to return_url with payment_id ${r.paymentId ?? '(none)'}: ${r.detail}`);
    // A customer who never comes back waits out the deadline; then the gateway's cancel must settle it.
    const wait = Math.max(0, expiresAt - Date.now()) + this.o.settleTimeoutMs;
    return this.settlePayment(m, id, false, wait);
  }

  /** A Stripe event signed with the wrong secret that would cancel this payment if it were believed. */
  private async forgeWebhook(plan: PaymentPlan, paymentId: string, p: Json): Promise<void> {
    const attempts = (p['attempts'] as { id: string; provider_reference: string | null }[] | undefined) ?? [];
    const attempt = attempts[attempts.length - 1];
    const eventId = `evt_forged_${this.o.seed}_${plan.index}`;
    this.forged.push(eventId);
    const body = JSON.stringify({
      id: eventId, object: 'event', type: 'payment_intent.canceled', created: Math.floor(Date.now() / 1000), api_version: '2024-06-20', livemode: false,
      data: { object: { id: attempt?.provider_reference ?? 'pi_forged', object: 'payment_intent', status: 'canceled', amount: plan.amount, currency: plan.currency.toLowerCase(), metadata: { attempt_id: attempt?.id ?? '', payment_id: paymentId } } },
    });
    const t = Math.floor(Date.now() / 1000);
    const sig = createHmac('sha256', `${STRIPE_WEBHOOK_SECRET}_wrong`).update(`${t}.${body}`).digest('hex');
    let status = 0;
    for (let tries = 0; tries < 20; tries++) {
      try {
        const res = await fetch(`${this.o.baseUrl}/webhooks/${STRIPE_ACCOUNT}`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${sig}` }, body });
        await res.arrayBuffer();
        status = res.status;
        if (status < 500) break;
      } catch {
        // the API process may be down: try again
      }
      await sleep(200);
    }
    if (status >= 200 && status < 300) this.flag('webhook_auth', plan, paymentId, `a webhook signed with a wrong secret was accepted (${status})`);
  }
}

export type { Step };
