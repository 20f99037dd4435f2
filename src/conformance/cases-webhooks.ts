// Webhooks: a real event from the sandbox verifies and names the attempt and the provider object;
// a tampered body, a stale timestamp or a secret that is not active is refused; during a rotation
// both the previous and the current secret are accepted.

import { describe, expect, it } from 'vitest';
import type { NormalizedEvent } from '../connectors/contract.ts';
import { useSandbox } from './context.ts';
import { authorizePayment } from './harness.ts';
import type { ConformanceSandbox, ConformanceSubject } from './subject.ts';

export function registerWebhookCases<S extends ConformanceSandbox>(subject: ConformanceSubject<S>): void {
  describe('webhooks', () => {
    const kit = useSandbox(subject);

    it('verifies the sandbox\'s own delivery and names the attempt and the provider reference', async () => {
      const { connector, receiver } = kit();
      const p = await authorizePayment(connector, { amount: 1000 });
      expect(p.outcome.kind).toBe('succeeded');
      const delivery = await receiver.waitFor(p.attemptId);
      expect(delivery, 'the sandbox delivered an event for the attempt').not.toBeNull();
      if (delivery === null) return;
      // Deliveries are asynchronous: collect until the authorization itself has been reported.
      const until = Date.now() + 5_000;
      let authorization: NormalizedEvent | undefined;
      while (authorization === undefined && Date.now() < until) {
        const events: NormalizedEvent[] = [];
        for (const d of receiver.received.filter((r) => r.rawBody.includes(p.attemptId))) {
          const v = connector.verifyWebhook(d.rawBody, d.headers, new Date());
          expect(v.ok, JSON.stringify(v)).toBe(true);
          if (v.ok) events.push(...v.events);
        }
        for (const e of events) expect(e.connectorType).toBe(connector.type);
        for (const e of events.filter((x) => x.kind !== 'ignored')) {
          expect({ attemptId: e.attemptId, providerRef: e.providerRef }).toEqual({ attemptId: p.attemptId, providerRef: p.providerRef });
        }
        authorization = events.find((e) => e.kind === 'authorization');
        if (authorization === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      expect(authorization, 'an authorization event for the attempt').toMatchObject({ kind: 'authorization', outcome: { kind: 'succeeded', amount: 1000 } });
    });

    it('refuses a tampered body', async () => {
      const { connector, receiver } = kit();
      const p = await authorizePayment(connector);
      const delivery = await receiver.waitFor(p.attemptId);
      expect(delivery).not.toBeNull();
      if (delivery === null) return;
      // Change the id's last character to another one: replacing it with a fixed letter is a no-op 1 time in 32.
      const last = p.attemptId.slice(-1) === 'x' ? 'y' : 'x';
      const tampered = Buffer.from(delivery.rawBody.toString('utf8').replace(p.attemptId, `${p.attemptId.slice(0, -1)}${last}`));
      expect(connector.verifyWebhook(tampered, delivery.headers, new Date())).toMatchObject({ ok: false });
    });

    it('refuses a delivery older than the tolerance, even with a good signature', async () => {
      const { connector, receiver } = kit();
      const p = await authorizePayment(connector);
      const delivery = await receiver.waitFor(p.attemptId);
      expect(delivery).not.toBeNull();
      if (delivery === null) return;
      const later = new Date(Date.now() + 301_000);
      if (subject.webhookSignatureTimestamped === false) {
        // Nothing signed says when: a redelivery days later must still verify.
        expect(connector.verifyWebhook(delivery.rawBody, delivery.headers, new Date(Date.now() + 3 * 86_400_000)).ok).toBe(true);
        return;
      }
      expect(connector.verifyWebhook(delivery.rawBody, delivery.headers, later)).toMatchObject({ ok: false });
      const nowS = Math.floor(Date.now() / 1000);
      const stale = subject.signWebhook(delivery.rawBody, subject.webhookSecrets.current, nowS - 301);
      expect(connector.verifyWebhook(delivery.rawBody, stale, new Date())).toMatchObject({ ok: false });
    });

    it('accepts the previous and the current secret during a rotation, and no other', async () => {
      const { connector, receiver } = kit();
      const p = await authorizePayment(connector);
      const delivery = await receiver.waitFor(p.attemptId);
      expect(delivery).not.toBeNull();
      if (delivery === null) return;
      const nowS = Math.floor(Date.now() / 1000);
      const { previous, current, foreign } = subject.webhookSecrets;
      const signed = (secret: string): { rawBody: Buffer; headers: Record<string, string> } =>
        subject.signWebhookBody?.(delivery.rawBody, secret) ?? { rawBody: delivery.rawBody, headers: subject.signWebhook(delivery.rawBody, secret, nowS) };
      for (const secret of [previous, current]) {
        const d = signed(secret);
        expect(connector.verifyWebhook(d.rawBody, d.headers, new Date()).ok).toBe(true);
      }
      const f = signed(foreign);
      expect(connector.verifyWebhook(f.rawBody, f.headers, new Date())).toMatchObject({ ok: false });
      expect(connector.verifyWebhook(delivery.rawBody, {}, new Date())).toMatchObject({ ok: false });
    });
  });
}
