// The merchant's own API keys (full keys only: src/api/key-roles.ts):
//   POST /v1/api_keys {kind?, role, mode, name, expires_at?}   GET /v1/api_keys
//   DELETE /v1/api_keys/{id}                                   POST /v1/api_keys/{id}/roll {expires_in, mode?}
// A new key's secret is in the first answer only. Its idempotency record keeps the answer with
// `secret: null` (storedResult), so the secret is written nowhere but as its hash, and a replay says
// which key was made without handing it out again. The new key's id is fixed by the Idempotency-Key,
// so a retry after a crash finds the key its first run made instead of making another.

import express from 'express';
import type { Router } from 'express';
import { createKey, revokeKeyAction, rollKeyAction } from '../app/key-actions.ts';
import type { KeyRefusal } from '../app/key-actions.ts';
import { isId } from '../core/ids.ts';
import { listKeys } from '../store/api-keys.ts';
import type { ApiContext } from './api-context.ts';
import { apiKeyAnswer, createApiKeyBody, rollApiKeyBody } from './api-key-schemas.ts';
import { apiKeyOf, encodeResult, merchantIdOf, notFound, sendEncoded } from './http.ts';
import type { ApiResult } from './http.ts';
import { idempotentPost, operationIdFor } from './idempotent-post.ts';
import { ApiProblem } from './problems.ts';

function refusalProblem(r: KeyRefusal, id: string): ApiProblem {
  switch (r.refused) {
    case 'merchant_not_found':
    case 'not_found':
      return notFound('API key', id);
    case 'key_limit_reached':
      return new ApiProblem('key_limit_reached', `the merchant already has ${r.limit} working keys: delete one first`);
    case 'expired':
      return new ApiProblem('invalid_state', `key ${id} expired at ${r.at.toISOString()}: create a new one`);
    case 'already_rolled':
      return new ApiProblem('invalid_state', `key ${id} was rolled already, to ${r.replacedBy}: roll that one`);
    case 'mode_required':
      return new ApiProblem('validation_error', 'mode: a legacy key has no mode of its own: say the new key\'s (test or live)', [{ path: 'mode', message: 'required when rolling a legacy key' }]);
    case 'mode_mismatch':
      return new ApiProblem('validation_error', `mode: a rolled key keeps its mode (${r.mode})`, [{ path: 'mode', message: `must be ${r.mode} (or left out)` }]);
    case 'last_full_key':
      return new ApiProblem('last_full_key', `key ${id} is the merchant's last working full key for ${r.mode} mode: create another full ${r.mode} key first (or roll this one)`);
  }
}

/** The record keeps the answer without the secret. */
const withoutSecret = (r: ApiResult): ApiResult => ({ ...r, body: { ...(r.body as Record<string, unknown>), secret: null } });

export function apiKeyRoutes(ctx: ApiContext): Router {
  const router = express.Router();
  const db = ctx.rt.database.db;

  router.post('/v1/api_keys', idempotentPost(ctx.idempotency, createApiKeyBody, async ({ merchantId, body, claim, keyId }) => {
    const now = ctx.rt.now();
    const expiresAt = body.expires_at === undefined ? null : new Date(body.expires_at);
    if (expiresAt !== null && expiresAt.getTime() <= now.getTime()) {
      throw new ApiProblem('validation_error', 'expires_at: must be in the future', [{ path: 'expires_at', message: `must be later than now (${now.toISOString()})` }]);
    }
    const kind = body.kind ?? 'secret';
    const id = operationIdFor('key', claim);
    const r = await createKey(db, { keyId: keyId! }, { merchantId, kind, role: kind === 'secret' ? body.role! : null, mode: body.mode, name: body.name, expiresAt, now, id });
    if (r.refused !== undefined) throw refusalProblem(r, id);
    return { status: 201, body: { ...apiKeyAnswer(r.key), secret: r.secret } };
  }, { storedResult: withoutSecret }));

  router.get('/v1/api_keys', async (_req, res) => {
    const keys = await listKeys(db, merchantIdOf(res), ctx.rt.now());
    res.set('Cache-Control', 'no-store');
    sendEncoded(res, encodeResult({ status: 200, body: { object: 'list', data: keys.map(apiKeyAnswer) } }));
  });

  router.delete('/v1/api_keys/:id', async (req, res) => {
    const id = req.params.id;
    if (!isId('key', id)) throw new ApiProblem('not_found', 'no such API key: ids look like key_…');
    const r = await revokeKeyAction(db, { keyId: apiKeyOf(res).id }, { keyId: id, merchantId: merchantIdOf(res), now: ctx.rt.now() });
    if (r.refused !== undefined) throw refusalProblem(r, id);
    sendEncoded(res, encodeResult({ status: 200, body: apiKeyAnswer(r.key) }));
  });

  router.post('/v1/api_keys/:id/roll', idempotentPost(ctx.idempotency, rollApiKeyBody, async ({ merchantId, body, params, claim, keyId }) => {
    const id = params['id']!;
    if (!isId('key', id)) throw new ApiProblem('not_found', 'no such API key: ids look like key_…');
    const r = await rollKeyAction(db, { keyId: keyId! }, {
      keyId: id, merchantId, expiresInS: body.expires_in, now: ctx.rt.now(), newId: operationIdFor('key', claim), ...(body.mode === undefined ? {} : { mode: body.mode }),
    });
    if (r.refused !== undefined) throw refusalProblem(r, id);
    return { status: 201, body: { ...apiKeyAnswer(r.key), secret: r.secret } };
  }, { storedResult: withoutSecret }));

  return router;
}
