import { Controller, Get, Header, Inject } from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import type { Env } from '../../config/env';
import { buildOpenApiDocument } from './openapi';

/** The OpenAPI document, public, built once. */
@Controller('docs')
export class DocsController {
  private readonly document: Record<string, unknown>;

  constructor(@Inject(APP_CONFIG) env: Env) {
    this.document = buildOpenApiDocument(env.PUBLIC_BASE_URL);
  }

  @Get()
  @Header('cache-control', 'public, max-age=300')
  get() {
    return this.document;
  }

  @Get('openapi.json')
  json() {
    return this.document;
  }
}
