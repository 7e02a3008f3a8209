import { type ArgumentsHost, HttpException, Logger } from '@nestjs/common';
import Fastify from 'fastify';
import { AppException } from './errors';
import { CustodyExceptionFilter, VerificationExceptionFilter } from './exception-filters';

/** What one filter answers (over a real socket) for `thrown`: status, the headers that matter, body. */
async function answerTo(filter: VerificationExceptionFilter | CustodyExceptionFilter, thrown: unknown) {
  const app = Fastify({ logger: false });
  app.get('/', (request, reply) => {
    const host = {
      getType: () => 'http',
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
    } as unknown as ArgumentsHost;
    filter.catch(thrown, host);
    return reply;
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const res = await fetch(url);
    const text = await res.text();
    return {
      status: res.status,
      code: res.headers.get('x-error-code'),
      retryAfter: res.headers.get('retry-after'),
      body: text ? (JSON.parse(text) as unknown) : undefined,
    };
  } finally {
    await app.close();
  }
}

// The filter logs each 5xx it answers: not this suite's subject.
beforeAll(() => Logger.overrideLogger(false));

const withCode = (error: Error, code: string) => Object.assign(error, { code });

describe.each([
  ['verification', new VerificationExceptionFilter()],
  ['custody', new CustodyExceptionFilter()],
])('the %s exception filter', (_name, filter) => {
  it('sends an AppException’s code as X-Error-Code on a 5xx, and its Retry-After (decision 0469)', async () => {
    const expired = new AppException(503, 'The upload expired', undefined, 'upload_expired', 0);
    expect(await answerTo(filter, expired)).toEqual({
      status: 503,
      code: 'upload_expired',
      retryAfter: '0',
      body: { message: 'The upload expired' },
    });
  });

  it('keeps the 4xx codes, and sends no code or Retry-After where none was set', async () => {
    const full = new AppException(409, 'Upload limit', undefined, 'upload_limit');
    expect(await answerTo(filter, full)).toMatchObject({
      status: 409,
      code: 'upload_limit',
      retryAfter: null,
    });
    const plain = new AppException(502, 'Media storage is unavailable');
    expect(await answerTo(filter, plain)).toMatchObject({ status: 502, code: null, retryAfter: null });
  });

  it('gives every 503 that names none Retry-After: 1 (decision 0479), and no other status one', async () => {
    const cases: unknown[] = [
      new AppException(503, 'Media storage is not configured'),
      withCode(new Error('connect ECONNREFUSED 10.0.0.7:5432'), 'ECONNREFUSED'),
      withCode(new Error('terminating connection due to administrator command'), '57P01'),
      Object.assign(new Error('Reached the max retries per request limit'), {
        name: 'MaxRetriesPerRequestError',
      }),
    ];
    for (const thrown of cases) {
      expect(await answerTo(filter, thrown)).toMatchObject({ status: 503, retryAfter: '1' });
    }
    const others: unknown[] = [
      new AppException(502, 'Media storage is unavailable'),
      new AppException(500, 'boom'),
      new AppException(409, 'Conflict'),
      new Error('boom'),
    ];
    for (const thrown of others) {
      expect(await answerTo(filter, thrown)).toMatchObject({ retryAfter: null });
    }
  });

  it('never sends the code of anything else thrown: a 5xx keeps its internals', async () => {
    const cases: [unknown, number][] = [
      [withCode(new Error('connect ECONNREFUSED 10.0.0.7:5432'), 'ECONNREFUSED'), 503],
      [withCode(new Error('terminating connection due to administrator command'), '57P01'), 503],
      [withCode(new Error('relation "secret_table" does not exist'), '42P01'), 500],
      [withCode(new HttpException('internal detail', 500), 'INTERNAL'), 500],
    ];
    for (const [thrown, status] of cases) {
      const answer = await answerTo(filter, thrown);
      expect(answer).toMatchObject({ status, code: null });
      expect(JSON.stringify(answer.body)).not.toMatch(
        /ECONNREFUSED|10\.0\.0\.7|57P01|secret_table|42P01|INTERNAL|detail/,
      );
    }
  });
});
