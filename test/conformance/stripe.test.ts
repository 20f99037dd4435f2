// Registers the Stripe connector with the conformance kit, against the Stripe sandbox.

import { withOwnSandboxDatabase } from '../integration/helpers/sandbox-db.ts';
import { readFileSync } from 'node:fs';
import Stripe from 'stripe';
import { defineConnectorConformance } from '../../src/conformance/kit.ts';
import type { ConformanceSubject, KitConnectorOptions, WireReply, WireSample } from '../../src/conformance/kit.ts';
import type { Connector, FailureSituation } from '../../src/connectors/contract.ts';
import { createConnector } from '../../src/connectors/registry.ts';
import { startStripeSandbox } from '../../src/sandboxes/stripe/index.ts';
import type { StripeSandbox } from '../../src/sandboxes/stripe/index.ts';
import { stripeSignatureHeader } from '../../src/connectors/stripe/webhook.ts';

const SANDBOX_KEY = 'sk_test_switchyard_kit';
const SECRETS = { previous: 'whsec_kit_previous', current: 'whsec_kit_current', foreign: 'whsec_kit_foreign' } as const;

const fixtures = JSON.parse(readFileSync(new URL('../fixtures/provider-specs/stripe/fixtures3.json', import.meta.url), 'utf8')) as {
  resources: Record<string, Record<string, unknown>>;
};

function stripeAccount(host: string, port: number, o: KitConnectorOptions = {}): Connector {
  const live = o.liveAccount === true;
  return createConnector(live ? 'stripe_kit_live' : 'stripe_kit', {
    type: 'stripe',
    sandbox: !live,
    settings: {
      secretKey: live ? 'sk_live_kit' : o.badCredentials === true ? 'sk_test_not_this_sandbox' : SANDBOX_KEY,
      webhookSecrets: [...(o.webhookSecrets ?? [SECRETS.current])],
      apiHost: host,
      apiPort: port,
      apiProtocol: 'http',
      timeoutMs: o.timeoutMs ?? 5_000,
      // Small pages, so every lookup by attempt id in the kit pages the list.
      lookupPageSize: 2,
    },
  });
}

function json(status: number, body: unknown): WireReply {
  return { status, headers: { 'content-type': 'application/json', 'request-id': 'req_kit_stub' }, body: JSON.stringify(body) };
}

/** Stripe's answers for what the sandbox does not produce (403, 429, a body cut short, a non-JSON body). */
function scriptedReply(situation: FailureSituation): WireReply | null {
  switch (situation) {
    case 'permission':
      return json(403, { error: { type: 'invalid_request_error', message: 'The provided key does not have the required permissions for this endpoint.' } });
    case 'rate_limited':
      return json(429, { error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly.' } });
    case 'truncated_body':
      return { ...json(200, fixtures.resources['payment_intent']), truncate: true };
    case 'unparseable':
      return { status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>502 Bad Gateway</body></html>' };
    default:
      return null;
  }
}

async function wireSamples(sandbox: StripeSandbox): Promise<readonly WireSample[]> {
  const stripe = new Stripe(SANDBOX_KEY, { host: sandbox.host, port: sandbox.port, protocol: 'http', maxNetworkRetries: 0 });
  const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'eur', confirm: true, payment_method: 'pm_card_visa', metadata: { attempt_id: 'att_wire' } });
  // The example shows `refunds`, which the pinned API version includes only when expanded.
  const charge = await stripe.charges.retrieve(typeof pi.latest_charge === 'string' ? pi.latest_charge : '', { expand: ['refunds'] });
  const refund = await stripe.refunds.create({ payment_intent: pi.id, amount: 100 });
  const dispute = await sandbox.createDispute(pi.id);
  const list = await stripe.paymentIntents.list({ limit: 1 });
  const ref = (type: string): Record<string, unknown> => fixtures.resources[type] ?? {};
  const plain = (o: object): Record<string, unknown> => JSON.parse(JSON.stringify(o)) as Record<string, unknown>;
  return [
    { objectType: 'payment_intent', actual: plain(await stripe.paymentIntents.retrieve(pi.id)), reference: ref('payment_intent') },
    { objectType: 'charge', actual: plain(charge), reference: ref('charge') },
    { objectType: 'refund', actual: plain(refund), reference: ref('refund') },
    { objectType: 'dispute', actual: dispute, reference: ref('dispute') },
    { objectType: 'list', actual: plain(list), reference: { object: 'list', data: [], has_more: false, url: '/v1/payment_intents' } },
  ];
}

export const stripeConformanceSubject: ConformanceSubject<StripeSandbox> = {
  name: 'stripe',
  makeSandbox: ({ webhook }) => withOwnSandboxDatabase('conformance_stripe', (database) => startStripeSandbox({ database, account: 'stripe_kit', secretKey: SANDBOX_KEY, webhook, webhookRetry: { maxAttempts: 2, baseMs: 20 } })),
  makeConnector: (sandbox, o) => stripeAccount(sandbox.host, sandbox.port, o),
  makeConnectorAt: ({ host, port }, o) => stripeAccount(host, port, o),
  signWebhook: (rawBody, secret, t) => ({ 'content-type': 'application/json', 'stripe-signature': stripeSignatureHeader(rawBody, secret, t) }),
  webhookSecrets: SECRETS,
  scriptedReply,
  // 0-, 2- and 3-decimal; Stripe takes three-decimal amounts only in multiples of 10.
  amountCases: [
    { currency: 'JPY', amount: 500, received: 500 },
    { currency: 'EUR', amount: 1234, received: 1234 },
    { currency: 'KWD', amount: 12340, received: 12340 },
    { currency: 'CLP', amount: 5000, received: 5000 },
    { currency: 'ISK', amount: 2790, received: 279000 }, // Stripe keeps ISK two-decimal
    { currency: 'IDR', amount: 1234550, received: 1234550 }, // two-decimal at Stripe: what Adyen refuses
    { currency: 'CVE', amount: 12345, received: 12345 },
    { currency: 'MGA', amount: 1500, received: 15 }, // on Stripe's zero-decimal list
  ],
  // USD 100000000: above Stripe's 8-digit maximum (issue 43).
  unsendableAmounts: [{ currency: 'MGA', amount: 1550 }, { currency: 'KWD', amount: 12345 }, { currency: 'USD', amount: 100_000_000 }],
  wireSamples: (sandbox) => wireSamples(sandbox),
};

defineConnectorConformance(stripeConformanceSubject);
