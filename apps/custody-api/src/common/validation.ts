import { notFound } from '@tessera/platform';
import { z } from 'zod';

/** Parses with zod; a failure becomes the custody 400 `{message, errors}` through the global filter. */
export function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  return schema.parse(value ?? {});
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that is not a UUID cannot name a resource: 404, like an id of another tenant. */
export const idParam = (value: string, what: string): string => {
  if (!UUID.test(value)) throw notFound(`${what} not found`);
  return value.toLowerCase();
};

export const isUuid = (value: string): boolean => UUID.test(value);
