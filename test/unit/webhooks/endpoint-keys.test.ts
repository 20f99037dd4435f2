import { randomBytes } from 'node:crypto';
import { CompactSign, compactVerify, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { EndpointKeys, parseEndpointKeySecret } from '../../../src/webhooks/outbound/endpoint-keys.ts';

describe('endpoint signing keys (derived from one secret)', () => {
  const secret = randomBytes(32);

  it('are the same in every process with the secret, and differ by endpoint, version and secret', async () => {
    const [a, again, v2, other, otherSecret] = await Promise.all([
      new EndpointKeys(secret).key('ep_1', 1), new EndpointKeys(Buffer.from(secret)).key('ep_1', 1), new EndpointKeys(secret).key('ep_1', 2),
      new EndpointKeys(secret).key('ep_2', 1), new EndpointKeys(randomBytes(32)).key('ep_1', 1),
    ]);
    expect(again.publicJwk).toEqual(a.publicJwk);
    expect(a.kid).toBe('ep_1.v1');
    for (const k of [v2, other, otherSecret]) expect(k.publicJwk.x).not.toBe(a.publicJwk.x);
    expect(a.publicJwk).not.toHaveProperty('d');
  });

  it('sign what their published public key verifies, and nothing another endpoint publishes', async () => {
    const keys = new EndpointKeys(secret);
    const [mine, theirs] = [await keys.key('ep_1', 1), await keys.key('ep_2', 1)];
    const jws = await new CompactSign(Buffer.from('{}')).setProtectedHeader({ alg: 'ES256', kid: mine.kid }).sign(mine.privateKey);
    await expect(compactVerify(jws, await importJWK(mine.publicJwk, 'ES256'))).resolves.toBeDefined();
    await expect(compactVerify(jws, await importJWK(theirs.publicJwk, 'ES256'))).rejects.toThrow();
  });

  it('the secret is at least 32 bytes, hex or base64, and the error names no material', () => {
    expect(parseEndpointKeySecret('ab'.repeat(32))).toHaveLength(32);
    expect(parseEndpointKeySecret(randomBytes(48).toString('base64'))).toHaveLength(48);
    expect(() => parseEndpointKeySecret('deadbeef')).toThrow(/at least 32 random bytes/);
  });
});
