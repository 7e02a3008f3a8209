import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { AppException, type FieldErrors, TooManyRequestsException } from './errors';

/** The answer to a path no route matches (and to the operator API while ADMIN_TOKEN is unset). */
export const ROUTE_NOT_FOUND = 'Route not found';

export interface NormalizedError {
  status: number;
  message: string;
  errors?: FieldErrors;
  retryAfterSeconds?: number;
  /**
   * The AppException's machine-readable reason, sent as `X-Error-Code` beside the contract's body, whatever the
   * status (decision 0469: the SDK upload's 503 `upload_expired`). Only an AppException sets it, so the code of
   * anything else thrown (a driver's SQLSTATE, ECONNREFUSED) never reaches the client.
   */
  code?: string;
}

const STATUS_MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Payload too large',
  414: 'URI too long',
  415: 'Unsupported media type',
  422: 'Unprocessable entity',
  429: 'Too many requests',
  431: 'Request header fields too large',
};

/** Messages for the errors Fastify raises itself; they never carry the offending input. */
const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_BAD_URL: 'Malformed URL',
  FST_ERR_MAX_PARAM_LENGTH: 'URI too long',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported media type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Payload too large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Body cannot be empty when Content-Type is application/json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'Malformed request body',
  FST_ERR_CTP_EMPTY_TYPE: 'Malformed Content-Type header',
  FST_ERR_CTP_INVALID_TYPE: 'Malformed Content-Type header',
};

/** The message of ioredis's error for a command that outlived its connection's `commandTimeout`. */
const REDIS_COMMAND_TIMED_OUT = 'Command timed out';

/**
 * SQLSTATE classes caused by the input reaching Postgres (22: data exception, e.g. a value too long or
 * out of range; 54: program limit, e.g. a jsonb nested past the stack) answer 400; a unique or exclusion
 * violation that no code path handled answers 409 (CONFLICT); those caused by the database being away answer
 * 503 so the client retries (08: connection exception, 57P01-03: terminated or shutting down, 53: insufficient
 * resources, 40001/40P01: serialization failure or deadlock that outlived the retries).
 */
function databaseError(exception: unknown): NormalizedError | undefined {
  const code = (exception as { code?: unknown; driverError?: { code?: unknown } })?.driverError?.code;
  const sqlState = typeof code === 'string' ? code : (exception as { code?: unknown })?.code;
  if (typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState)) {
    if (sqlState.startsWith('22')) return { status: 400, message: 'A value in the request is not valid' };
    if (sqlState.startsWith('54')) return { status: 400, message: 'A value in the request is too complex' };
    if (sqlState === '23505' || sqlState === '23P01') return CONFLICT;
    if (/^(08|53|57P0[123]|40001|40P01)/.test(sqlState)) return UNAVAILABLE;
  }
  const message = (exception as Error)?.message ?? '';
  const name = (exception as Error)?.name ?? '';
  // Connections that died under the pool (pg_terminate_backend, a restart) or a Redis that is away. TypeORM
  // releases a query runner whose connection emitted an error between two queries of a transaction; the
  // next query of that transaction then fails with QueryRunner(Provider)AlreadyReleasedError (nothing committed).
  // A Redis that hangs fails the request path's commands with ioredis's `Command timed out` (decision 0484).
  if (
    /^QueryRunner(Provider)?AlreadyReleasedError$/.test(name) ||
    message === REDIS_COMMAND_TIMED_OUT ||
    /Connection terminated|terminating connection|Client has encountered a connection error|ECONNREFUSED|ECONNRESET|Connection is closed|timeout exceeded when trying to connect/i.test(
      message,
    ) ||
    name === 'MaxRetriesPerRequestError'
  ) {
    return UNAVAILABLE;
  }
  return undefined;
}

/**
 * A unique (or exclusion) constraint that the code did not expect to meet: a concurrent request wrote the same
 * key first. The request is not retried blindly; the client reads the resource again.
 */
const CONFLICT: NormalizedError = {
  status: 409,
  message: 'The request conflicts with a concurrent change; read the resource again',
};

/**
 * `Retry-After` of a 503 that names none (a dependency away, the page not built): the contracts tell clients to
 * back off and retry a 503, and one second is the first step of the verification contract's back-off
 * (decision 0479). A 503 that sets its own (the SDK upload's `upload_expired`, `0`: decision 0469) keeps it.
 */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

const UNAVAILABLE: NormalizedError = {
  status: 503,
  message: 'Service temporarily unavailable; retry with back-off',
};

