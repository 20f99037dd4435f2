// The address of the client behind a request, for per-client limits. The TCP peer, unless it is
// a proxy named in SWITCHYARD_TRUSTED_PROXIES: then X-Forwarded-For is read from the right (each
// proxy appends the address it saw), skipping trusted proxies, and the first address no trusted
// proxy stands for is the client. Entries further left are only the client's claim.

import { isIP } from 'node:net';
import type { BlockList } from 'node:net';
import type { Request } from 'express';

const unmapped = (addr: string): string => addr.trim().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');

function trusted(list: BlockList, addr: string): boolean {
  const family = isIP(addr);
  return family !== 0 && list.check(addr, family === 6 ? 'ipv6' : 'ipv4');
}

export function clientAddress(req: Request, proxies: BlockList | null): string {
  let addr = unmapped(req.socket.remoteAddress ?? '');
  if (proxies === null) return addr;
  const hops = (req.get('x-forwarded-for') ?? '').split(',').map(unmapped).filter((h) => h !== '');
  while (trusted(proxies, addr)) {
    const next = hops.pop();
    // Not an address: the nearest trusted proxy is the best we know.
    if (next === undefined || isIP(next) === 0) return addr;
    addr = next;
  }
  return addr;
}
