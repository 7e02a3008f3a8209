import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC } from '@tessera/contracts';
import { createTestEnvironment, type TestEnvironment } from '@tessera/testing';
import { EgressGuard, parseCidrList, TargetRefusedError } from '../src/modules/deliveries/egress-guard';
import { bootDispatcher, dispatcherMigrator, rpc } from './support/harness';
import { testResolver } from './support/resolver';

/** DNS answers for names used below: each resolves (at least partly) to a non-public address. */
const dns = testResolver({
  'localhost.example': [['127.0.0.1']],
  'ten.example': [['10.1.2.3']],
  'mixed.example': [['93.184.216.34', '192.168.1.10']],
  'metadata.example': [['169.254.169.254']],
  'cgnat.example': [['100.64.0.1']],
  'v6loop.example': [['::1']],
  'ula.example': [['fd12:3456::1']],
  'mapped.example': [['::ffff:10.0.0.1']],
  'linklocal6.example': [['fe80::1']],
  'nat64.example': [['64:ff9b::a00:1']],
  'public.example': [['93.184.216.34']],
  'public6.example': [['2606:2800:220:1:248:1893:25c8:1946']],
  'compat.example': [['::a9fe:a9fe']],
  // Node's resolver prints an IPv4-compatible answer in dotted form, which ipaddr.js reads as IPv4-mapped.
  'compat-dotted.example': [['::8.8.8.8']],
  'sixtofour.example': [['2002:a00:1::1']],
  'v6doc.example': [['93.184.216.34', '2001:db8::5']],
});

