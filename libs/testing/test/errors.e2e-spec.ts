import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { bootApp, createTestEnvironment, type TestEnvironment } from '../src';
import { fixtureMigrator, FixtureModule } from './fixture/fixture';

let env: TestEnvironment;
let verification: NestFastifyApplication;
let custody: NestFastifyApplication;

beforeAll(async () => {
  env = await createTestEnvironment([fixtureMigrator]);
  verification = await bootApp(FixtureModule.forRoot(env.env, { errorShape: 'verification' }), {
    rpc: false,
  });
  custody = await bootApp(FixtureModule.forRoot(env.env, { errorShape: 'custody' }), { rpc: false });
});

afterAll(async () => {
  await verification?.close();
  await custody?.close();
  await env?.teardown();
});

const http = (app: NestFastifyApplication) => request(app.getHttpServer());

describe('verification error shape: exactly {message}', () => {
  it('a 400 with field problems reports only the first message', async () => {
    const res = await http(verification).get('/fixture/field-error').expect(400);
    expect(res.body).toEqual({ message: 'amount: must be a positive decimal' });
  });

  it('a schema failure is a 400 {message}', async () => {
    const res = await http(verification).get('/fixture/validate').expect(400);
    expect(Object.keys(res.body)).toEqual(['message']);
    expect(res.body.message).toMatch(/^take: /);
  });

  it('401 from a Nest exception keeps its message', async () => {
    const res = await http(verification).post('/fixture/login').send({}).expect(401);
    expect(res.body).toEqual({ message: 'Invalid credentials' });
  });

  it('an unknown route is a 404 {message}', async () => {
    const res = await http(verification).get('/nowhere').expect(404);
    expect(res.body).toEqual({ message: 'Route not found' });
  });

  it('malformed JSON is a 400 {message}, never a 500', async () => {
    const res = await http(verification)
      .post('/fixture/echo')
      .set('content-type', 'application/json')
      .send('{"broken":')
      .expect(400);
    expect(Object.keys(res.body)).toEqual(['message']);
  });

  it('a 429 is {message} with Retry-After', async () => {
    const res = await http(verification).get('/fixture/throttled').expect(429);
    expect(res.headers['retry-after']).toBe('17');
    expect(res.body).toEqual({ message: 'Too many requests' });
  });

  it('a 500 never leaks the error or a stack, and carries the request id', async () => {
    const res = await http(verification).get('/fixture/boom').set('x-request-id', 'req-boom-1').expect(500);
    expect(res.body).toEqual({ message: 'Internal server error' });
    expect(JSON.stringify(res.body)).not.toMatch(/hunter2|stack|at /);
    expect(res.headers['x-request-id']).toBe('req-boom-1');
  });
});

describe('custody error shape: {message, errors?}, empty 429', () => {
  it('a 400 with field problems carries errors', async () => {
    const res = await http(custody).get('/fixture/field-error').expect(400);
    expect(res.body).toEqual({
      message: 'amount: must be a positive decimal',
      errors: { amount: ['must be a positive decimal'] },
    });
  });

  it('a schema failure lists every field under errors', async () => {
    const res = await http(custody).get('/fixture/validate').expect(400);
    expect(res.body.errors).toEqual({ take: [expect.stringMatching(/200/)] });
  });

  it('an error without field problems has no errors member', async () => {
    const res = await http(custody).post('/fixture/login').send({}).expect(401);
    expect(res.body).toEqual({ message: 'Invalid credentials' });
  });

  it('a 429 has an empty body and an integer Retry-After', async () => {
    const res = await http(custody).get('/fixture/throttled').expect(429);
    expect(res.text).toBe('');
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('a 500 never leaks internals', async () => {
    const res = await http(custody).get('/fixture/boom').expect(500);
    expect(res.body).toEqual({ message: 'Internal server error' });
  });
});
