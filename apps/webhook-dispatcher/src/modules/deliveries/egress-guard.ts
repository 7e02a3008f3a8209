import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to every address; injected so tests can simulate DNS (rebinding included). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

export const WEBHOOK_RESOLVER = Symbol('WEBHOOK_RESOLVER');

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
 * Webhook URL rules (custody contract, "Limits"): https only, no credentials, and every address the host
 * resolves to must be public unicast. IPv4-mapped IPv6 is judged as the IPv4 address it carries; decimal,
 * octal and hex IPv4 forms are normalised by the WHATWG URL parser before the check.
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
    if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress())
      ip = (ip as ipaddr.IPv6).toIPv4Address();
    if (this.allowPrivate.some(([net, bits]) => net.kind() === ip.kind() && ip.match([net, bits] as never)))
      return null;
    const range = ip.range();
    return range === 'unicast' ? null : `address ${ip.toString()} is not public (${range})`;
  }

  /** Parses and checks a URL, resolving its host afresh. Throws TargetRefusedError. */
  async vet(rawUrl: string): Promise<VettedTarget> {
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
            timer = setTimeout(() => reject(new Error('DNS timeout')), this.dnsTimeoutMs);
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
