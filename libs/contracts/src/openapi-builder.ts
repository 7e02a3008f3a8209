import { z } from 'zod';

/**
 * OpenAPI 3.1 documents built from the zod schemas that validate the requests (docs/decisions/0020).
 *
 * A document is a list of routes. Each request body and each response body is a named zod schema; the builder
 * turns every named schema into `components.schemas` with zod's own JSON Schema output (draft 2020-12, the
 * dialect of OpenAPI 3.1), request bodies read as input (defaults optional), response bodies as output. Query,
 * path and header parameters come from a zod object, one parameter per key. Adding a route is one `route()`
 * call; the output is deterministic (paths and components sorted, no timestamps).
 */

type Json = Record<string, unknown>;
type Io = 'input' | 'output';
export type HttpMethod = 'get' | 'put' | 'post' | 'patch' | 'delete' | 'head';

/** A named schema: becomes `#/components/schemas/<name>`. */
export interface NamedSchema {
  readonly name: string;
  readonly schema: z.ZodType;
}

/** A name for a zod schema in the document (its component name). */
export const named = (name: string, schema: z.ZodType): NamedSchema => ({ name, schema });

/** A success answer whose body is `schema`, registered under `name`. */
export const okResponse = (description: string, name: string, schema: z.ZodType): ResponseSpec => ({
  description,
  body: named(name, schema),
});

export interface ResponseSpec {
  description: string;
  /** A JSON body, or `null` for an empty one. */
  body?: NamedSchema | null;
  /** Another content type than JSON (bytes, HTML), with a JSON Schema of its own. */
  content?: Record<string, { schema: Json }>;
  headers?: Record<string, { description: string; schema: Json; required?: boolean }>;
}

export interface RouteSpec {
  method: HttpMethod;
  /** OpenAPI path template, e.g. `/v1/applicants/{externalUserId}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Names of security requirements (see `DocumentSpec.security`); [] for anonymous. */
  security: string[];
  params?: {
    path?: z.ZodObject;
    query?: z.ZodObject;
    header?: z.ZodObject;
  };
  /** Parameter descriptions, by parameter name. */
  paramDescriptions?: Record<string, string>;
  body?: { schema: NamedSchema; required?: boolean; mediaType?: string; description?: string };
  /** Responses by status code: a spec, or the name of a shared response (`components.responses`). */
  responses: Record<number, ResponseSpec | string>;
}

export interface WebhookSpec {
  /** The event type, e.g. `transaction.created`: the key of the `webhooks` map. */
  name: string;
  summary: string;
  description: string;
  tags: string[];
  body: NamedSchema;
  /** Headers each delivery carries. */
  headers: z.ZodObject;
  headerDescriptions?: Record<string, string>;
}

export interface DocumentSpec {
  title: string;
  version: string;
  description: string;
  servers: { url: string; description: string }[];
  tags: { name: string; description: string }[];
  securitySchemes: Record<string, Json>;
  /** Named security requirements: each is a set of schemes that must all be present together. */
  security: Record<string, string[]>;
  /** Shared responses (`#/components/responses/<name>`). */
  responses: Record<string, ResponseSpec>;
}

const SAFE_INT = Number.MAX_SAFE_INTEGER;
const ISO_PATTERN_PREFIX = '^(?:(?:\\d\\d[2468][048]';
const UUID_PATTERN_PREFIX = '^([0-9a-fA-F]{8}-';

/** zod's JSON Schema, tidied for a document: no per-schema `$schema`/`$id`, no noise bounds. */
function tidy(node: unknown, io: Io): unknown {
  if (Array.isArray(node)) return node.map((n) => tidy(n, io));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === '$schema' || key === '$id') continue;
    if ((key === 'minimum' && value === -SAFE_INT) || (key === 'maximum' && value === SAFE_INT)) continue;
    // zod spells out the whole RFC 3339 grammar as a pattern next to `format: date-time`; the format says it.
    if (key === 'pattern' && typeof value === 'string' && value.startsWith(ISO_PATTERN_PREFIX)) continue;
    if (key === 'pattern' && typeof value === 'string' && value.startsWith(UUID_PATTERN_PREFIX)) continue;
    // Responses may grow fields: clients must not reject an unknown one.
    if (io === 'output' && key === 'additionalProperties' && value === false) continue;
    out[key] = tidy(value, io);
  }
  return out;
}

