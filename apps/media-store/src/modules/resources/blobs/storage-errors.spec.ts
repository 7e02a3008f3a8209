import { asStorageError, storageUnavailable, StorageUnavailableError } from './blob.repository';

const s3Error = (name: string, status: number) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
const socketError = (code: string) => Object.assign(new Error(code), { code });

describe('storage errors (decision 0493)', () => {
  it.each([
    ['a refused connection', socketError('ECONNREFUSED')],
    ['a reset connection', socketError('ECONNRESET')],
    ['a timeout', Object.assign(new Error('t'), { name: 'TimeoutError' })],
    ['an S3 5xx', s3Error('InternalError', 500)],
    ['an S3 503 SlowDown', s3Error('SlowDown', 503)],
  ])('%s is the storage being away: 503 Retry-After 1', (_, err) => {
    expect(storageUnavailable(err)).toBe(true);
    const wrapped = asStorageError(err) as StorageUnavailableError;
    expect(wrapped).toBeInstanceOf(StorageUnavailableError);
    expect(wrapped.storageError).toBe(err);
    expect(wrapped.getStatus()).toBe(503);
    expect(wrapped.retryAfterSeconds).toBe(1);
  });

  it.each([
    ['a missing key', s3Error('NoSuchKey', 404)],
    ['an access refusal', s3Error('AccessDenied', 403)],
    ['a programming error', new TypeError('x is undefined')],
    ['nothing', undefined],
  ])('%s passes through unchanged', (_, err) => {
    expect(storageUnavailable(err)).toBe(false);
    expect(asStorageError(err)).toBe(err);
  });

  it('an error already wrapped is not wrapped again', () => {
    const wrapped = new StorageUnavailableError(socketError('ECONNRESET'));
    expect(asStorageError(wrapped)).toBe(wrapped);
  });
});
