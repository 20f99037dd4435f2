// One sandbox, one webhook receiver and one connector per describe block, started before its tests
// and closed after them. Faults are global to a sandbox, so blocks never share one.

import { afterAll, beforeAll } from 'vitest';
import type { Connector } from '../connectors/contract.ts';
import { attachReceiver, startWebhookReceiver } from './harness.ts';
import type { WebhookReceiver } from './harness.ts';
import type { ConformanceSandbox, ConformanceSubject, KitConnectorOptions } from './subject.ts';

export interface KitContext<S extends ConformanceSandbox> {
  readonly sandbox: S;
  readonly connector: Connector;
  readonly receiver: WebhookReceiver;
  /** Another connector on the same sandbox with other options; closed with the block. */
  readonly connectorWith: (options: KitConnectorOptions) => Connector;
  /** The sandbox ledger rows of one attempt (reference = attempt id). */
  readonly ledgerOf: (attemptId: string) => Promise<Awaited<ReturnType<S['ledger']>>[number][]>;
}

export function useSandbox<S extends ConformanceSandbox>(subject: ConformanceSubject<S>, options: KitConnectorOptions = {}): () => KitContext<S> {
  let ctx: KitContext<S> | undefined;
  const extra: Connector[] = [];
  beforeAll(async () => {
    const receiver = await startWebhookReceiver();
    const { previous, current } = subject.webhookSecrets;
    const sandbox = await subject.makeSandbox({ webhook: { url: receiver.url, secret: current } });
    const withSecrets = (o: KitConnectorOptions): KitConnectorOptions => ({ webhookSecrets: [previous, current], ...o });
    const connector = subject.makeConnector(sandbox, withSecrets(options));
    attachReceiver(connector, receiver);
    ctx = {
      sandbox,
      connector,
      receiver,
      connectorWith: (o) => {
        const c = subject.makeConnector(sandbox, withSecrets({ ...options, ...o }));
        attachReceiver(c, receiver);
        extra.push(c);
        return c;
      },
      ledgerOf: async (attemptId) => (await sandbox.ledger()).filter((e) => e.reference === attemptId),
    };
  });
  afterAll(async () => {
    if (ctx === undefined) return;
    await Promise.all([ctx.connector.close(), ...extra.map((c) => c.close())]);
    await ctx.sandbox.close();
    await ctx.receiver.close();
  });
  return () => {
    if (ctx === undefined) throw new Error('kit context used outside a test');
    return ctx;
  };
}
