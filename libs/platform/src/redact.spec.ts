import { REDACTED, redactSecrets } from './redact';

describe('redactSecrets', () => {
  it('masks secret headers and any field named like a secret, at any depth', () => {
    const out = redactSecrets({
      headers: { 'x-api-secret': 's1', 'x-signature': 's2', authorization: 's3', 'x-api-key': 'visible' },
      body: {
        signingSecret: 's4',
        wallet: { hdSeed: 's5', encryptedPrivateKey: 's6' },
        list: [{ apiSecret: 's7' }],
      },
      sdkToken: 's8',
      amount: '10.5',
    });
    expect(JSON.stringify(out)).not.toMatch(/"s\d"/);
    expect(out.headers['x-api-key']).toBe('visible');
    expect(out.headers.authorization).toBe(REDACTED);
    expect(out.body.list[0].apiSecret).toBe(REDACTED);
    expect(out.amount).toBe('10.5');
  });

  it('leaves the input untouched', () => {
    const input = { password: 'p' };
    redactSecrets(input);
    expect(input.password).toBe('p');
  });
});
