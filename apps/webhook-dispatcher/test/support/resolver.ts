import type { HostResolver } from '../../src/modules/deliveries/egress-guard';

/**
 * Test DNS: every *.test host is the loopback receiver, except scripted hosts whose answers change from
 * one lookup to the next (DNS rebinding, or a lookup that fails once).
 */
export function testResolver(scripted: Record<string, string[][]> = {}): HostResolver {
  const calls = new Map<string, number>();
  return async (hostname) => {
    const script = scripted[hostname];
    if (script) {
      const n = calls.get(hostname) ?? 0;
      calls.set(hostname, n + 1);
      const answer = script[Math.min(n, script.length - 1)]!;
      // An empty answer stands for a failed lookup.
      if (answer.length === 0)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    }
    if (hostname.endsWith('.test')) return [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  };
}
