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
    'hang.example': 'silent',
  });
  await dns.start();
  resolve = dnsResolver({ servers: [dns.server], timeoutMs: 1000, tries: 1 });
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

/** pbkdf2 on the threadpool; answers when it finished (Date.now()). */
const hash = (iterations: number) =>
  new Promise<number>((done) => pbkdf2('password', 'salt', iterations, 32, 'sha256', () => done(Date.now())));

it('resolves while every threadpool thread is busy', async () => {
  // Iterations for about 400 ms of hashing on this machine, as loaded as it is now.
  const t = Date.now();
  await hash(20_000);
  const iterations = Math.ceil((20_000 * 400) / Math.max(1, Date.now() - t));
  // Four hashes hold libuv's four threads; getaddrinfo (dns.lookup) would wait for one of them.
  const hashes = Array.from({ length: 4 }, () => hash(iterations));
  const addresses = await resolve('v4only.example');
  const resolvedAt = Date.now();
  const firstHashAt = Math.min(...(await Promise.all(hashes)));
  expect(addresses).toEqual([{ address: '93.184.216.34', family: 4 }]);
  expect(resolvedAt).toBeLessThan(firstHashAt);
});

it('holds no threadpool thread while a lookup waits for a server that does not answer', async () => {
  // Eight lookups wait (up to the 1 s try); with getaddrinfo they would hold all four threads meanwhile.
  let settled = 0;
  const lookups = Array.from({ length: 8 }, () =>
    resolve('hang.example').then(
      () => (settled += 1),
      () => (settled += 1),
    ),
  );
  await new Promise((r) => setTimeout(r, 50));
  await hash(1000);
  expect(settled).toBe(0);
  await Promise.all(lookups);
});

describe('the egress guard on this resolver', () => {
  const guard = () => new EgressGuard(resolve, [], 1500);

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
      // c-ares gives up after its 1 s try, or the guard after its 1.5 s, whichever comes first.
      message: expect.stringMatching(/^host hang\.example does not resolve \((.*ETIMEOUT|DNS timeout)/),
      transient: true,
    });
    expect(Date.now() - started).toBeLessThan(2500);
  });
});