function zodFieldErrors(error: ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const field = issue.path.join('.') || 'body';
    (errors[field] ??= []).push(issue.message);
  }
  return errors;
}

/** A field's path as a client writes it: `ubos[0].fullName`, `steps[2].config` (decision 0483). */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

/**
 * The first issue as `<field>: <reason>`. The reason is the schema's own message or the house wording of
 * libs/contracts `houseMessage` (`must be a string`), never zod's default (decision 0483).
 */
function zodMessage(error: ZodError): string {
  const first = error.issues[0];
  if (!first) return 'Invalid request';
  const field = fieldPath(first.path);
  return field ? `${field}: ${first.message}` : first.message;
}

/** Turns anything thrown into status, message and field errors. 5xx never carry internals. */
export function normalizeError(exception: unknown): NormalizedError {
  if (exception instanceof ZodError) {
    return { status: 400, message: zodMessage(exception), errors: zodFieldErrors(exception) };
  }
  if (exception instanceof TooManyRequestsException) {
    return { status: 429, message: 'Too many requests', retryAfterSeconds: exception.retryAfterSeconds };
  }
  if (exception instanceof AppException) {
    return {
      status: exception.getStatus(),
      message: exception.message,
      errors: exception.errors,
      code: exception.code,
      retryAfterSeconds: exception.retryAfterSeconds,
    };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const zodError = (exception as { getZodError?: () => unknown }).getZodError?.();
    if (zodError instanceof ZodError) {
      return { status: 400, message: zodMessage(zodError), errors: zodFieldErrors(zodError) };
    }
    if (status >= 500) return { status, message: 'Internal server error' };
    const body = exception.getResponse();
    const raw = typeof body === 'string' ? body : (body as { message?: unknown }).message;
    const message = Array.isArray(raw) ? String(raw[0]) : typeof raw === 'string' ? raw : exception.message;
    // Nest's unknown-route 404 ("Cannot GET /path") would echo the path back.
    if (status === 404 && !(exception instanceof AppException) && /^Cannot [A-Z]+ /.test(message)) {
      return { status, message: ROUTE_NOT_FOUND };
    }
    return { status, message: message || STATUS_MESSAGES[status] || 'Error' };
  }
  // Errors raised by Fastify itself (bad URL, bad JSON, wrong content type, body too large) carry a 4xx
  // statusCode; their own messages echo the input, so only a fixed message goes out.
  const statusCode = (exception as { statusCode?: unknown })?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    const code = (exception as { code?: unknown }).code;
    const message =
      (typeof code === 'string' ? FASTIFY_MESSAGES[code] : undefined) ??
      (statusCode === 400 ? 'Malformed request body' : (STATUS_MESSAGES[statusCode] ?? 'Bad request'));
    return { status: statusCode, message };
  }
  return databaseError(exception) ?? { status: 500, message: 'Internal server error' };
}

abstract class BaseFilter implements ExceptionFilter {
  private readonly logger = new Logger('ExceptionFilter');

  protected abstract body(error: NormalizedError): unknown;

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const error = normalizeError(exception);
    if (error.status === 503 && error.code) {
      // A 503 the service chose, with its reason (the SDK upload that expired, decision 0469): not an outage.
      this.logger.warn(
        { code: error.code, requestId: request.id },
        'request not completed, client may retry',
      );
    } else if (error.status === 503) {
      this.logger.warn({ err: exception, requestId: request.id }, 'dependency unavailable');
    } else if (error.status >= 500) {
      this.logger.error({ err: exception, requestId: request.id }, 'request failed');
    }
    reply.header('x-request-id', request.id);
    const retryAfter =
      error.retryAfterSeconds ?? (error.status === 503 ? DEFAULT_RETRY_AFTER_SECONDS : undefined);
    if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
    if (error.code) reply.header('x-error-code', error.code);
    const body = this.body(error);
    if (body === undefined) {
      reply.status(error.status).send();
    } else {
      reply.status(error.status).header('content-type', 'application/json; charset=utf-8').send(body);
    }
  }
}

/** Verification contract: every error is `{message}`; only the first problem is reported. */
@Catch()
export class VerificationExceptionFilter extends BaseFilter {
  protected body(error: NormalizedError) {
    return { message: error.message };
  }
}

/** Custody contract: `{message, errors?}`; a 429 has an empty body and an integer Retry-After. */
@Catch()
export class CustodyExceptionFilter extends BaseFilter {
  protected body(error: NormalizedError) {
    if (error.status === 429) return undefined;
    return error.errors ? { message: error.message, errors: error.errors } : { message: error.message };
  }
}
