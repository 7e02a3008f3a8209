import { Controller, Get, Inject, NotFoundException, Param, Res } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import { ApiExcludeController, DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const getAbsoluteFSPath = require('swagger-ui-dist/absolute-path.js') as () => string;
import { Access } from '../../common/caller';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
};

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Tessera custody API</title>
<link rel="stylesheet" href="/swagger/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/swagger/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/swagger/json', dom_id: '#swagger-ui' });</script>
</body></html>`;

/**
 * OpenAPI at /swagger (UI), /swagger/json (document). Anonymous, under the per-IP limit. Served by a
 * controller rather than SwaggerModule.setup so the test harness and main.ts boot it the same way.
 */
@ApiExcludeController()
@Access('anonymous')
@Controller('swagger')
export class SwaggerController {
  private document: OpenAPIObject | undefined;

  constructor(
    private readonly modules: ModulesContainer,
    private readonly config: ApplicationConfig,
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
  ) {}

  private build(): OpenAPIObject {
    const app = {
      container: { getModules: () => this.modules, isGlobalModule: () => false },
      config: this.config,
      getHttpAdapter: () => this.adapterHost.httpAdapter,
      getGlobalPrefix: () => '',
    };
    const config = new DocumentBuilder()
      .setTitle('Tessera custody API')
      .setDescription(
        'Signed requests: X-API-Key, X-Timestamp (Unix seconds or 13-digit ms, within 30 s) and X-Signature = ' +
          'lowercase hex HMAC-SHA256(secret, timestamp + METHOD + pathWithQuery + rawBody). See docs/custody-api.md.',
      )
      .setVersion('1')
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key' }, 'signed')
      .build();
    return SwaggerModule.createDocument(app as never, config);
  }

  @Get()
  page(@Res() reply: FastifyReply): void {
    reply.header('content-type', 'text/html; charset=utf-8').send(PAGE);
  }

  @Get('json')
  json() {
    this.document ??= this.build();
    return this.document;
  }

  @Get(':file')
  asset(@Param('file') file: string, @Res() reply: FastifyReply): void {
    const type = ASSETS[file];
    if (!type) throw new NotFoundException();
    reply.header('content-type', type).send(readFileSync(join(getAbsoluteFSPath(), file)));
  }
}
