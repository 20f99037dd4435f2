// The browser origins a merchant allows (`switchyard merchants set-origins`): where its pages may
// call POST /v1/tokens from and frame the hosted card form. An origin is scheme://host[:port] and
// nothing else; https, or http on the loopback host for development. Parsed by the WHATWG URL
// parser (node's URL), compared as its serialization (`URL.origin`: lower-case host, no default port).

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The list goes into a response header (the form's frame-ancestors): kept short. */
export const MAX_ORIGINS = 20;

export type OriginCheck = { readonly ok: true; readonly origin: string } | { readonly ok: false; readonly problem: string };

export function parseBrowserOrigin(text: string): OriginCheck {
  const refuse = (why: string): OriginCheck => ({ ok: false, problem: `${JSON.stringify(text)} ${why}` });
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse('is not a URL (an origin looks like https://shop.example.com)');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return refuse('is not an https origin');
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname)) return refuse('is http: only https origins are allowed (http only for localhost)');
  if (url.username !== '' || url.password !== '') return refuse('carries credentials: an origin is scheme://host[:port]');
  if (url.hostname.includes('*')) return refuse('has a wildcard: list each origin');
  // A bare origin only: "https://shop.example" or with its trailing slash, nothing after the port.
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '' || /^[a-z]+:\/\/[^/]+\/./i.test(text) || /[?#]/.test(text)) {
    return refuse('has a path, query or fragment: an origin is scheme://host[:port]');
  }
  return { ok: true, origin: url.origin };
}

/** Every origin parsed, duplicates dropped, in the given order; or the first problem. */
export function parseBrowserOrigins(texts: readonly string[]): { readonly ok: true; readonly origins: string[] } | { readonly ok: false; readonly problem: string } {
  const origins: string[] = [];
  for (const t of texts) {
    const r = parseBrowserOrigin(t);
    if (!r.ok) return r;
    if (!origins.includes(r.origin)) origins.push(r.origin);
  }
  if (origins.length > MAX_ORIGINS) return { ok: false, problem: `at most ${MAX_ORIGINS} origins` };
  return { ok: true, origins };
}
