// Client secrets never reach storage or history (issue 42 §2): the shapes Stripe uses, the fields
// named for them, and a provider page kept without its query.
import { describe, expect, it } from 'vitest';
import { historyCopy, holdsClientSecret, maskClientSecrets, maskSecretsDeep, MASKED, pageWithoutQuery } from '../../../src/core/secret-mask.ts';

// Live Stripe's shapes (the API reference's examples and fixtures3.json).
const PI_SECRET = 'pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH';
const SETI_SECRET = 'seti_1Mm8s8LkdIwHu7ixDB5ffMJ5_secret_NXDHTKEnhSbaYBtamHCBmT6hyjCVSTC';
const SESSION_SECRET = 'cuss_secret_QXhWeUEtZoDV8FHnNbPiBHmAkXKnqYLGMGq7LLf8ODSQ8gL';
const ACCOUNT_SESSION_SECRET = 'accs_secret__QXhWgWIhGJ2Zl68tEmbZ29Gtc86adyWl6eEz2h6K7HtpnoB';
const HOSTED = `https://hooks.stripe.com/3d_secure_2/hosted?merchant=acct_1&payment_intent=pi_3MtwBwLkdIwHu7ix28a3tqPa&payment_intent_client_secret=${PI_SECRET}&publishable_key=pk_test_1&source=src_1`;

describe('maskClientSecrets', () => {
  it('masks every Stripe client secret shape wherever it stands in a text', () => {
    for (const secret of [PI_SECRET, SETI_SECRET, SESSION_SECRET, ACCOUNT_SESSION_SECRET]) {
      expect(maskClientSecrets(`"client_secret": "${secret}",`)).toBe(`"client_secret": "${MASKED}",`);
      expect(holdsClientSecret(secret)).toBe(true);
    }
    expect(maskClientSecrets(HOSTED)).not.toContain('_secret_YrKJ');
    expect(maskClientSecrets(`${PI_SECRET} and ${SETI_SECRET}`)).toBe(`${MASKED} and ${MASKED}`);
  });

  it('leaves ordinary names and ids alone', () => {
    for (const text of ['webhook_secret_missing', 'whsec_abc123', 'pi_3MtwBwLkdIwHu7ix28a3tqPa', 'payment_intent_client_secret=', 'the client secret is never stored']) {
      expect(maskClientSecrets(text)).toBe(text);
    }
    expect(holdsClientSecret('{"id":"pi_1","object":"payment_intent"}')).toBe(false);
    // A field named for a secret counts, whatever its value looks like.
    expect(holdsClientSecret('{"client_secret":"short"}')).toBe(true);
  });
});

describe('maskSecretsDeep', () => {
  it('masks fields named for a secret whatever they hold, and any string holding one', () => {
    const pi = { id: 'pi_1', client_secret: 'x', next_action: { redirect_to_url: { url: HOSTED, return_url: 'https://shop.example/done?order=1' } }, list: [PI_SECRET, 7, null] };
    expect(maskSecretsDeep(pi)).toEqual({
      id: 'pi_1', client_secret: MASKED,
      next_action: { redirect_to_url: { url: HOSTED.replace(PI_SECRET, MASKED), return_url: 'https://shop.example/done?order=1' } },
      list: [MASKED, 7, null],
    });
    expect(maskSecretsDeep({ client_secret: null })).toEqual({ client_secret: null });
  });
});

describe('pageWithoutQuery', () => {
  it('keeps scheme, host and path; drops query and fragment', () => {
    expect(pageWithoutQuery(HOSTED)).toBe('https://hooks.stripe.com/3d_secure_2/hosted');
    expect(pageWithoutQuery('http://127.0.0.1:4010/3ds/authenticate/pi_1?token=t#x')).toBe('http://127.0.0.1:4010/3ds/authenticate/pi_1');
    expect(pageWithoutQuery(`not a url ${PI_SECRET}`)).toBe(MASKED);
  });
});

describe('historyCopy', () => {
  it('keeps a redirect as its page without query, a POST form with its field names only', () => {
    const input = {
      type: 'call_result', ref: { op: 'authorize', attemptId: 'att_1' },
      outcome: { kind: 'action_required', action: 'redirect_to_url', providerRef: 'pi_1', redirect: { url: HOSTED, method: 'GET' } },
    };
    expect(historyCopy(input)).toEqual({ ...input, outcome: { ...input.outcome, redirect: { url: 'https://hooks.stripe.com/3d_secure_2/hosted', method: 'GET' } } });
    const post = { kind: 'action_required', action: 'redirect', redirect: { url: 'https://acs.example/challenge?x=1', method: 'POST', data: { MD: 'md', PaReq: 'req' } } };
    expect(historyCopy(post)).toEqual({ kind: 'action_required', action: 'redirect', redirect: { url: 'https://acs.example/challenge', method: 'POST', data: { MD: MASKED, PaReq: MASKED } } });
  });

  it('masks secrets everywhere else and leaves the rest as it was', () => {
    const event = { kind: 'authorization', rawType: 'payment_intent.succeeded', outcome: { kind: 'succeeded', providerRef: 'pi_1', amount: 1000 }, detail: `saw ${PI_SECRET}`, client_secret: 'anything' };
    expect(historyCopy(event)).toEqual({ ...event, detail: `saw ${MASKED}`, client_secret: MASKED });
    for (const plain of [null, 3, 'text', true, { type: 'submit' }, [{ a: 1 }]]) expect(historyCopy(plain)).toEqual(plain);
    expect(JSON.stringify(historyCopy({ a: [{ b: { redirect: { url: HOSTED, method: 'GET' } } }] }))).not.toContain('secret');
  });
});
