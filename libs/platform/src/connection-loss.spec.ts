import { Client, Pool } from 'pg';
import {
  QueryFailedError,
  QueryRunnerAlreadyReleasedError,
  QueryRunnerProviderAlreadyReleasedError,
} from 'typeorm';
import { keepClientErrorsHandled, serviceDataSourceOptions } from './database';
import { normalizeError } from './exception-filters';

/**
 * A database connection lost mid-request (pg_terminate_backend, a failover, a restart) is a 503 in the
 * contract's shape for the client to retry — never a 500 — and never crashes the process.
 */
const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const UNAVAILABLE = { status: 503, message: 'Service temporarily unavailable; retry with back-off' };

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('connection-loss errors answer 503', () => {
  it.each([
    [
      '57P01 admin_shutdown (pg_terminate_backend)',
      pgError('57P01', 'terminating connection due to administrator command'),
    ],
    [
      '57P02 crash_shutdown',
      pgError('57P02', 'terminating connection because of crash of another server process'),
    ],
    ['57P03 cannot_connect_now', pgError('57P03', 'the database system is starting up')],
    ['08006 connection_failure', pgError('08006', 'connection failure')],
    ['53300 too_many_connections', pgError('53300', 'sorry, too many clients already')],
    ['the socket closed under the client', new Error('Connection terminated unexpectedly')],
    [
      'a client reused after its connection died',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['ECONNRESET', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    [
      'ECONNREFUSED (database away)',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    ],
    ['a pool that could not connect in time', new Error('timeout exceeded when trying to connect')],
  ])('%s', (_name, error) => {
    expect(normalizeError(error)).toEqual(UNAVAILABLE);
  });

  it('a transaction whose connection died between two queries (TypeORM released its query runner)', () => {
    expect(normalizeError(new QueryRunnerProviderAlreadyReleasedError())).toEqual(UNAVAILABLE);
    expect(normalizeError(new QueryRunnerAlreadyReleasedError())).toEqual(UNAVAILABLE);
  });

  it('TypeORM wraps the driver error: its SQLSTATE decides (57P01 → 503)', () => {
    const wrapped = new QueryFailedError('INSERT INTO t VALUES ($1)', [1], pgError('57P01', 'terminating'));
    expect(normalizeError(wrapped)).toEqual(UNAVAILABLE);
  });

  it('a value Postgres refuses stays a 400, an unhandled unique violation a 409, and anything else a 500', () => {
    expect(normalizeError(pgError('22P05', 'unsupported Unicode escape sequence')).status).toBe(400);
    expect(normalizeError(pgError('54001', 'stack depth limit exceeded')).status).toBe(400);
    expect(normalizeError(pgError('23505', 'duplicate key'))).toEqual({
      status: 409,
      message: 'The request conflicts with a concurrent change; read the resource again',
    });
    expect(normalizeError(pgError('23503', 'foreign key')).status).toBe(500);
    expect(normalizeError(new Error('boom'))).toEqual({ status: 500, message: 'Internal server error' });
  });
});

describe('a connection terminated while checked out of the pool', () => {
  it('every service pool keeps a client error listener from the moment a connection opens', () => {
    const extra = (serviceDataSourceOptions({ url: POSTGRES_URL, schema: 'x', entities: [], migrations: [] })
      .extra ?? {}) as { onConnect?: unknown };
    expect(extra.onConnect).toBe(keepClientErrorsHandled);
  });

  it('without the listener the FATAL is an unhandled error event; with it, the next query fails and maps to 503', async () => {
    // The bare EventEmitter behaviour the listener guards against.
    const bare = new Client({ connectionString: POSTGRES_URL });
    expect(() => bare.emit('error', pgError('57P01', 'terminating'))).toThrow();
    const guarded = new Client({ connectionString: POSTGRES_URL });
    keepClientErrorsHandled(guarded);
    expect(() => guarded.emit('error', pgError('57P01', 'terminating'))).not.toThrow();

    // The real thing: a client handed out by the pool (pg-pool has removed its idle listener) is cut by
    // pg_terminate_backend while idle in the caller's hands.
    const pool = new Pool({ connectionString: POSTGRES_URL, max: 1, onConnect: keepClientErrorsHandled });
    const admin = new Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const client = await pool.connect();
      const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
      const ended = new Promise((resolve) => client.once('end', resolve));
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await ended;
      const error = await client.query('SELECT 1').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(Error);
      expect(normalizeError(error)).toEqual(UNAVAILABLE);
      client.release(error as Error);
      // The pool recovers on its own: the next client is a fresh connection.
      const next = await pool.connect();
      expect((await next.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      next.release();
    } finally {
      await admin.end();
      await pool.end();
    }
  });
});
