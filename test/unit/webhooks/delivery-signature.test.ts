// The Switchyard-Signature header: a detached compact JWS over the exact body bytes.
import { compactVerify, createLocalJWKSet } from 'jose';
import { describe, expect, it } from 'vitest';
import { signDetached, verifyDetached } from '../../../src/webhooks/outbound/delivery-signature.ts';
import { generatePrivateJwk, keysFromJwksText, SigningKeyError } from '../../../src/webhooks/outbound/signing-keys.ts';

describe('detached JWS', () => {
  it('verifies against the public JWKS; tampered bytes, another key or an old iat do not', async () => {
    const [key, other] = await keysFromJwksText(JSON.stringify({ keys: [await generatePrivateJwk(), await generatePrivateJwk()] }));
    const body = Buffer.from('{"id":"evt_1","type":"payment.captured"}');
    const now = new Date();
    const header = await signDetached(body, key!, Math.floor(now.getTime() / 1000));
    expect(header).toMatch(/^[\w-]+\.\.[\w-]+$/);
    const jwks = { keys: [key!.publicJwk] };
    expect(await verifyDetached(body, header, jwks, now)).toMatchObject({ ok: true, kid: key!.kid });
    expect(JSON.stringify(jwks)).not.toContain('"d"');
    // Plain jose, as a merchant would do it (RFC 7515 Appendix F: put the payload back).
    const [h, , s] = header.split('.');
    const { protectedHeader } = await compactVerify(`${h}.${body.toString('base64url')}.${s}`, createLocalJWKSet(jwks));
    expect(Object.keys(protectedHeader).sort()).toEqual(['alg', 'iat', 'kid']);

    expect((await verifyDetached(Buffer.from(body.toString().replace('captured', 'refunded')), header, jwks, now)).ok).toBe(false);
    expect((await verifyDetached(body, header, { keys: [other!.publicJwk] }, now)).ok).toBe(false);
    expect(await verifyDetached(body, header, jwks, new Date(now.getTime() + 301_000))).toMatchObject({ ok: false, reason: expect.stringMatching(/300s/) as string });
  });

  it('refuses a key set that is not ES256 private keys with kids, naming the index and not the material', async () => {
    const jwk = await generatePrivateJwk();
    const { kid: _kid, ...noKid } = jwk;
    await expect(keysFromJwksText(JSON.stringify({ keys: [jwk, noKid] }))).rejects.toThrow(/keys\[1\]: kid is required/);
    const { d: _d, ...publicOnly } = jwk;
    await expect(keysFromJwksText(JSON.stringify({ keys: [publicOnly] }))).rejects.toThrow(SigningKeyError);
    await expect(keysFromJwksText('nope')).rejects.not.toThrow(new RegExp(String(jwk.d)));
  });
});
