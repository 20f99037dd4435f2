// The API key endpoints' request bodies and resources (zod): what the routes validate and answer
// with, and what the OpenAPI document is generated from.

import { z } from 'zod';
import { KEY_KINDS, KEY_MODES, KEY_ROLES, MAX_ROLL_EXPIRES_IN_S } from '../core/api-keys.ts';
import type { ApiKey } from '../store/api-keys.ts';
import { withoutCardNumber } from './request-schemas.ts';

const timestamp = z.string().meta({ format: 'date-time' });

export const createApiKeyBody = z
  .strictObject({
    kind: z.enum(KEY_KINDS).optional().meta({ description: 'secret (default: sk_sy_…, for your servers) or publishable (pk_sy_…, for the hosted card form and POST /v1/tokens).' }),
    role: z.enum(KEY_ROLES).optional().meta({ description: 'What a secret key may call (docs/api.md, "Keys and modes"); required for a secret key, refused for a publishable one.' }),
    mode: z.enum(KEY_MODES).meta({ description: 'test or live: the key\'s prefix says it (sk_sy_test_…, sk_sy_live_…).' }),
    name: withoutCardNumber(z.string().trim().min(1).max(100)).meta({ description: 'Yours, to tell keys apart (1–100 characters).' }),
    expires_at: z.iso.datetime({ offset: true }).optional().meta({ description: 'When the key stops working (ISO 8601, in the future); none: until deleted or rolled.' }),
  })
  .superRefine((b, ctx) => {
    const kind = b.kind ?? 'secret';
    if (kind === 'secret' && b.role === undefined) ctx.addIssue({ code: 'custom', path: ['role'], message: `a secret key needs a role: one of ${KEY_ROLES.join(', ')}` });
    if (kind === 'publishable' && b.role !== undefined) ctx.addIssue({ code: 'custom', path: ['role'], message: 'a publishable key has no role (it opens only POST /v1/tokens and the hosted card form)' });
  })
  .meta({ id: 'CreateApiKeyRequest' });

export const rollApiKeyBody = z
  .strictObject({
    expires_in: z.int().min(0).max(MAX_ROLL_EXPIRES_IN_S).meta({ description: `Seconds the old key keeps working (0 to ${MAX_ROLL_EXPIRES_IN_S}, 7 days); 0 stops it at once.` }),
    mode: z.enum(KEY_MODES).optional().meta({ description: 'Only when rolling a legacy key (mode any, made before keys had modes): the new key\'s mode. Any other key keeps its own.' }),
  })
  .meta({ id: 'RollApiKeyRequest' });

export const apiKeyResource = z
  .strictObject({
    id: z.string().meta({ description: 'key_…: also inside the key itself (sk_sy_live_<id>_…).' }),
    object: z.literal('api_key'),
    kind: z.enum(KEY_KINDS),
    role: z.enum(KEY_ROLES).nullable().meta({ description: 'null for a publishable key.' }),
    mode: z.enum([...KEY_MODES, 'any']).meta({ description: 'any: a legacy key (sk_sy_<random>, made before modes), which reaches test and live accounts alike until rolled.' }),
    name: z.string(),
    legacy: z.boolean(),
    created_at: timestamp,
    expires_at: timestamp.nullable().meta({ description: 'When it stops working (set at creation, or by a roll).' }),
    revoked_at: timestamp.nullable().meta({ description: 'When it was deleted.' }),
    replaced_by: z.string().nullable().meta({ description: 'The key a roll made from this one.' }),
  })
  .meta({ id: 'ApiKey' });

export const apiKeyWithSecret = apiKeyResource
  .extend({ secret: z.string().nullable().meta({ description: 'The key itself, in the first answer only: a replay (Idempotent-Replayed) answers null, as it is stored nowhere but as its SHA-256.' }) })
  .meta({ id: 'ApiKeyWithSecret' });

export const apiKeyList = z.strictObject({ object: z.literal('list'), data: z.array(apiKeyResource) }).meta({ id: 'ApiKeyList' });

export type ApiKeyResource = z.output<typeof apiKeyResource>;

export function apiKeyAnswer(k: ApiKey): ApiKeyResource {
  return {
    id: k.id, object: 'api_key', kind: k.kind, role: k.role, mode: k.mode, name: k.name, legacy: k.legacy, created_at: k.createdAt.toISOString(),
    expires_at: k.expiresAt?.toISOString() ?? null, revoked_at: k.revokedAt?.toISOString() ?? null, replaced_by: k.replacedBy,
  };
}
