// The `Switchyard-Signature` header: a compact JWS with a detached payload (RFC 7515 Appendix F).
// The signature covers BASE64URL(the exact body bytes sent); the middle part is left empty, so a
// merchant rebuilds it from the bytes it received. Protected header: { alg, kid, iat }.
// Also the public key set merchants verify with: a retired key stays published while a
// signature made with it may still be checked (merchants accept an iat up to 300 s old).

import { CompactSign, compactVerify, createLocalJWKSet } from 'jose';
import type { JWK } from 'jose';
import { gt, isNull, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../store/db.ts';
import { signingKeys } from '../../store/schema.ts';
import { SIGNING_ALG } from './signing-keys.ts';
import type { SigningKey, SigningKeyRing } from './signing-keys.ts';

export const SIGNATURE_HEADER = 'Switchyard-Signature';
/** On endpoints created before per-endpoint keys: the endpoint's own signature, beside the global one. */
export const ENDPOINT_SIGNATURE_HEADER = 'Switchyard-Signature-Endpoint';
/** How old an iat merchants accept; retired keys stay published at least this long (doubled for clock skew). */
export const SIGNATURE_MAX_AGE_S = 300;
export const RETIRED_KEY_GRACE_MS = 2 * SIGNATURE_MAX_AGE_S * 1000;
/**
 * A rotated endpoint key is published this long before it signs anything. The documented verifier
 * (jose's createRemoteJWKSet) refetches a key set for an unknown kid only 30 s after its last fetch
 * (cooldownDuration): any fetch it made before the rotation is older than that when the new kid
 * first signs, and any fetch after it already holds the new key.
 */
export const KEY_ANNOUNCE_MS = 45_000;

export async function signDetached(body: Uint8Array, key: SigningKey, iatSeconds: number): Promise<string> {
  const jws = await new CompactSign(body).setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, iat: iatSeconds }).sign(key.privateKey);
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}

export type SignatureCheck = { readonly ok: true; readonly kid: string; readonly iat: number } | { readonly ok: false; readonly reason: string };

/** What docs/webhooks.md asks merchants to do, for tests and for the CLI's `verify` helper. */
export async function verifyDetached(body: Uint8Array, header: string, jwks: { keys: JWK[] }, now: Date): Promise<SignatureCheck> {
  const [h, payload, s] = header.split('.');
  if (h === undefined || s === undefined || payload !== '') return { ok: false, reason: 'not a detached compact JWS' };
  try {
    const { protectedHeader } = await compactVerify(`${h}.${Buffer.from(body).toString('base64url')}.${s}`, createLocalJWKSet(jwks), { algorithms: [SIGNING_ALG] });
    const iat = (protectedHeader as { iat?: unknown }).iat;
    if (typeof iat !== 'number') return { ok: false, reason: 'no iat' };
    if (Math.abs(now.getTime() / 1000 - iat) > SIGNATURE_MAX_AGE_S) return { ok: false, reason: `iat ${iat} is more than ${SIGNATURE_MAX_AGE_S}s away` };
    return { ok: true, kid: protectedHeader.kid ?? '', iat };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

/** The public keys to publish at /.well-known/jwks.json. */
export async function publishedJwks(db: DbOrTx, ring: SigningKeyRing, now: Date): Promise<{ keys: JWK[] }> {
  const keys = new Map<string, JWK>(ring.keys.map((k) => [k.kid, k.publicJwk]));
  if (ring.source === 'database') {
    const since = new Date(now.getTime() - RETIRED_KEY_GRACE_MS);
    const recentlyUsed = sql`${signingKeys.kid} IN (SELECT kid FROM event_delivery_attempts WHERE at > ${since})`;
    const rows = await db
      .select({ kid: signingKeys.kid, publicJwk: signingKeys.publicJwk })
      .from(signingKeys)
      .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.retiredAt, since), recentlyUsed));
    for (const r of rows) keys.set(r.kid, r.publicJwk as JWK);
  }
  // Env keys are all published: an operator removes an old key once its last signature has aged out.
  return { keys: [...keys.values()] };
}
