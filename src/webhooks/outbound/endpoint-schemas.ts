// The webhook endpoint answers as the OpenAPI document describes them (src/api/openapi.ts): the
// shape endpointView() and the routes write (test/unit/webhooks/endpoint-schemas.test.ts parses them).

import { z } from 'zod';

const timestamp = z.string().meta({ description: 'ISO 8601' });

export const webhookEndpointResource = z
  .strictObject({
    id: z.string(),
    object: z.literal('webhook_endpoint'),
    url: z.string(),
    events: z.array(z.string()).meta({ description: "The event types delivered; ['*'] for every type, those added later included." }),
    status: z.string(),
    created: timestamp.meta({ description: 'The same as created_at (the first API version had only this field).' }),
    created_at: timestamp,
    signing: z.strictObject({
      jwks_path: z.string(),
      jwks_url: z.string().meta({ description: "This endpoint's public keys (ES256): pin it to verify Switchyard-Signature." }),
      kid: z.string().meta({ description: 'The key signing now.' }),
      next_kid: z.string().optional().meta({ description: 'After a rotation: the announced key, already published.' }),
      next_kid_signs_at: timestamp.optional(),
      global_signature: z.boolean().meta({ description: 'An endpoint from before per-endpoint keys: the global key signs until its first rotation.' }),
    }),
  })
  .meta({ id: 'WebhookEndpoint' });

export const webhookEndpointList = z
  .strictObject({ object: z.literal('list'), data: z.array(webhookEndpointResource), has_more: z.literal(false), next_cursor: z.null() })
  .meta({ id: 'WebhookEndpointList' });

export const deletedWebhookEndpoint = z
  .strictObject({ id: z.string(), object: z.literal('webhook_endpoint'), deleted: z.literal(true) })
  .meta({ id: 'DeletedWebhookEndpoint' });

export const redeliveryResource = z
  .strictObject({ event_id: z.string(), deliveries: z.array(z.string()).meta({ description: 'The new deliveries (one per endpoint).' }) })
  .meta({ id: 'Redelivery' });