/** Keys of a plain object in sorted order (paths, components): a stable file whatever the registration order. */
function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export class OpenApiBuilder {
  private readonly routes: RouteSpec[] = [];
  private readonly hooks: WebhookSpec[] = [];
  private readonly schemas = new Map<string, { schema: z.ZodType; io: Io }>();

  constructor(private readonly spec: DocumentSpec) {
    for (const response of Object.values(spec.responses)) this.addBody(response.body, 'output');
  }

  /** Registers one operation. */
  route(route: RouteSpec): this {
    const clash = this.routes.find((r) => r.path === route.path && r.method === route.method);
    if (clash) throw new Error(`OpenAPI: ${route.method.toUpperCase()} ${route.path} registered twice`);
    if (this.routes.some((r) => r.operationId === route.operationId)) {
      throw new Error(`OpenAPI: operationId ${route.operationId} registered twice`);
    }
    if (route.body) this.add(route.body.schema, 'input');
    for (const response of Object.values(route.responses)) {
      if (typeof response === 'string') {
        if (!this.spec.responses[response]) throw new Error(`OpenAPI: unknown shared response ${response}`);
      } else this.addBody(response.body, 'output');
    }
    this.routes.push(route);
    return this;
  }

  /** Registers a named schema that others embed (so it becomes a `$ref` rather than a copy). */
  schema(named: NamedSchema, io: Io = 'output'): this {
    this.add(named, io);
    return this;
  }

  /** Registers one webhook event (the `webhooks` section). */
  webhook(hook: WebhookSpec): this {
    this.add(hook.body, 'output');
    this.hooks.push(hook);
    return this;
  }

  private addBody(body: NamedSchema | null | undefined, io: Io): void {
    if (body) this.add(body, io);
  }

  private add({ name, schema }: NamedSchema, io: Io): void {
    const known = this.schemas.get(name);
    if (known && known.schema !== schema) throw new Error(`OpenAPI: two schemas named ${name}`);
    if (known && known.io !== io) throw new Error(`OpenAPI: ${name} is used as request and response`);
    this.schemas.set(name, { schema, io });
  }

  private components(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const io of ['input', 'output'] as const) {
      const registry = z.registry<{ id: string }>();
      for (const [name, entry] of this.schemas) if (entry.io === io) registry.add(entry.schema, { id: name });
      const { schemas } = z.toJSONSchema(registry, {
        io,
        unrepresentable: 'any',
        uri: (id) => `#/components/schemas/${id}`,
      });
      for (const [name, schema] of Object.entries(schemas)) out[name] = tidy(schema, io);
    }
    return sorted(out);
  }

  private parameters(route: RouteSpec): Json[] {
    const out: Json[] = [];
    for (const location of ['path', 'query', 'header'] as const) {
      const object = route.params?.[location];
      if (!object) continue;
      const shape = object.shape as Record<string, z.ZodType>;
      const json = tidy(z.toJSONSchema(object, { io: 'input', unrepresentable: 'any' }), 'input') as {
        properties?: Record<string, Json>;
        required?: string[];
      };
      for (const name of Object.keys(shape)) {
        const { description, ...schema } = (json.properties?.[name] ?? {}) as Json;
        const text = route.paramDescriptions?.[name] ?? description;
        out.push({
          name,
          in: location,
          ...(text ? { description: text } : {}),
          required: location === 'path' || (json.required ?? []).includes(name),
          schema,
        });
      }
    }
    return out;
  }

  private response(response: ResponseSpec): Json {
    const out: Json = { description: response.description };
    if (response.headers) out.headers = response.headers;
    if (response.body) {
      out.content = {
        'application/json': { schema: { $ref: `#/components/schemas/${response.body.name}` } },
      };
    } else if (response.content) out.content = response.content;
    return out;
  }

  private security(names: string[]): Json[] {
    return names.map((name) => {
      const schemes = this.spec.security[name];
      if (!schemes) throw new Error(`OpenAPI: unknown security requirement ${name}`);
      return Object.fromEntries(schemes.map((scheme) => [scheme, []]));
    });
  }

  private operation(route: RouteSpec): Json {
    const parameters = this.parameters(route);
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      responses[status] =
        typeof response === 'string'
          ? { $ref: `#/components/responses/${response}` }
          : this.response(response);
    }
    return {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      security: this.security(route.security),
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: route.body.required ?? true,
              ...(route.body.description ? { description: route.body.description } : {}),
              content: {
                [route.body.mediaType ?? 'application/json']: {
                  schema: { $ref: `#/components/schemas/${route.body.schema.name}` },
                },
              },
            },
          }
        : {}),
      responses,
    };
  }

  private webhookItem(hook: WebhookSpec): Json {
    const headers = tidy(z.toJSONSchema(hook.headers, { io: 'input', unrepresentable: 'any' }), 'input') as {
      properties: Record<string, Json>;
      required?: string[];
    };
    return {
      post: {
        operationId: `webhook_${hook.name.replace(/[^A-Za-z0-9]+/g, '_')}`,
        summary: hook.summary,
        description: hook.description,
        tags: hook.tags,
        security: [],
        parameters: Object.entries(headers.properties).map(([name, schema]) => ({
          name,
          in: 'header',
          ...(hook.headerDescriptions?.[name] ? { description: hook.headerDescriptions[name] } : {}),
          required: (headers.required ?? []).includes(name),
          schema,
        })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${hook.body.name}` } } },
        },
        responses: {
          '200': { description: 'Any 2xx acknowledges the delivery; answer within about a second.' },
          '401': {
            description: 'The signature did not verify: the delivery counts as failed and is retried.',
          },
        },
      },
    };
  }

  /** The OpenAPI 3.1 document as a plain JSON object. */
  build(): Json {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const route of this.routes) {
      paths[route.path] ??= {};
      paths[route.path]![route.method] = this.operation(route);
    }
    const methodOrder = ['get', 'put', 'post', 'patch', 'delete', 'head'];
    for (const [path, item] of Object.entries(paths)) {
      paths[path] = Object.fromEntries(
        Object.entries(item).sort(([a], [b]) => methodOrder.indexOf(a) - methodOrder.indexOf(b)),
      );
    }
    const responses: Record<string, unknown> = {};
    for (const [name, response] of Object.entries(this.spec.responses))
      responses[name] = this.response(response);
    const webhooks: Record<string, unknown> = {};
    for (const hook of this.hooks) webhooks[hook.name] = this.webhookItem(hook);
    return {
      openapi: '3.1.0',
      info: {
        title: this.spec.title,
        version: this.spec.version,
        description: this.spec.description,
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: this.spec.servers,
      tags: this.spec.tags,
      paths: sorted(paths),
      webhooks: sorted(webhooks),
      components: {
        securitySchemes: this.spec.securitySchemes,
        responses: sorted(responses),
        schemas: this.components(),
      },
    };
  }
}

/** The committed form of a document: two-space JSON with a final newline. */
export const serializeOpenApi = (document: unknown): string => `${JSON.stringify(document, null, 2)}\n`;
