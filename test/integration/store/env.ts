// A StepEnv and requests for store tests: one connector that authorizes directly (no prepare call)
// and supports partial and multiple captures and partial refunds.

import { DEFAULT_CORE_POLICY } from '../../../src/core/policy.ts';
import type { ConnectorPolicy } from '../../../src/core/policy.ts';
import { newId } from '../../../src/core/ids.ts';
import type { CallOutcome } from '../../../src/core/outcome.ts';
import type { NewPaymentRequest, StepEnv } from '../../../src/core/step.ts';
import type { PaymentInput } from '../../../src/core/inputs.ts';

const HOUR = 3_600_000;

export const DIRECT: ConnectorPolicy = {
  maxKeyLength: 255,
  keyRetentionMs: 24 * HOUR,
  authHoldMs: 7 * 24 * HOUR,
  capabilities: {
    manualCapture: true, partialCapture: true, multicapture: true, partialRefund: true,
    queryByReference: true, queryByMerchantReference: false, cancelByMerchantReference: true, preparesAuthorization: false, asyncModifications: false,
  },
};

export const env: StepEnv = {
  policies: { direct_a: DIRECT, direct_b: DIRECT },
  openBreakers: new Set(),
  core: DEFAULT_CORE_POLICY,
  maxAttempts: 3,
  newId: (kind) => newId(kind),
};

export function paymentRequest(merchantId: string, over: Partial<NewPaymentRequest> = {}): NewPaymentRequest {
  return {
    id: newId('payment'),
    merchantId,
    livemode: false,
    reference: 'order-1',
    amount: 1000,
    currency: 'EUR',
    captureMethod: 'manual',
    allowPartialAuthorization: false,
    routing: { snapshot: 'v1', rule: 'default', candidates: ['direct_a', 'direct_b'], skipped: [] },
    metadata: { order: '42' },
    ...over,
  };
}

export function succeeded(amount: number, providerRef = `psp_${newId('event').slice(4)}`): CallOutcome {
  return { kind: 'succeeded', providerRef, amount };
}

export function authorizeAnswer(attemptId: string, outcome: CallOutcome): PaymentInput {
  return { type: 'call_result', ref: { op: 'authorize', attemptId }, outcome };
}
