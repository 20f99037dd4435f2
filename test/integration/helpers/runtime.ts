// A whole gateway runtime for a test file: its own database, queue prefix and in-process sandboxes.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRuntime } from '../../../src/app/runtime.ts';
import type { Runtime, RuntimeOptions } from '../../../src/app/runtime.ts';
import { startPayment, waitForPayment } from '../../../src/app/payment-service.ts';
import type { StartPaymentRequest } from '../../../src/app/payment-service.ts';
import type { Payment } from '../../../src/core/payment.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { createTestDatabase } from './db.ts';
import type { TestDatabase } from './db.ts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Two in-process Stripe sandbox accounts: enough to exercise failover before Adyen exists. */
export function twoStripeConfig(extra = ''): string {
  return `
connectors:
  stripe_a:
    type: stripe
    secret_key: sk_test_a
    webhook_secrets: [whsec_a]
    timeout_ms: 1500
    breaker: { volume_threshold: 50 }
  stripe_b:
    type: stripe
    secret_key: sk_test_b
    webhook_secrets: [whsec_b]
    timeout_ms: 1500
    breaker: { volume_threshold: 50 }
routing:
  default: { priority: [stripe_a, stripe_b] }
  max_attempts: 3
${extra}`;
}

/** The in-process Adyen sandbox first, a Stripe sandbox behind it (failover must not reach it while a shopper authenticates). */
export function adyenFirstConfig(extra = ''): string {
  return `
connectors:
  adyen_a:
    type: adyen
    endpoint: sandbox
    api_key: sandbox
    merchant_account: SwitchyardSandbox
    hmac_keys: ["44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"]
    basic_auth: { username: switchyard, password: sandbox }
    timeout_ms: 1500
    breaker: { volume_threshold: 50 }
  stripe_b:
    type: stripe
    secret_key: sk_test_b
    webhook_secrets: [whsec_b]
    timeout_ms: 1500
    breaker: { volume_threshold: 50 }
routing:
  default: { priority: [adyen_a, stripe_b] }
  max_attempts: 3
${extra}`;
}

export interface TestGateway {
  readonly rt: Runtime;
  readonly db: TestDatabase;
  readonly merchantId: string;
  readonly prefix: string;
  pay(over?: Partial<StartPaymentRequest>): Promise<Payment>;
  waitFor(id: string, done: (p: Payment) => boolean, timeoutMs?: number): Promise<Payment>;
  close(): Promise<void>;
}

export async function startTestGateway(name: string, configYaml: string, over: Partial<RuntimeOptions> = {}): Promise<TestGateway> {
  const db = await createTestDatabase(name);
  const dir = mkdtempSync(join(tmpdir(), `sy-${name}-`));
  const configFile = join(dir, 'switchyard.yaml');
  writeFileSync(configFile, configYaml);
  const prefix = `sytest_${name}_${randomBytes(3).toString('hex')}`;
  const rt = await startRuntime({ role: 'all', databaseUrl: db.url, redisUrl: REDIS_URL, configFile, queuePrefix: prefix, relaySweepMs: 200, log: () => undefined, ...over });
  const { merchant } = await createMerchant(rt.database.db, { name: `m-${name}` });
  return {
    rt, db, merchantId: merchant.id, prefix,
    async pay(o = {}) {
      const r = await startPayment(rt, merchant.id, {
        amount: 1000, currency: 'EUR', reference: `order-${randomBytes(3).toString('hex')}`, captureMethod: 'manual', allowPartialAuthorization: false,
        paymentMethod: { test_card: '4242424242424242' }, metadata: {}, ...o,
      });
      if (!r.ok) throw new Error(r.message);
      return r.payment;
    },
    async waitFor(id, done, timeoutMs = 15_000) {
      const p = await waitForPayment(rt, merchant.id, id, done, timeoutMs);
      if (p === null) throw new Error(`payment ${id} not found`);
      return p;
    },
    async close() {
      await rt.stop();
      await db.drop();
    },
  };
}

export const settled = (p: Payment): boolean => !['created', 'authorizing', 'auth_unknown', 'requires_action', 'capturing', 'voiding'].includes(p.state);
