// The gateway's Stripe connector against the sandbox's 409 idempotency_key_in_use, with no fault:
// two same-key authorizations a few ms apart. The refused one proves nothing about the charge (the
// other holds the key and may charge): it must be unknown (in progress), never not_sent or declined.

import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { authorizeRequest } from '../../../src/conformance/harness.ts';
import type { Connector } from '../../../src/connectors/contract.ts';
import type { CallOutcome } from '../../../src/core/outcome.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { startSandbox, stripeConnectorFor } from './helpers.ts';

let sandbox: StripeSandbox;
let connector: Connector;

beforeAll(async () => {
  sandbox = await startSandbox();
  connector = stripeConnectorFor(sandbox);
});
afterAll(async () => {
  await connector.close();
  await sandbox.close();
});

const kindOf = (o: CallOutcome): string => (o.kind === 'unknown' ? `unknown:${o.reason}` : o.kind);

it('a same-key authorization refused 409 while the first runs is unknown (in progress); exactly one PaymentIntent exists', async () => {
  const seen: string[] = [];
  for (let i = 0; i < 5; i++) {
    const req = { ...authorizeRequest(connector), providerRef: null };
    const first = connector.authorize(req);
    await sleep(2);
    const second = connector.authorize(req);
    const pair = [kindOf(await first), kindOf(await second)];
    seen.push(...pair);
    expect(pair).toContain('succeeded');
    for (const k of pair) expect(['succeeded', 'unknown:in_progress']).toContain(k);
    expect((await sandbox.ledger()).filter((e) => e.reference === req.attemptId)).toHaveLength(1);
  }
  expect(seen, seen.join(',')).toContain('unknown:in_progress');
});