const refused: [string, RegExp][] = [
  // Scheme and shape
  ['http://public.example/hook', /scheme must be https/],
  ['ftp://public.example/hook', /scheme must be https/],
  ['https://user:pass@public.example/hook', /credentials/],
  ['not a url', /not valid/],
  ['https://nxdomain.example/hook', /does not resolve/],
  // Loopback in every IPv4 spelling (the URL parser normalises them, the check sees 127.0.0.1)
  ['https://127.0.0.1/hook', /127\.0\.0\.1 is not public \(loopback\)/],
  ['https://2130706433/hook', /127\.0\.0\.1 is not public \(loopback\)/],
  ['https://0177.0.0.1/hook', /127\.0\.0\.1 is not public \(loopback\)/],
  ['https://0x7f.0.0.1/hook', /127\.0\.0\.1 is not public \(loopback\)/],
  ['https://0x7f000001/hook', /127\.0\.0\.1 is not public \(loopback\)/],
  ['https://017700000001/hook', /127\.0\.0\.1 is not public \(loopback\)/],
  ['https://127.1/hook', /127\.0\.0\.1 is not public \(loopback\)/],
  ['https://[::1]/hook', /not public \(loopback\)/],
  ['https://[::ffff:127.0.0.1]/hook', /127\.0\.0\.1 is not public \(loopback\)/],
  ['https://[::ffff:7f00:1]/hook', /127\.0\.0\.1 is not public \(loopback\)/],
  // Private, link-local, metadata, CGNAT, unspecified, multicast, broadcast
  ['https://10.0.0.1/hook', /not public \(private\)/],
  ['https://172.16.5.4/hook', /not public \(private\)/],
  ['https://192.168.0.1/hook', /not public \(private\)/],
  ['https://0xa9fea9fe/hook', /169\.254\.169\.254 is not public \(linkLocal\)/],
  ['https://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is not public \(linkLocal\)/],
  ['https://100.64.0.1/hook', /not public \(carrierGradeNat\)/],
  ['https://0.0.0.0/hook', /not public \(unspecified\)/],
  ['https://0.1.2.3/hook', /not public/],
  ['https://224.0.0.1/hook', /not public \(multicast\)/],
  ['https://255.255.255.255/hook', /not public \(broadcast\)/],
  ['https://[fc00::1]/hook', /not public \(uniqueLocal\)/],
  ['https://[fd00::1]/hook', /not public \(uniqueLocal\)/],
  ['https://[ff02::1]/hook', /not public \(multicast\)/],
  ['https://[fe80::1]/hook', /not public \(linkLocal\)/],
  ['https://[::]/hook', /not public \(unspecified\)/],
  ['https://[::ffff:10.0.0.1]/hook', /10\.0\.0\.1 is not public \(private\)/],
  ['https://[::ffff:169.254.169.254]/hook', /169\.254\.169\.254 is not public \(linkLocal\)/],
  ['https://[::ffff:100.64.0.1]/hook', /not public \(carrierGradeNat\)/],
  // Hostnames resolving to non-public addresses (any one bad address refuses the host)
  ['https://localhost.example/hook', /127\.0\.0\.1 is not public \(loopback\)/],
  ['https://ten.example/hook', /10\.1\.2\.3 is not public \(private\)/],
  ['https://mixed.example/hook', /192\.168\.1\.10 is not public \(private\)/],
  ['https://metadata.example/hook', /169\.254\.169\.254 is not public \(linkLocal\)/],
  ['https://cgnat.example/hook', /100\.64\.0\.1 is not public \(carrierGradeNat\)/],
  ['https://v6loop.example/hook', /not public \(loopback\)/],
  ['https://ula.example/hook', /not public \(uniqueLocal\)/],
  ['https://mapped.example/hook', /10\.0\.0\.1 is not public \(private\)/],
  ['https://linklocal6.example/hook', /not public \(linkLocal\)/],
  ['https://nat64.example/hook', /not public \(rfc6052, carries 10\.0\.0\.1\)/],
  // IPv4-compatible IPv6 (::/96): the issue-15 hole; the URL parser rewrites the dotted form to hex
  ['https://[::a9fe:a9fe]/hook', /not public \(ipv4Compatible, carries 169\.254\.169\.254\)/],
  ['https://[::169.254.169.254]/hook', /carries 169\.254\.169\.254/],
  ['https://[::127.0.0.1]/hook', /carries 127\.0\.0\.1/],
  ['https://[::7f00:1]/hook', /carries 127\.0\.0\.1/],
  ['https://[::10.0.0.1]/hook', /carries 10\.0\.0\.1/],
  ['https://[::192.168.1.1]/hook', /carries 192\.168\.1\.1/],
  ['https://[::8.8.8.8]/hook', /ipv4Compatible/],
  ['https://[0:0:0:0:0:0:a9fe:a9fe]/hook', /ipv4Compatible/],
  ['https://compat.example/hook', /ipv4Compatible, carries 169\.254\.169\.254/],
  ['https://compat-dotted.example/hook', /::8\.8\.8\.8 is not public \(ipv4Compatible, carries 8\.8\.8\.8\)/],
  // IPv4-mapped spellings
  ['https://[::ffff:a9fe:a9fe]/hook', /169\.254\.169\.254 is not public \(linkLocal\)/],
  ['https://[0:0:0:0:0:ffff:c0a8:101]/hook', /192\.168\.1\.1 is not public \(private\)/],
  ['https://[::ffff:0.0.0.0]/hook', /0\.0\.0\.0 is not public \(unspecified\)/],
  ['https://[::ffff:192.0.2.1]/hook', /192\.0\.2\.1 is not public/],
  // Translation and tunnelling forms (NAT64, 6to4, Teredo, SIIT)
  ['https://[64:ff9b::a9fe:a9fe]/hook', /rfc6052, carries 169\.254\.169\.254/],
  ['https://[64:ff9b::7f00:1]/hook', /rfc6052, carries 127\.0\.0\.1/],
  ['https://[64:ff9b::808:808]/hook', /rfc6052/],
  ['https://[64:ff9b:1::a00:1]/hook', /not public/],
  ['https://[2002:a9fe:a9fe::1]/hook', /6to4, carries 169\.254\.169\.254/],
  ['https://[2002:7f00:1::1]/hook', /6to4, carries 127\.0\.0\.1/],
  ['https://[2002:a00:1::]/hook', /6to4, carries 10\.0\.0\.1/],
  ['https://[2002:c0a8:101::1]/hook', /6to4, carries 192\.168\.1\.1/],
  ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook', /not public \(teredo\)/],
  ['https://[::ffff:0:a9fe:a9fe]/hook', /not public \(rfc6145\)/],
  ['https://sixtofour.example/hook', /6to4, carries 10\.0\.0\.1/],
  // IANA IPv4 special-purpose blocks that are not global
  ['https://192.0.0.1/hook', /not public/],
  ['https://192.0.0.170/hook', /not public/],
  ['https://192.0.2.10/hook', /not public/],
  ['https://198.51.100.7/hook', /not public/],
  ['https://203.0.113.9/hook', /not public/],
  ['https://198.18.0.1/hook', /not public/],
  ['https://198.19.255.254/hook', /not public/],
  ['https://192.88.99.1/hook', /not public/],
  ['https://192.31.196.1/hook', /not public/],
  ['https://192.52.193.1/hook', /not public/],
  ['https://192.175.48.1/hook', /not public/],
  ['https://240.0.0.1/hook', /not public/],
  ['https://250.1.2.3/hook', /not public/],
  ['https://239.255.255.250/hook', /not public \(multicast\)/],
  ['https://100.127.255.255/hook', /not public \(carrierGradeNat\)/],
  ['https://172.31.255.255/hook', /not public \(private\)/],
  ['https://127.255.255.254/hook', /not public \(loopback\)/],
  ['https://169.254.0.1/hook', /not public \(linkLocal\)/],
  ['https://0/hook', /0\.0\.0\.0 is not public/],
  ['https://10.255.255.255/hook', /not public \(private\)/],
  // IANA IPv6 special-purpose blocks and everything outside 2000::/3
  ['https://[2001:db8::1]/hook', /not public/],
  ['https://[3fff::1]/hook', /not public/],
  ['https://[100::1]/hook', /not public \(discard\)/],
  ['https://[2001:2::1]/hook', /not public/],
  ['https://[2001:10::1]/hook', /not public/],
  ['https://[5f00::1]/hook', /not public/],
  ['https://[fec0::1]/hook', /not public/],
  ['https://[fe80::1%25eth0]/hook', /not (valid|public)/],
  ['https://[4000::1]/hook', /not public \(reserved\)/],
  ['https://[1::1]/hook', /not public \(reserved\)/],
  ['https://[ff05::2]/hook', /not public \(multicast\)/],
  ['https://[::2]/hook', /not public/],
  ['https://v6doc.example/hook', /not public/],
];

describe('egress guard: URLs and resolutions that must be refused', () => {
  const guard = new EgressGuard(dns);

  it(`has at least 80 cases (${refused.length})`, () => {
    expect(refused.length).toBeGreaterThanOrEqual(80);
  });

  it.each(refused)('refuses %s', async (url, reason) => {
    const err = await guard.vet(url).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TargetRefusedError);
    expect((err as Error).message).toMatch(reason);
  });

  it('accepts public hosts and connects to the vetted address', async () => {
    await expect(guard.vet('https://public.example/hook')).resolves.toMatchObject({
      hostname: 'public.example',
      address: { address: '93.184.216.34', family: 4 },
    });
    await expect(guard.vet('https://public6.example:8443/x')).resolves.toMatchObject({
      address: { family: 6 },
    });
    await expect(guard.vet('https://8.8.8.8/hook')).resolves.toMatchObject({ hostname: '8.8.8.8' });
    // Mapped forms of a public address are that address; global unicast IPv6 passes.
    await expect(guard.vet('https://[::ffff:8.8.8.8]/hook')).resolves.toBeTruthy();
    await expect(guard.vet('https://[2606:4700:4700::1111]/hook')).resolves.toBeTruthy();
    await expect(guard.vet('https://192.0.3.1/hook')).resolves.toBeTruthy();
  });

  it('relaxes only the configured CIDRs when WEBHOOK_ALLOW_PRIVATE_TARGETS is set', async () => {
    const relaxed = new EgressGuard(dns, parseCidrList('127.0.0.1/32, 10.1.0.0/16'));
    await expect(relaxed.vet('https://127.0.0.1/hook')).resolves.toBeTruthy();
    await expect(relaxed.vet('https://[::ffff:127.0.0.1]/hook')).resolves.toBeTruthy();
    await expect(relaxed.vet('https://ten.example/hook')).resolves.toBeTruthy();
    await expect(relaxed.vet('https://127.0.0.2/hook')).rejects.toThrow(/loopback/);
    await expect(relaxed.vet('https://169.254.169.254/hook')).rejects.toThrow(/linkLocal/);
  });

  it('re-resolves on every check: a host that turns private is refused (rebinding)', async () => {
    const rebinding = new EgressGuard(testResolver({ 'rebind.example': [['93.184.216.34'], ['127.0.0.1']] }));
    await expect(rebinding.vet('https://rebind.example/hook')).resolves.toBeTruthy();
    await expect(rebinding.vet('https://rebind.example/hook')).rejects.toThrow(/loopback/);
  });
});

