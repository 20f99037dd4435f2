// What `switchyard merchants set-origins` accepts: scheme://host[:port], https or loopback http, in
// the URL parser's serialization.
import { describe, expect, it } from 'vitest';
import { MAX_ORIGINS, parseBrowserOrigin, parseBrowserOrigins } from '../../../src/api/browser-origins.ts';

describe('parseBrowserOrigin', () => {
  it('keeps an origin as the browser sends it in Origin', () => {
    expect(parseBrowserOrigin('https://Shop.Example.com')).toEqual({ ok: true, origin: 'https://shop.example.com' });
    expect(parseBrowserOrigin('https://shop.example.com:443/')).toEqual({ ok: true, origin: 'https://shop.example.com' });
    expect(parseBrowserOrigin('https://shop.example.com:8443')).toEqual({ ok: true, origin: 'https://shop.example.com:8443' });
    expect(parseBrowserOrigin('http://localhost:5173')).toEqual({ ok: true, origin: 'http://localhost:5173' });
    expect(parseBrowserOrigin('http://127.0.0.1:3000')).toEqual({ ok: true, origin: 'http://127.0.0.1:3000' });
    expect(parseBrowserOrigin('http://[::1]:3000')).toEqual({ ok: true, origin: 'http://[::1]:3000' });
  });

  it('refuses anything else, saying why', () => {
    const problem = (t: string) => {
      const r = parseBrowserOrigin(t);
      return r.ok ? null : r.problem;
    };
    expect(problem('http://shop.example.com')).toMatch(/only https origins/);
    expect(problem('shop.example.com')).toMatch(/is not a URL/);
    expect(problem('ftp://shop.example.com')).toMatch(/not an https origin/);
    expect(problem('https://shop.example.com/checkout')).toMatch(/path, query or fragment/);
    expect(problem('https://shop.example.com/?x=1')).toMatch(/path, query or fragment/);
    expect(problem('https://shop.example.com#x')).toMatch(/path, query or fragment/);
    expect(problem('https://user:pw@shop.example.com')).toMatch(/credentials/);
    expect(problem('https://*.example.com')).not.toBeNull();
    expect(problem('*')).not.toBeNull();
    expect(problem('null')).not.toBeNull();
  });

  it('drops duplicates and bounds the list', () => {
    expect(parseBrowserOrigins(['https://a.example', 'https://A.example:443'])).toEqual({ ok: true, origins: ['https://a.example'] });
    const many = Array.from({ length: MAX_ORIGINS + 1 }, (_, i) => `https://s${i}.example`);
    expect(parseBrowserOrigins(many)).toEqual({ ok: false, problem: `at most ${MAX_ORIGINS} origins` });
  });
});
