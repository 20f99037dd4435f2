// The harness's calls to the sandboxes' control API, over a fresh connection each (no keep-alive).
// fetch's pooled sockets raced the control server closing an idle one: a POST sent on a socket the
// other side had just closed failed with "other side closed" and took a whole planted-bug run with
// it (2026-12-01). The control API is local and called a few times per run: a connection per call
// costs nothing.
import { request } from 'node:http';

export interface ControlInit {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export function controlFetch(url: string, init: ControlInit = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...init.headers, ...(init.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(init.body)) }) };
    const req = request(url, { method: init.method ?? 'GET', headers, agent: false, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0 })));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`control API ${url} did not answer in 60 s`)));
    req.on('error', reject);
    req.end(init.body);
  });
}
