import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { AppException, type FieldErrors, TooManyRequestsException } from './errors';

export interface NormalizedError {
  status: number;
  message: string;
  errors?: FieldErrors;
  retryAfterSeconds?: number;
}

const STATUS_MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable entity',
  429: 'Too many requests',
};

function zodFieldErrors(error: ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const field = issue.path.join('.') || 'body';
    (errors[field] ??= []).push(issue.message);
  }
  return errors;
}

function zodMessage(error: ZodError): string {
  const first = error.issues[0];
  if (!first) return 'Invalid request';
  const field = first.path.join('.');
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
    return { status: exception.getStatus(), message: exception.message, errors: exception.errors };
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
    return { status, message: message || STATUS_MESSAGES[status] || 'Error' };
  }
  // Errors raised by Fastify itself (bad JSON, wrong content type, body too large) carry a 4xx statusCode.
  const statusCode = (exception as { statusCode?: unknown })?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    const message =
      statusCode === 400 ? 'Malformed request body' : (STATUS_MESSAGES[statusCode] ?? 'Bad request');
    return { status: statusCode, message };
  }
  return { status: 500, message: 'Internal server error' };
}

abstract class BaseFilter implements ExceptionFilter {
  private readonly logger = new Logger('ExceptionFilter');

  protected abstract body(error: NormalizedError): unknown;

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const error = normalizeError(exception);
    if (error.status >= 500) {
      this.logger.error({ err: exception, requestId: request.id }, 'request failed');
    }
    reply.header('x-request-id', request.id);
    if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
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
