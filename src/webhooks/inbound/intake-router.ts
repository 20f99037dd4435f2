// POST /webhooks/:account — provider webhooks. The raw bytes go to that account's connector
// before anything parses them; a request that does not verify is answered 400/401, counted
// (switchyard_webhooks_rejected_total by account and reason) and logged in one line without its
// body — and writes nothing: rows from unverified requests would let anyone fill the database. Verified events go into the inbox and are acknowledged
// at once; a queue worker applies them later (inbound-processor.ts), except one that only confirms
// the payment's current version, settled here in one statement (confirming-settle.ts). Mount BEFORE any JSON parser.

import express from 'express';
import type { Request, Response, Router } from 'express';
import type { WebhookServices } from '../webhook-services.ts';
import { storeConfirmingEvent } from './confirming-settle.ts';
import { keptHeaders, storeVerifiedEvents } from './inbox.ts';
import { storableEvent, storableRawBody } from './storable-event.ts';
import { safeErrorText } from '../../observability/safe-error-text.ts';

const UNKNOWN_ACCOUNT = '(unknown)';

/**
 * What each provider expects back. Adyen wants the body `[accepted]` (any 2xx counts; this is the
 * one its docs and libraries send); the rest get a small JSON receipt.
 */
const ACK_BODY: Readonly<Record<string, string>> = { adyen: '[accepted]' };

function sendAck(res: Response, connectorType: string, inserted: number, duplicates: number): void {
  const text = ACK_BODY[connectorType];
  if (text !== undefined) res.status(200).type('text/plain').send(text);
  else res.status(200).json({ received: inserted, duplicates });
}

export function createWebhookIntakeRouter(services: WebhookServices): Router {
  const router = express.Router();
  const { log } = services;
  router.post('/webhooks/:account', express.raw({ type: () => true, limit: services.settings.inboundBodyLimit }), async (req: Request, res: Response) => {
    const account = String(req.params['account']);
    const connector = services.connectors.get(account);
    if (connector === undefined) {
      log(`webhooks: ${account.slice(0, 64)} is not a configured connector account (404)`);
      // One label for every unknown name: the caller chooses it, and must not choose our metric's cardinality.
      services.observe?.webhookIntake(UNKNOWN_ACCOUNT, 'unknown account');
      res.status(404).json({ error: 'unknown connector account' });
      return;
    }
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const now = services.now();
    try {
      const verdict = connector.verifyWebhook(raw, req.headers, now);
      if (!verdict.ok) {
        // The reason names what failed (header, secret, age), never the body or a secret.
        log(`webhooks: ${account} rejected ${verdict.status} (${raw.length} bytes): ${verdict.reason}`);
        services.observe?.webhookIntake(account, verdict.reason);
        res.status(verdict.status).json({ error: verdict.reason });
        return;
      }
      // Verified: from here on only what may be stored (client secrets masked), on both paths alike.
      const body = storableRawBody(raw);
      const events = verdict.events.map(storableEvent);
      // One event that only confirms the payment's current version is settled here, without a
      // job (confirming-settle.ts); anything else, or any doubt, takes the job path.
      const only = events.length === 1 ? events[0] : undefined;
      const confirmed = only === undefined ? null : await storeConfirmingEvent(services, account, body, JSON.stringify(keptHeaders(req.headers)), only, now).catch((err: unknown) => {
        log(`webhooks: ${account} confirming settle skipped: ${safeErrorText(err)}`);
        return null;
      });
      const stored = confirmed ?? await storeVerifiedEvents(services.db, account, body, req.headers, events, now);
      services.observe?.webhookIntake(account, null);
      if (stored.outboxIds.length > 0) services.kick(stored.outboxIds);
      sendAck(res, connector.type, stored.inserted, stored.duplicates);
    } catch (err) {
      // Not acknowledged: the provider delivers again, and the inbox absorbs the repeat.
      log(`webhooks: ${account} intake failed: ${safeErrorText(err)}`);
      if (!res.headersSent) res.status(500).json({ error: 'intake failed; deliver again' });
    }
  });
  return router;
}
