import { pbkdf2 } from 'node:crypto';
import { dnsResolver, EgressGuard, type HostResolver } from '../src/modules/deliveries/egress-guard';
import { TestDnsServer } from './support/dns-server';

/**
 * Decision 0456: receiver hosts are resolved with c-ares against a real DNS server (here one on a loopback UDP
 * port; there is no other network), not with getaddrinfo on libuv's threadpool. The egress rules stay exact.
 */
let dns: TestDnsServer;
let resolve: HostResolver;

beforeAll(async () => {
  dns = new TestDnsServer({
    'partner.example': { a: ['93.184.216.34'], aaaa: ['2606:2800:220:1:248:1893:25c8:1946'] },
    'v4only.example': { a: ['93.184.216.34'] },
    'mixed.example': { a: ['93.184.216.34'], aaaa: ['::1'] },
    'inside.example': { a: ['10.1.2.3'] },
    'slow.example': { a: ['93.184.216.34'], delayMs: 300 },
    'hang.example': 'silent',
  });
  await dns.start();
  resolve = dnsResolver({ servers: [dns.server], timeoutMs: 200, tries: 1 });
});

afterAll(async () => {
  await dns?.stop();
});

it('answers the A and AAAA records of a name', async () => {
  expect(await resolve('partner.example')).toEqual([
    { address: '93.184.216.34', family: 4 },
    { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
  ]);
  expect(await resolve('v4only.example')).toEqual([{ address: '93.184.216.34', family: 4 }]);
  expect(await resolve('nothing.example')).toEqual([]);
  // localhost names answer loopback without asking the server (RFC 6761).
  const asked = dns.queries.length;
  expect(await resolve('localhost')).toEqual([
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ]);
  expect(dns.queries).toHaveLength(asked);
});

it('resolves while every threadpool thread is busy', async () => {
  // Four slow hashes hold libuv's four threads; getaddrinfo (dns.lookup) would wait for one of them.
  let firstHashAt = Infinity;
  const started = Date.now();
  const hashes = Array.from(
    { length: 4 },
    () =>
      new Promise<void>((done) =>
        pbkdf2('password', 'salt', 300_000, 32, 'sha256', () => {
          firstHashAt = Math.min(firstHashAt, Date.now());
          done();
        }),
      ),
  );
  const addresses = await resolve('slow.example');
  const resolvedAt = Date.now();
  await Promise.all(hashes);
  expect(addresses).toEqual([{ address: '93.184.216.34', family: 4 }]);
  expect(resolvedAt).toBeLessThan(firstHashAt);
  expect(resolvedAt - started).toBeGreaterThanOrEqual(290);
});

describe('the egress guard on this resolver', () => {
  const guard = () => new EgressGuard(resolve, [], 1000);

  it('pins a public address and refuses a host with any non-public one', async () => {
    const target = await guard().vet('https://partner.example/hook');
    expect(target.address).toEqual({ address: '93.184.216.34', family: 4 });
    await expect(guard().vet('https://mixed.example/hook')).rejects.toMatchObject({
      message: expect.stringMatching(/::1 is not public \(loopback\)/),
      transient: false,
    });
    await expect(guard().vet('https://inside.example/hook')).rejects.toMatchObject({
      message: expect.stringMatching(/10\.1\.2\.3 is not public \(private\)/),
      transient: false,
    });
  });

  it('makes an unknown name or a server that does not answer a transient refusal, within the timeout', async () => {
    await expect(guard().vet('https://nothing.example/hook')).rejects.toMatchObject({
      message: 'host nothing.example does not resolve',
      transient: true,
    });
    const started = Date.now();
    await expect(guard().vet('https://hang.example/hook')).rejects.toMatchObject({
      message: expect.stringMatching(/^host hang\.example does not resolve \(.*ETIMEOUT/),
      transient: true,
    });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
