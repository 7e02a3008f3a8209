import { HttpException, HttpStatus } from '@nestjs/common';

export type FieldErrors = Record<string, string[]>;

/**
 * A domain error with the status it maps to. `errors` carries field messages (custody shape);
 * the verification filter reports only `message`. `code`, when set, is a machine-readable reason that both
 * filters send as the `X-Error-Code` header, on a 4xx or a 5xx (the body keeps the contract's shape; a code is
 * a fixed name the service chose, never an internal detail; decisions 0458, 0469). `retryAfterSeconds`, when
 * set, is sent as `Retry-After`.
 */
export class AppException extends HttpException {
  constructor(
    status: number,
    message: string,
    readonly errors?: FieldErrors,
    readonly code?: string,
    readonly retryAfterSeconds?: number,
  ) {
    super({ message, errors }, status);
  }
}

export class TooManyRequestsException extends HttpException {
  constructor(readonly retryAfterSeconds: number) {
    super('Too many requests', HttpStatus.TOO_MANY_REQUESTS);
  }
}

export const badRequest = (message: string, errors?: FieldErrors) => new AppException(400, message, errors);
export const unauthorized = (message: string) => new AppException(401, message);
export const forbidden = (message: string) => new AppException(403, message);
export const notFound = (message: string) => new AppException(404, message);
export const conflict = (message: string) => new AppException(409, message);
export const unprocessable = (message: string) => new AppException(422, message);
