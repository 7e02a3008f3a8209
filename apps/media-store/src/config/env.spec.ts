import { loadEnv } from './env';

const valid = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1/tessera',
  REDIS_URL: 'redis://127.0.0.1:6379',
  INTERNAL_SERVICE_TOKEN: 'internal-service-token-0123456789',
};

describe('media-store env: HTTP_REQUEST_TIMEOUT_MS (decision 0499)', () => {
  it('is 15 minutes unless set, as verification-api’s: uploads arrive as fast as the hosted page sends them', () => {
    expect(loadEnv(valid).HTTP_REQUEST_TIMEOUT_MS).toBe(900_000);
  });
});
