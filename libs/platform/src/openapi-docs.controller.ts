import { Controller, Get, Header, NotFoundException, Param, Res, type Type } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const swaggerUiDir = (require('swagger-ui-dist/absolute-path.js') as () => string)();

export interface OpenApiDocsOptions {
  /** Route prefix without slashes: `docs`, `swagger`. */
  path: string;
  title: string;
  /** The OpenAPI document (built once, on the first request). */
  document: () => Record<string, unknown>;
  /** Extra paths under the prefix that also answer the JSON (custody's `/swagger/json`). */
  jsonAliases?: string[];
  /** Class decorators of the app, e.g. its anonymous-access marker. */
  decorators?: ClassDecorator[];
}

/**
 * The page's own CSP: scripts only from this origin (no inline script), no third-party request of any kind.
 * Swagger UI sets inline style attributes, hence 'unsafe-inline' for styles only.
 */
export const OPENAPI_DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A controller serving an OpenAPI document at `/<path>/openapi.json` and a rendered reference (Swagger UI,
 * bundled from the swagger-ui-dist package and served from the app itself) at `/<path>`. docs/openapi.md.
 */
export function openApiDocsController(options: OpenApiDocsOptions): Type<unknown> {
  const base = `/${options.path}`;
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(options.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${base}/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="${base}/swagger-ui-bundle.js"></script>
<script src="${base}/init.js"></script>
</body></html>
`;
  // No validator badge (it would call a third-party service), no outside links.
  const init = `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(`${base}/openapi.json`)}, dom_id: '#swagger-ui', validatorUrl: null, deepLinking: true });\n`;
  let document: Record<string, unknown> | undefined;
  const json = () => (document ??= options.document());

  @Controller(options.path)
  class OpenApiDocsController {
    @Get()
    page(@Res() reply: FastifyReply): void {
      reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', OPENAPI_DOCS_CSP)
        .header('cache-control', 'no-cache')
        .send(page);
    }

    @Get('openapi.json')
    @Header('cache-control', 'public, max-age=300')
    json() {
      return json();
    }

    @Get('init.js')
    init(@Res() reply: FastifyReply): void {
      reply.header('content-type', 'application/javascript; charset=utf-8').send(init);
    }

    @Get(':file')
    asset(@Param('file') file: string, @Res() reply: FastifyReply): void {
      if ((options.jsonAliases ?? []).includes(file)) {
        reply.header('content-type', 'application/json; charset=utf-8').send(json());
        return;
      }
      const type = ASSETS[file];
      if (!type) throw new NotFoundException();
      reply
        .header('content-type', type)
        .header('cache-control', 'public, max-age=86400')
        .send(readFileSync(join(swaggerUiDir, file)));
    }
  }
  for (const decorate of options.decorators ?? []) decorate(OpenApiDocsController);
  Object.defineProperty(OpenApiDocsController, 'name', {
    value: `OpenApiDocs${options.path.charAt(0).toUpperCase()}${options.path.slice(1)}Controller`,
  });
  return OpenApiDocsController;
}
