import { createHmac } from 'node:crypto';
import {
  generateWebhookSecret,
  signStandardWebhook,
  signWebhookBody,
  verifyWebhookBody,
  webhookHeaders,
} from './webhook-signature';

describe('webhook signatures', () => {
  it('generates whsec_ + base64 of 32 bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it('signs the raw body with the UTF-8 bytes of the whole secret, lowercase hex', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"eventType":"wallet.created","data":{"a":1}}';
    const expected = createHmac('sha256', secret).update(body).digest('hex');
    expect(signWebhookBody(secret, body)).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
    expect(verifyWebhookBody(secret, body, expected)).toBe(true);
    expect(verifyWebhookBody(secret, body + ' ', expected)).toBe(false);
  });

  it('matches the Standard Webhooks reference vector', () => {
    // From the Standard Webhooks specification test vectors.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const sig = signStandardWebhook(
      secret,
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(sig).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('builds every header of one attempt', () => {
    const secret = generateWebhookSecret();
    const headers = webhookHeaders(secret, 'evt-1', 1700000000, '{}');
    expect(headers['webhook-id']).toBe('evt-1');
    expect(headers['webhook-timestamp']).toBe('1700000000');
    expect(headers['x-webhook-signature']).toBe(signWebhookBody(secret, '{}'));
    expect(headers['webhook-signature']).toBe(signStandardWebhook(secret, 'evt-1', 1700000000, '{}'));
  });
});
