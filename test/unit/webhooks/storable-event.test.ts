// What the inbox keeps of a verified webhook (issue 42 §2): the body without client secrets, the
// normalized event without a provider page's query.
import { describe, expect, it } from 'vitest';
import type { NormalizedEvent } from '../../../src/connectors/contract.ts';
import { storableEvent, storableRawBody } from '../../../src/webhooks/inbound/storable-event.ts';

const SECRET = 'pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH';
const PAGE = 'https://hooks.stripe.com/3d_secure_2/hosted';

describe('storableRawBody', () => {
  it('keeps the bytes as received when they hold no secret', () => {
    const raw = Buffer.from('{\n  "id": "evt_1",\n  "data": { "object": { "id": "ch_1", "object": "charge" } }\n}');
    expect(storableRawBody(raw)).toBe(raw);
  });

  it("masks a Stripe event's client_secret and the secret in its next_action URL", () => {
    const event = {
      id: 'evt_1', type: 'payment_intent.requires_action',
      data: { object: { id: 'pi_3MtwBwLkdIwHu7ix28a3tqPa', client_secret: SECRET, next_action: { type: 'redirect_to_url', redirect_to_url: { url: `${PAGE}?payment_intent_client_secret=${SECRET}&source=src_1` } } } },
    };
    const stored = storableRawBody(Buffer.from(JSON.stringify(event, null, 2)));
    const text = stored.toString('utf8');
    expect(text).not.toContain('_secret_Yr');
    const back = JSON.parse(text) as typeof event;
    expect(back.data.object.client_secret).toBe('[masked]');
    expect(back.data.object.next_action.redirect_to_url.url).toBe(`${PAGE}?payment_intent_client_secret=[masked]&source=src_1`);
    expect(back.id).toBe('evt_1');
  });

  it('masks a secret in a body that is not JSON', () => {
    expect(storableRawBody(Buffer.from(`a=1&payment_intent_client_secret=${SECRET}`)).toString('utf8')).toBe('a=1&payment_intent_client_secret=[masked]');
  });
});

describe('storableEvent', () => {
  it("keeps an action's page without its query", () => {
    const e = {
      providerEventId: 'evt_1', connectorType: 'stripe', attemptId: 'att_1', providerRef: 'pi_1', occurredAt: '2026-01-01T00:00:00.000Z', rawType: 'payment_intent.requires_action',
      kind: 'authorization', outcome: { kind: 'action_required', action: 'redirect_to_url', providerRef: 'pi_1', redirect: { url: `${PAGE}?payment_intent_client_secret=${SECRET}`, method: 'GET' } },
    } satisfies NormalizedEvent;
    expect(storableEvent(e)).toEqual({ ...e, outcome: { ...e.outcome, redirect: { url: PAGE, method: 'GET' } } });
  });
});
