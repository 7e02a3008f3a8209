import { Resolver } from 'node:dns/promises';
import { BlockList } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to every address; injected so tests can simulate DNS (rebinding included). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** A name with no record of one family (or no name at all) answers no address of it; other errors throw. */
const orNone = (answer: Promise<string[]>): Promise<string[]> =>
  answer.catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENODATA' || err.code === 'ENOTFOUND') return [];
    throw err;
  });

/**
 * Resolves receiver hosts with c-ares (A and AAAA queries on its own sockets, `dns.Resolver`), never with
 * `dns.lookup`: getaddrinfo runs on libuv's threadpool (4 threads, shared with crypto and fs), and a slow DNS
 * server held a thread for as long as the system resolver waited, however short the guard's timeout (decision
 * 0456). Each query gives up after `timeoutMs` per try; the guard's own timeout bounds the whole lookup.
 * `localhost` names answer loopback without a query (RFC 6761); other /etc/hosts entries are not read.
 * `servers` (host:port) replaces the system's DNS servers (/etc/resolv.conf): tests run their own.
 */
export function dnsResolver(
  opts: { servers?: string[]; timeoutMs?: number; tries?: number } = {},
): HostResolver {
  const resolver = new Resolver({ timeout: opts.timeoutMs ?? 1000, tries: opts.tries ?? 2 });
  if (opts.servers) resolver.setServers(opts.servers);
  return async (hostname) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost'))
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    const [v4, v6] = await Promise.all([orNone(resolver.resolve4(name)), orNone(resolver.resolve6(name))]);
    return [
      ...v4.map((address) => ({ address, family: 4 as const })),
      ...v6.map((address) => ({ address, family: 6 as const })),
    ];
  };
}

/** A URL or address that fails the webhook egress rules. */
export class TargetRefusedError extends Error {
  readonly code = 'WEBHOOK_TARGET_REFUSED';
  /**
   * @param transient true when the host did not resolve (or DNS timed out): a delivery retries on schedule.
   * Otherwise the target itself is refused (scheme, non-public address) and a delivery is dead at once.
   */
  constructor(
    message: string,
    readonly transient = false,
  ) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

export interface VettedTarget {
  url: URL;
  hostname: string;
  /** The address to connect to: one of the resolved addresses, all of which passed. */
  address: ResolvedAddress;
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

export function parseCidrList(list: string | undefined): Cidr[] {
  if (!list) return [];
  return list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) =>
      s.includes('/')
        ? ipaddr.parseCIDR(s)
        : ([ipaddr.parse(s), ipaddr.parse(s).kind() === 'ipv4' ? 32 : 128] as Cidr),
    );
}

/**
 * Addresses that are not globally reachable, from the IANA IPv4 and IPv6 Special-Purpose Address
 * Registries (every entry whose "Globally Reachable" is False or N/A, plus the AS112 and AMT anycast blocks,
 * which no partner endpoint lives in), and the blocks outside them that are not global unicast either.
 * ipaddr.js already names most of them; this table is the second, independent opinion, kept in a
 * `net.BlockList`, so a range one of them misses the other still refuses (docs/decisions/0011).
 */
