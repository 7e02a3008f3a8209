import { BlockList, isIP } from 'node:net';

/** Strips the IPv4-mapped IPv6 form (`::ffff:10.0.0.1` -> `10.0.0.1`). */
export function normalizeIp(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return mapped ? mapped[1] : ip;
}

/** Validates a CIDR (`10.0.0.0/8`, `2001:db8::/32`) or a bare address; returns an error text or undefined. */
export function cidrProblem(cidr: string): string | undefined {
  const [address, prefix, extra] = cidr.split('/');
  const family = isIP(address ?? '');
  if (!family || extra !== undefined) return `${cidr} is not an IP address or CIDR`;
  if (prefix === undefined) return undefined;
  const bits = Number(prefix);
  const max = family === 4 ? 32 : 128;
  if (!/^\d+$/.test(prefix) || bits > max) return `${cidr} has an invalid prefix length`;
  return undefined;
}

/** A compiled allow-list of CIDRs. An empty list allows every address. */
export class IpAllowList {
  private readonly list = new BlockList();
  readonly empty: boolean;

  constructor(cidrs: readonly string[]) {
    this.empty = cidrs.length === 0;
    for (const cidr of cidrs) {
      const problem = cidrProblem(cidr);
      if (problem) throw new Error(problem);
      const [address, prefix] = cidr.split('/');
      const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      if (prefix === undefined) this.list.addAddress(address, family);
      else this.list.addSubnet(address, Number(prefix), family);
    }
  }

  allows(ip: string | undefined): boolean {
    if (this.empty) return true;
    if (!ip) return false;
    const address = normalizeIp(ip);
    const family = isIP(address);
    if (!family) return false;
    return this.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/**
 * The client address: the socket peer, unless the peer is a trusted proxy, in which case the right-most
 * X-Forwarded-For entry that is not itself a trusted proxy.
 */
export function clientIp(
  remoteAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustedProxies: IpAllowList | undefined,
): string | undefined {
  const peer = remoteAddress ? normalizeIp(remoteAddress) : undefined;
  if (!peer || !trustedProxies || trustedProxies.empty || !trustedProxies.allows(peer)) return peer;
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
  if (!header) return peer;
  const hops = header
    .split(',')
    .map((h) => normalizeIp(h.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trustedProxies.allows(hops[i])) return hops[i];
  }
  return hops[0] ?? peer;
}
