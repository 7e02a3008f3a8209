import { REDACTED, redactSecrets } from './redact';

describe('redactSecrets', () => {
  it('masks secret headers and any field named like a secret, at any depth', () => {
    const out = redactSecrets({
      headers: {
        'x-api-secret': 's1',
        'x-signature': 's2',
        authorization: 's3',
        'x-api-key': 'vk_live_0a1b2c',
      },
      body: {
        signingSecret: 's4',
        wallet: { hdSeed: 's5', encryptedPrivateKey: 's6' },
        list: [{ apiSecret: 's7' }],
      },
      sdkToken: 's8',
      amount: '10.5',
    });
    expect(JSON.stringify(out)).not.toMatch(/"s\d"/);
    expect(out.headers['x-api-key']).toBe('vk_live_0a1b2c');
    expect(out.headers.authorization).toBe(REDACTED);
    expect(out.body.list[0].apiSecret).toBe(REDACTED);
    expect(out.amount).toBe('10.5');
  });

  it('logs an X-Api-Key only in the shape of a key id: anything else there is likely a misplaced secret', () => {
    for (const id of ['vk_live_0a1b2c', 'vk_test_ff', 'ck_test_' + '0'.repeat(32), 'ck_live_abc123']) {
      expect(redactSecrets({ 'x-api-key': id })['x-api-key']).toBe(id);
    }
    for (const value of [
      'Zm9vYmFyYmF6cXV4LXNlY3JldC12YWx1ZS0xMjM0NTY3ODkw',
      'not-a-key',
      'vk_live_a.b',
      '',
    ]) {
      expect(redactSecrets({ headers: { 'X-Api-Key': value } }).headers['X-Api-Key']).toBe(REDACTED);
    }
  });

  it('leaves the input untouched', () => {
    const input = { password: 'p' };
    redactSecrets(input);
    expect(input.password).toBe('p');
  });
});
