// Merchant webhook endpoints must not reach our own network: loopback, private, link-local,
// unique-local and cloud-metadata addresses (IPv4, IPv6, IPv4-mapped IPv6) are refused. The check
// runs on the address actually dialled (a DNS lookup hook), so a name that resolved to a public
// address at registration and to 127.0.0.1 at delivery (DNS rebinding) is still refused.
// SWITCHYARD_WEBHOOK_ALLOW names hosts and ranges allowed anyway, for local development; only
// there may an endpoint be plain http (anywhere else the signed events would cross the internet in
// clear). A refusal tells the merchant which host, never the address it resolved to here: that
// would map our network for them (split-horizon names); the address goes to our own logs.

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

export interface AddressRefusal {
  /** What the merchant is told (which host, never where it resolved). */
  readonly reason: string;
  /** The internal address refused, for our own logs only; null when the refusal is not about one. */
  readonly address: string | null;
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
  refusal(address: string, host: string): AddressRefusal | null {
    if (this.hostAllowed(host)) return null;
    const a = unmapped(address);
    if (this.rangeAllowed(a)) return null;
    if (!INTERNAL.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4')) return null;
    return { reason: isIP(host) !== 0 ? `${host} is an internal address` : `${host} resolves to an internal address`, address: a };
  }

  private rangeAllowed(address: string): boolean {
    const a = unmapped(address);
    return this.allowedRanges.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4');
  }

  /** A dns.lookup for http.request: the connection is made only to addresses this policy lets through. */
  lookupFor(host: string): typeof dnsLookup {
    const guarded = (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
      dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err !== null) return callback(err, '', 0);
        for (const a of addresses) {
          const why = this.refusal(a.address, host);
          if (why !== null) return callback(Object.assign(new Error(`refused: ${why.reason}`), { code: 'EWEBHOOKADDRESS', address: why.address }), '', 0);
        }
        if ((options as LookupAllOptions).all === true) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      });
    };
    return guarded as unknown as typeof dnsLookup;
  }

  /**
   * At registration: the URL's host, literal or resolved now, must not be internal, and a plain
   * http URL must name a host the allow list lets through (by name, or every address it resolves
   * to in an allowed range). Delivery checks the address again.
   */
  async urlRefusal(url: string): Promise<AddressRefusal | null> {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const named = isIP(host) === 0;
    // A name that does not resolve now may later; delivery checks what it resolves to then.
    const addresses = !named ? [host] : this.hostAllowed(host) ? [] : await new Promise<string[]>((resolve) => dnsLookup(host, { all: true }, (err, a) => resolve(err === null ? a.map((x) => x.address) : [])));
    for (const a of addresses) {
      const why = this.refusal(a, host);
      if (why !== null) return why;
    }
    const allowedPlain = this.hostAllowed(host) || (addresses.length > 0 && addresses.every((a) => this.rangeAllowed(a)));
    if (u.protocol === 'http:' && !allowedPlain) return { reason: 'must be an https URL (plain http only to hosts SWITCHYARD_WEBHOOK_ALLOW lets through)', address: null };
    return null;
  }
}