describe('egress rules at configuration time', () => {
  let env: TestEnvironment;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnvironment([dispatcherMigrator()]);
    app = await bootDispatcher(env, {}, dns);
  });

  afterAll(async () => {
    await app?.close();
    await env?.teardown();
  });

  it.each([
    ['http://public.example/hook', 'URL scheme must be https'],
    ['https://[::ffff:127.0.0.1]/hook', 'address 127.0.0.1 is not public (loopback)'],
    ['https://metadata.example/hook', 'address 169.254.169.254 is not public (linkLocal)'],
    [
      'https://[::a9fe:a9fe]/hook',
      'address ::a9fe:a9fe is not public (ipv4Compatible, carries 169.254.169.254)',
    ],
    [
      'https://[::169.254.169.254]/hook',
      'address ::a9fe:a9fe is not public (ipv4Compatible, carries 169.254.169.254)',
    ],
    ['https://[2002:a00:1::1]/hook', 'address 2002:a00:1::1 is not public (6to4, carries 10.0.0.1)'],
    [
      'https://[64:ff9b::a9fe:a9fe]/hook',
      'address 64:ff9b::a9fe:a9fe is not public (rfc6052, carries 169.254.169.254)',
    ],
  ])('PUT refuses %s with 400', async (url, message) => {
    expect(
      await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, { tenantId: 't', source: 'custody', body: { url } }),
    ).toEqual({
      ok: false,
      error: { status: 400, message: 'Invalid webhook URL', errors: { url: [message] } },
    });
  });

  it('accepts a public https URL', async () => {
    const reply = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
      tenantId: 't',
      source: 'custody',
      body: { url: 'https://public.example/hook' },
    });
    expect(reply).toMatchObject({
      ok: true,
      result: { isConfigured: true, signingSecret: expect.stringMatching(/^whsec_/) },
    });
  });
});