export const NON_GLOBAL_RANGES: Array<[cidr: string, name: string]> = [
  ['0.0.0.0/8', 'thisNetwork'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrierGradeNat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'linkLocal'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'ietfProtocolAssignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.31.196.0/24', 'as112'],
  ['192.52.193.0/24', 'amt'],
  ['192.88.99.0/24', 'deprecated6to4Relay'],
  ['192.168.0.0/16', 'private'],
  ['192.175.48.0/24', 'as112'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'broadcast'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'ipv4Compatible'],
  ['::ffff:0:0/96', 'ipv4Mapped'],
  ['::ffff:0:0:0/96', 'rfc6145'],
  ['64:ff9b::/96', 'rfc6052'],
  ['64:ff9b:1::/48', 'rfc8215'],
  ['100::/64', 'discard'],
  ['2001::/23', 'ietfProtocolAssignments'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['2620:4f:8000::/48', 'as112v6'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segmentRouting'],
  ['fc00::/7', 'uniqueLocal'],
  ['fe80::/10', 'linkLocal'],
  ['fec0::/10', 'deprecatedSiteLocal'],
  ['ff00::/8', 'multicast'],
];

const blockLists = NON_GLOBAL_RANGES.map(([cidr, name]) => {
  const [network, bits] = cidr.split('/') as [string, string];
  const list = new BlockList();
  list.addSubnet(network, Number(bits), network.includes(':') ? 'ipv6' : 'ipv4');
  return { list, name, family: network.includes(':') ? 'ipv6' : 'ipv4' };
});

/** The first IANA non-global range that holds the address, by name. */
function ianaRange(ip: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  const family = ip.kind();
  const text = ip.toString();
  return blockLists.find((b) => b.family === family && b.list.check(text, family))?.name;
}

/** The IPv4 address an IPv6 translation form carries: ::/96, 64:ff9b::/96, 2002::/16. */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const bytes = ip.toByteArray();
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  if (zeros(0, 12)) return new ipaddr.IPv4(bytes.slice(12, 16));
  if (ip.match(ipaddr.parseCIDR('64:ff9b::/96'))) return new ipaddr.IPv4(bytes.slice(12, 16));
  if (ip.match(ipaddr.parseCIDR('2002::/16'))) return new ipaddr.IPv4(bytes.slice(2, 6));
  return undefined;
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** ::/96, as Node parses it (ipaddr.js mistakes its dotted form for IPv4-mapped). */
const IPV4_COMPATIBLE = new BlockList();
IPV4_COMPATIBLE.addSubnet('::', 96, 'ipv6');

/**
 * Webhook URL rules (custody contract, "Limits"): https only, no credentials, and every address the host
 * resolves to must be global unicast. IPv4-mapped IPv6 is judged as the IPv4 address it carries; every
 * other IPv6 form that carries an IPv4 address (IPv4-compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16)
 * is refused whatever it carries; decimal, octal and hex IPv4 forms are normalised by the WHATWG URL parser
 * before the check.
 */
export class EgressGuard {
  constructor(
    private readonly resolver: HostResolver,
    private readonly allowPrivate: Cidr[] = [],
    private readonly dnsTimeoutMs = 5000,
  ) {}

  /** Why this address may not be contacted, or null when it is public (or explicitly allowed). */
  refusalFor(address: string): string | null {
    if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
    let ip = ipaddr.parse(address);
    if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) {
      // ipaddr.js reads the IPv4-compatible dotted form (::8.8.8.8, ::/96) as IPv4-mapped (::ffff:8.8.8.8);
      // Node's parser does not. Only a real ::ffff: prefix is judged as the IPv4 address it carries.
      const v4 = (ip as ipaddr.IPv6).toIPv4Address();
      if (IPV4_COMPATIBLE.check(address, 'ipv6')) {
        return `address ${address} is not public (ipv4Compatible, carries ${v4.toString()})`;
      }
      ip = v4;
    }
    if (this.allowPrivate.some(([net, bits]) => net.kind() === ip.kind() && ip.match([net, bits] as never)))
      return null;
    const range = ip.range();
    const iana = ianaRange(ip);
    const name = range !== 'unicast' ? range : iana;
    if (ip.kind() === 'ipv6') {
      const v6 = ip as ipaddr.IPv6;
      const carried = name !== 'unspecified' && name !== 'loopback' ? embeddedIPv4(v6) : undefined;
      if (carried) {
        return `address ${v6.toString()} is not public (${iana ?? range}, carries ${carried.toString()})`;
      }
      if (!name && !v6.match(GLOBAL_UNICAST_V6)) return `address ${v6.toString()} is not public (reserved)`;
    }
    return name ? `address ${ip.toString()} is not public (${name})` : null;
  }

  /**
   * Parses and checks a URL, resolving its host afresh within `timeoutMs` (an attempt passes what is left of its
   * own deadline, decision 0497). Throws TargetRefusedError.
   */
  async vet(rawUrl: string, timeoutMs = this.dnsTimeoutMs): Promise<VettedTarget> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new TargetRefusedError('URL is not valid');
    }
    if (url.protocol !== 'https:') throw new TargetRefusedError('URL scheme must be https');
    if (url.username || url.password) throw new TargetRefusedError('URL must not carry credentials');
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (!hostname) throw new TargetRefusedError('URL has no host');
    let addresses: ResolvedAddress[];
    if (ipaddr.isValid(hostname)) {
      addresses = [{ address: hostname, family: hostname.includes(':') ? 6 : 4 }];
    } else {
      if (!/^[a-z0-9.-]+$/i.test(hostname)) throw new TargetRefusedError('URL host is not valid');
      let timer: NodeJS.Timeout | undefined;
      try {
        addresses = await Promise.race([
          this.resolver(hostname),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('DNS timeout')), timeoutMs);
          }),
        ]);
      } catch (err) {
        throw new TargetRefusedError(`host ${hostname} does not resolve (${(err as Error).message})`, true);
      } finally {
        clearTimeout(timer);
      }
    }
    if (addresses.length === 0) throw new TargetRefusedError(`host ${hostname} does not resolve`, true);
    for (const a of addresses) {
      const refusal = this.refusalFor(a.address);
      if (refusal) throw new TargetRefusedError(refusal);
    }
    return { url, hostname, address: addresses[0]! };
  }
}
