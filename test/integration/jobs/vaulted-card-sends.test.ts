// Issue 44, the worker's side of a vaulted card: the vault reveals the card for each authorization
// send (its access log names the attempt, the request key and the fields), the code is destroyed at
// the first authorization response, a failover after a decline sends the card without it, and a
// resend whose first send carried a code that is gone since is never sent: resolved by query and
// fence instead (unknown{card_code_gone}). The number appears nowhere in the gateway's tables, Redis
// keys or log lines.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderCallEffect } from '../../../src/core/effects.ts';
import type { CallOutcome } from '../../../src/core/outcome.ts';
import { scanForCardData } from '../../../src/ops/card-data-scan.ts';
import { createPool, endPool } from '../../../src/pg-kit/index.ts';
import { vaultDatabaseUrl } from '../../../src/vault/database.ts';
import { REDIS_URL, settled, startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

const year = new Date().getUTCFullYear() + 2;
const VISA = { number: '4242424242424242', exp_month: 10, exp_year: year, cvc: '314', holder_name: 'Grace Hopper' };
// processing_error: a decline another connector may still approve (retry elsewhere).
const DECLINED = { ...VISA, number: '4000000000000119' };
const logs: string[] = [];
/** Attempt ids whose first authorize send gets the code destroyed right after it (as if the hour had passed). */
const forgetAfterFirstSend = new Set<string>();
let gw: TestGateway;
let vaultPool: ReturnType<typeof createPool>;

beforeAll(async () => {
  gw = await startTestGateway('vaulted_sends', twoStripeConfig(), {
    log: (l) => logs.push(l),
    aroundCall: async (e: ProviderCallEffect, call: (e?: ProviderCallEffect) => Promise<CallOutcome>) => {
      const o = await call();
      if (e.op === 'authorize' && forgetAfterFirstSend.delete(e.attemptId)) {
        const p = await gw.db.pool.query<{ id: string }>("SELECT payment_method->>'id' AS id FROM payments WHERE id = (SELECT payment_id FROM payment_attempts WHERE id = $1)", [e.attemptId]);
        await gw.rt.vault.forgetCode(p.rows[0]!.id);
      }
      return o;
    },
  });
  vaultPool = createPool(vaultDatabaseUrl(gw.db.url), { max: 1 });
});
afterAll(async () => {
  await endPool(vaultPool);
  await gw?.close();
});

async function vaulted(card = VISA): Promise<string> {
  const r = await gw.rt.vault.tokenize(gw.merchantId, card);
  if (!r.ok) throw new Error(r.reason);
  return r.paymentMethod.id;
}

async function reveals(pmd: string): Promise<{ attempt_id: string; request_key: string; fields: string[] }[]> {
  return (await vaultPool.query<{ attempt_id: string; request_key: string; fields: string[] }>('SELECT attempt_id, request_key, fields FROM access_log WHERE payment_method_id = $1 ORDER BY id', [pmd])).rows;
}

async function codeKept(pmd: string): Promise<boolean> {
  return (await vaultPool.query('SELECT 1 FROM card_code_keys WHERE payment_method_id = $1', [pmd])).rows.length > 0;
}

describe('a vaulted card at the worker', () => {
  it('is revealed for the send (logged with attempt, key and fields), authorized, and its code destroyed at the approval', async () => {
    const pmd = await vaulted();
    expect(await codeKept(pmd)).toBe(true);
    const p = await gw.waitFor((await gw.pay({ paymentMethod: { id: pmd } })).id, settled);
    expect(p.state).toBe('authorized');
    const log = await reveals(pmd);
    expect(log).toEqual([{ attempt_id: p.attempts[0]!.id, request_key: p.attempts[0]!.authKey, fields: ['pan', 'cvc'] }]);
    expect(await codeKept(pmd)).toBe(false);
  });

  it('a decline destroys the code: the failover sends the card without it', async () => {
    const pmd = await vaulted(DECLINED);
    const p = await gw.waitFor((await gw.pay({ paymentMethod: { id: pmd } })).id, settled);
    const log = await reveals(pmd);
    // The second connector got the card without its code.
    expect(p.attempts.map((a) => a.connector)).toEqual(['stripe_a', 'stripe_b']);
    expect(log.map((r) => [r.attempt_id, r.fields])).toEqual([[p.attempts[0]!.id, ['pan', 'cvc']], [p.attempts[1]!.id, ['pan']]]);
  });

  it('a resend whose first send carried the code, now destroyed, is not sent: queried and fenced, and with no proof parked for a person, never failed over', async () => {
    const pmd = await vaulted();
    const stripeA = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
    // More resets than the SDK's own same-key retries: the send ends unknown{connection_reset}.
    await stripeA.scheduleFault({ op: 'authorize', mode: 'reset_before_processing', count: 5 });
    // The first send's attempt: the one payment about to be created goes to stripe_a first.
    const created = await gw.pay({ paymentMethod: { id: pmd } });
    forgetAfterFirstSend.add(created.attempts[0]!.id);
    const p = await gw.waitFor(created.id, settled, 30_000);
    // The first send took two resets (stripe-node retries a reset once on its own); a resend would have taken two more.
    const fault = (await stripeA.faults()).find((f) => f.op === 'authorize' && f.mode === 'reset_before_processing')!;
    await stripeA.clearFaults();
    expect(fault.remaining).toBe(3);
    const first = p.attempts[0]!;
    const log = await reveals(pmd);
    const firstSends = log.filter((r) => r.attempt_id === first.id);
    // One reveal that was sent with the code, one that found it gone and sent nothing.
    expect(firstSends.map((r) => r.fields)).toEqual([['pan', 'cvc'], ['pan']]);
    // Nothing found by the query (the request never got through), nothing to cancel: no proof, so no failover.
    expect(first.status).toBe('review');
    expect(first.resendBlocked).toBe(true);
    expect(p.attempts).toHaveLength(1);
    expect(p.state).toBe('needs_review');
    const t = await gw.db.pool.query<{ detail: string }>("SELECT input->'outcome'->>'reason' AS detail FROM payment_transitions WHERE payment_id = $1 AND input->'outcome'->>'reason' = 'card_code_gone'", [p.id]);
    expect(t.rows).toHaveLength(1);
  });

  it('leaves no card number or code in the gateway: tables, Redis keys, log lines', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const findings = await scanForCardData({ databaseUrl: gw.db.url, redis: { client: redis, prefix: gw.prefix }, texts: [{ name: 'gateway log', lines: logs }] }, [VISA.number, DECLINED.number]);
      expect(findings).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});
