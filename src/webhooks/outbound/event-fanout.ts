// One 'merchant_event' outbox row -> one merchant_events row and one delivery per endpoint of that
// merchant subscribed to the type, each with its delivery job — all in one transaction with the
// outbox row marked done. merchant_events.source_outbox_id is unique, so a second run (a killed
// worker's row taken over after its lease) inserts nothing. transition() now records events in its own
// transaction (event-record.ts); this path drains 'merchant_event' rows written before that.

import { claimOutboxRow, keepClaim, markOutboxDone, releaseOutboxRow } from '../../jobs/outbox-claims.ts';
import type { WebhookServices } from '../webhook-services.ts';
import type { MerchantEventRowPayload } from '../../resources/event-body.ts';
import { recordMerchantEvent } from '../../store/merchant-event-record.ts';
import { safeErrorText } from '../../observability/safe-error-text.ts';

export type FanoutResult = { readonly kind: 'skipped'; readonly reason: string } | { readonly kind: 'created'; readonly eventId: string; readonly deliveries: number };

export async function fanOutMerchantEvent(s: WebhookServices, outboxId: number, claimant: string): Promise<FanoutResult> {
  const leaseMs = s.settings.claimLeaseMs;
  const claim = await claimOutboxRow(s.db, outboxId, claimant, s.now(), leaseMs);
  if (!claim.ok) return { kind: 'skipped', reason: claim.reason };
  // Renewed while it runs, as a provider call's claim is.
  const stopRenewing = keepClaim(s.db, outboxId, claimant, s.now, leaseMs);
  try {
    const row = claim.row.payload as MerchantEventRowPayload;
    const now = s.now();
    const result = await s.db.transaction(async (tx): Promise<FanoutResult> => {
      const recorded = await recordMerchantEvent(tx, row, now, outboxId);
      if (!recorded.created) {
        await markOutboxDone(tx, outboxId, now, 'skipped: event already created');
        return { kind: 'skipped', reason: 'event already created' };
      }
      await markOutboxDone(tx, outboxId, now);
      return { kind: 'created', eventId: recorded.eventId, deliveries: recorded.deliveries };
    });
    if (result.kind === 'created' && result.deliveries > 0) s.kick();
    return result;
  } catch (err) {
    stopRenewing();
    await releaseOutboxRow(s.db, outboxId, claimant, safeErrorText(err)).catch(() => undefined);
    throw err;
  } finally {
    stopRenewing();
  }
}
