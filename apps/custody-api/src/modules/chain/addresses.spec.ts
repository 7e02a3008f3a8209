import { normalizeExternalAddress } from './addresses';

const BTC = { symbol: 'BTC', network: 'bitcoin', requiresTag: false };
const ETH = { symbol: 'ETH', network: 'ethereum', requiresTag: false };
const XRP = { symbol: 'XRP', network: 'ripple', requiresTag: true };

describe('normalizeExternalAddress: one canonical spelling per destination', () => {
  it('bech32 Bitcoin addresses are lowercase whatever the case sent; mixed case is not an address', () => {
    const lower = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
    for (const sent of [lower, lower.toUpperCase()]) {
      expect(normalizeExternalAddress(BTC, 'production', sent, undefined)).toEqual({
        ok: true,
        address: lower,
        tag: null,
      });
    }
    expect(
      normalizeExternalAddress(BTC, 'sandbox', 'TB1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KXPJZSX', undefined),
    ).toMatchObject({ ok: true, address: 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx' });
    expect(
      normalizeExternalAddress(BTC, 'production', 'bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', undefined),
    ).toMatchObject({ ok: false, field: 'address' });
  });

  it('Taproot (bech32m, witness v1) addresses are addresses, lower case like bech32; a bad checksum is not', () => {
    // BIP 350 test vectors.
    const mainnet = 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0';
    const testnet = 'tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47zagq';
    expect(normalizeExternalAddress(BTC, 'production', mainnet.toUpperCase(), undefined)).toEqual({
      ok: true,
      address: mainnet,
      tag: null,
    });
    expect(normalizeExternalAddress(BTC, 'sandbox', testnet, undefined)).toMatchObject({ ok: true });
    expect(normalizeExternalAddress(BTC, 'sandbox', mainnet, undefined)).toMatchObject({ ok: false });
    expect(normalizeExternalAddress(BTC, 'sandbox', `${testnet.slice(0, -1)}p`, undefined)).toMatchObject({
      ok: false,
      field: 'address',
    });
  });

  it('base58 Bitcoin addresses are case-sensitive and kept as sent', () => {
    const legacy = '1Jvf1kFieaUA4iCu5xfQxdNcora2C3xRCx';
    expect(normalizeExternalAddress(BTC, 'production', legacy, undefined)).toMatchObject({
      ok: true,
      address: legacy,
    });
  });

  it('Ethereum addresses are EIP-55 checksummed', () => {
    expect(
      normalizeExternalAddress(ETH, 'production', '0x52908400098527886e0f7030069857d2e4169ee7', undefined),
    ).toMatchObject({ ok: true, address: '0x52908400098527886E0F7030069857D2E4169EE7' });
  });

  it('an XRP tag is a number: leading zeros are dropped', () => {
    const address = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';
    for (const [sent, stored] of [
      ['07', '7'],
      ['0000000007', '7'],
      ['0', '0'],
      ['4294967295', '4294967295'],
    ] as const) {
      expect(normalizeExternalAddress(XRP, 'production', address, sent)).toEqual({
        ok: true,
        address,
        tag: stored,
      });
    }
    expect(normalizeExternalAddress(XRP, 'production', address, '04294967296')).toMatchObject({
      ok: false,
      field: 'tag',
    });
  });
});
