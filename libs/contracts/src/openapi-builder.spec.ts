import { z } from 'zod';
import { buildCustodyApiDocument } from './custody-api.openapi';
import { createVaultSchema } from './custody-api';
import { named, OpenApiBuilder, type RouteSpec, serializeOpenApi } from './openapi-builder';
import { buildVerificationApiDocument } from './verification-api.openapi';

const spec = () =>
  new OpenApiBuilder({
    title: 't',
    version: '1',
    description: 'd',
    servers: [{ url: 'http://localhost:1', description: 'l' }],
    tags: [{ name: 'x', description: 'x' }],
    securitySchemes: {
      a: { type: 'apiKey', in: 'header', name: 'A' },
      b: { type: 'apiKey', in: 'header', name: 'B' },
    },
    security: { both: ['a', 'b'] },
    responses: { Oops: { description: 'oops', body: named('Err', z.object({ message: z.string() })) } },
  });

const thing = z.object({ id: z.string(), size: z.number().int().default(1) });
const route = (over: Partial<RouteSpec> = {}): RouteSpec => ({
  method: 'post',
  path: '/things/{id}',
  operationId: 'createThing',
  summary: 's',
  tags: ['x'],
  security: ['both'],
  params: {
    path: z.object({ id: z.string() }),
    query: z.object({
      dryRun: z.enum(['true', 'false']).optional(),
      take: z.coerce.number().int().default(20),
    }),
  },
  body: { schema: named('ThingCreate', z.object({ name: z.string(), size: z.number().int().default(1) })) },
  responses: { 201: { description: 'created', body: named('Thing', thing) }, 400: 'Oops' },
  ...over,
});

type Json = Record<string, any>;

describe('OpenApiBuilder', () => {
  it('renders requests as input, responses as output, parameters from zod, security as one requirement', () => {
    const doc = spec().route(route()).build() as Json;
    const op = doc.paths['/things/{id}'].post;
    expect(op.security).toEqual([{ a: [], b: [] }]);
    expect(op.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'dryRun', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false'] } },
      { name: 'take', in: 'query', required: false, schema: { type: 'integer', default: 20 } },
    ]);
    expect(op.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ThingCreate',
    });
    // Input: a defaulted field is optional; output: it is always there, and extra fields stay allowed.
    expect(doc.components.schemas.ThingCreate.required).toEqual(['name']);
    expect(doc.components.schemas.Thing.required).toEqual(['id', 'size']);
    expect(doc.components.schemas.Thing.additionalProperties).toBeUndefined();
    expect(op.responses['400']).toEqual({ $ref: '#/components/responses/Oops' });
    expect(doc.components.responses.Oops.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Err',
    });
  });

  it('refuses a second operation on the same method and path, a reused operationId, or two schemas under one name', () => {
    expect(() =>
      spec()
        .route(route())
        .route(route({ operationId: 'other' })),
    ).toThrow(/registered twice/);
    expect(() =>
      spec()
        .route(route())
        .route(route({ path: '/other' })),
    ).toThrow(/operationId createThing/);
    expect(() =>
      spec()
        .route(route())
        .route(
          route({
            path: '/x',
            operationId: 'x',
            body: { schema: named('ThingCreate', z.object({ other: z.string() })) },
          }),
        ),
    ).toThrow(/two schemas named ThingCreate/);
    expect(() => spec().route(route({ responses: { 400: 'Nope' } }))).toThrow(/unknown shared response Nope/);
    expect(() =>
      spec()
        .route(route({ security: ['none'] }))
        .build(),
    ).toThrow(/unknown security requirement/);
  });

  it('writes the same bytes whatever the registration order (sorted paths and components)', () => {
    const a = route();
    const b = route({ path: '/a', operationId: 'a', method: 'get', body: undefined });
    expect(serializeOpenApi(spec().route(a).route(b).build())).toBe(
      serializeOpenApi(spec().route(b).route(a).build()),
    );
  });

  it('adds a route to a document with one registration', () => {
    const extra: RouteSpec = {
      method: 'get',
      path: '/example/reports',
      operationId: 'listExampleReports',
      summary: 'Example reports',
      tags: ['transactions'],
      security: ['signed'],
      responses: { 200: { description: 'The reports' }, 404: 'NotFound' },
    };
    const doc = buildCustodyApiDocument([extra]) as Json;
    expect(doc.paths['/example/reports'].get.operationId).toBe('listExampleReports');
    expect(doc.paths['/example/reports'].get.security).toEqual([
      { apiKey: [], timestamp: [], signature: [] },
    ]);
    const verification = buildVerificationApiDocument([{ ...extra, security: ['partner'] }]) as Json;
    expect(verification.paths['/example/reports'].get.security).toEqual([
      { apiKey: [], apiSecret: [], environment: [] },
    ]);
  });

  it('documents the custody vault body from the very schema the service parses', () => {
    const doc = buildCustodyApiDocument() as Json;
    const body = doc.components.schemas.VaultCreate;
    expect(body.properties.externalId).toEqual({ type: 'string', minLength: 1, maxLength: 200 });
    expect(createVaultSchema.safeParse({ externalId: 'x'.repeat(201), name: 'n' }).success).toBe(false);
  });
});
