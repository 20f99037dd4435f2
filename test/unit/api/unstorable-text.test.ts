// What PostgreSQL cannot store (issue 42 §3): NUL, unpaired surrogates, and escapes that decode to
// them or to no UTF-8 at all, found in a request target, a form, or a parsed body, with where.
import { describe, expect, it } from 'vitest';
import { unstorableInForm, unstorableInTarget, unstorablePath, unstorableReason } from '../../../src/api/unstorable-text.ts';

describe('unstorableReason', () => {
  it('refuses NUL and unpaired surrogates, keeps any other text', () => {
    expect(unstorableReason('a\0b')).toMatch(/NUL/);
    expect(unstorableReason('a\ud800b')).toMatch(/surrogate/);
    expect(unstorableReason('a\udc00')).toMatch(/surrogate/);
    for (const ok of ['', 'plain', '😀 paired', '\ufffd', 'tab\tnewline\n', 'ünïcödé']) expect(unstorableReason(ok), ok).toBeNull();
  });
});

describe('unstorableInTarget', () => {
  it.each([
    ['/authenticate/%ZZ', '(path)'],
    ['/authenticate/%00', '(path)'],
    ['/webhooks/a%C3%28', '(path)'],
    ['/x/%ED%A0%80', '(path)'],
    ['/x/%', '(path)'],
    ['/x?PaRes=a%00b', 'query.PaRes'],
    ['/x?a=%C3', 'query.a'],
    ['/x?%00=1', 'query'],
    ['/x?na%ZZme=1', 'query'],
    ['/x/\u00e9', '(path)'],
  ])('%s is refused at %s', (target, path) => {
    expect(unstorableInTarget(target)?.path).toBe(path);
  });

  it.each(['/', '/authenticate/att_1/return?payment_intent=pi_1&redirect_status=succeeded', '/x/%2F%20%C3%A9?q=a+b&r=%E2%82%AC&flag', '/x?a=&=&&', '/x/caf%C3%A9'])('%s is fine', (target) => {
    expect(unstorableInTarget(target)).toBeNull();
  });
});

describe('unstorableInForm', () => {
  it('checks names and values, naming plain names only', () => {
    const at = unstorableInForm('MD=1&PaRes=x%00', '(body)');
    expect(at?.path).toBe('(body).PaRes');
    expect(at?.message).toMatch(/NUL/);
    expect(unstorableInForm('a%00b=1', '(body)')?.path).toBe('(body)');
    expect(unstorableInForm('redirectResult=Ab%2B%3D%3D', '(body)')).toBeNull();
  });
});

describe('unstorablePath', () => {
  it('finds the first unstorable key or value, with its path', () => {
    expect(unstorablePath({ a: { b: ['ok', 'x\0'] } })).toMatchObject({ path: 'a.b.1' });
    expect(unstorablePath({ metadata: { 'k\0': 'v' } })).toMatchObject({ path: 'metadata.k\\u0000' });
    expect(unstorablePath({ metadata: { k: 'x\ud800' } })?.message).toMatch(/surrogate/);
    expect(unstorablePath('\0')).toMatchObject({ path: '(body)' });
    expect(unstorablePath({ a: 1, b: null, c: ['😀'] })).toBeNull();
  });
});
