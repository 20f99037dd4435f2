// Merchant webhook endpoints must not reach our own network: loopback, private, link-local,
// unique-local and cloud-metadata addresses (IPv4, IPv6, IPv4-mapped IPv6) are refused. The check
// runs on the address actually dialled (a DNS lookup hook), so a name that resolved to a public
// address at registration and to 127.0.0.1 at delivery (DNS rebinding) is still refused.
// SWITCHYARD_WEBHOOK_ALLOW names hosts and ranges allowed anyway, for local development.

import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const INTERNAL_V4 = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4'];
// ::/128 unspecified, ::1 loopback, fe80::/10 link-local, fc00::/7 unique-local (AWS's fd00:ec2::254
// metadata too), ff00::/8 multicast, 64:ff9b::/96 NAT64 (wraps an IPv4 address).
const INTERNAL_V6 = ['::/128', '::1/128', 'fe80::/10', 'fc00::/7', 'ff00::/8', '64:ff9b::/96'];

function blockList(ranges: readonly string[]): BlockList {
  const list = new BlockList();
  for (const r of ranges) {
    const [net, bits] = r.split('/') as [string, string];
    list.addSubnet(net, Number(bits), isIP(net) === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

const INTERNAL = blockList([...INTERNAL_V4, ...INTERNAL_V6]);

/** ::ffff:a.b.c.d (and its hex form) is the IPv4 address it carries. */
export function unmapped(address: string): string {
  const lower = address.toLowerCase();
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower) ?? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted !== null) return dotted[1]!;
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex !== null) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return address;
}

export class AddressPolicy {
  private readonly allowedRanges: BlockList;
  private readonly allowedHosts: ReadonlySet<string>;

  constructor(readonly allow: readonly string[] = []) {
    const ranges = allow.filter((a) => a.includes('/') || isIP(a) !== 0).map((a) => (a.includes('/') ? a : `${a}/${isIP(a) === 6 ? 128 : 32}`));
    this.allowedRanges = blockList(ranges);
    this.allowedHosts = new Set(allow.filter((a) => !a.includes('/') && isIP(a) === 0).map((h) => h.toLowerCase()));
  }

  /** From SWITCHYARD_WEBHOOK_ALLOW: comma-separated host names and CIDR ranges (or single addresses). */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): AddressPolicy {
    const v = env['SWITCHYARD_WEBHOOK_ALLOW'] ?? '';
    const items = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
    for (const i of items) {
      const [net, bits] = i.split('/');
      const family = isIP(net ?? '');
      const ok = i.includes('/') ? family !== 0 && /^\d+$/.test(bits ?? '') && Number(bits) <= (family === 6 ? 128 : 32) : family !== 0 || /^[a-z0-9.-]+$/i.test(i);
      if (!ok) throw new Error(`SWITCHYARD_WEBHOOK_ALLOW: ${i} is not a host name, an address or a CIDR range`);
    }
    return new AddressPolicy(items);
  }

  hostAllowed(host: string): boolean {
    return this.allowedHosts.has(host.toLowerCase().replace(/^\[|\]$/g, ''));
  }

  /** Why dialling this address is refused, or null when it may be dialled. */
  refusal(address: string, host: string): string | null {
    if (this.hostAllowed(host)) return null;
    const a = unmapped(address);
    const family = isIP(a) === 6 ? 'ipv6' : 'ipv4';
    if (this.allowedRanges.check(a, family)) return null;
    return INTERNAL.check(a, family) ? `${host} resolves to the internal address ${a}` : null;
  }

  /** A dns.lookup for http.request: the connection is made only to addresses this policy lets through. */
  lookupFor(host: string): typeof dnsLookup {
    const guarded = (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
      dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err !== null) return callback(err, '', 0);
        for (const a of addresses) {
          const why = this.refusal(a.address, host);
          if (why !== null) return callback(Object.assign(new Error(`refused: ${why}`), { code: 'EWEBHOOKADDRESS' }), '', 0);
        }
        if ((options as LookupAllOptions).all === true) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      });
    };
    return guarded as unknown as typeof dnsLookup;
  }

  /** At registration: the URL's host, literal or resolved now, must not be internal. Delivery checks again. */
  async urlRefusal(url: string): Promise<string | null> {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0) return this.refusal(host, host);
    if (this.hostAllowed(host)) return null;
    const addresses = await new Promise<LookupAddress[]>((resolve) => dnsLookup(host, { all: true }, (err, a) => resolve(err === null ? a : [])));
    // A name that does not resolve now may later; delivery checks what it resolves to then.
    for (const a of addresses) {
      const why = this.refusal(a.address, host);
      if (why !== null) return why;
    }
    return null;
  }
}
