// The connector conformance kit: ONE suite every connector passes against its own sandbox. It is
// the definition of done for a connector (docs/connectors.md). Register it from a vitest file:
//
//   defineConnectorConformance(stripeConformanceSubject);

import { describe } from 'vitest';
import { registerAlreadyDoneCases } from './cases-already-done.ts';
import { registerAuthenticationCases } from './cases-authentication.ts';
import { registerCardCases } from './cases-cards.ts';
import { registerClassificationCases } from './cases-classification.ts';
import { registerFaultCases } from './cases-faults.ts';
import { registerFenceByReferenceCases } from './cases-fence-by-reference.ts';
import { registerOneCallCases } from './cases-one-call.ts';
import { registerPaymentCases } from './cases-payments.ts';
import { registerWebhookCases } from './cases-webhooks.ts';
import { registerWireCases } from './cases-wire.ts';
import type { ConformanceSandbox, ConformanceSubject } from './subject.ts';

export type { ConformanceSandbox, ConformanceSubject, KitConnectorOptions, WireReply, WireSample, WebhookEndpoint } from './subject.ts';

export function defineConnectorConformance<S extends ConformanceSandbox>(subject: ConformanceSubject<S>): void {
  describe(`connector conformance: ${subject.name}`, () => {
    registerPaymentCases(subject);
    registerCardCases(subject);
    registerFaultCases(subject);
    registerAlreadyDoneCases(subject);
    registerFenceByReferenceCases(subject);
    registerOneCallCases(subject);
    registerAuthenticationCases(subject);
    registerClassificationCases(subject);
    registerWebhookCases(subject);
    registerWireCases(subject);
  });
}
