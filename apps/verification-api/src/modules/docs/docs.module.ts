import { Module } from '@nestjs/common';
import { buildVerificationApiDocument } from '@tessera/contracts';
import { openApiDocsController } from '@tessera/platform';

/**
 * The OpenAPI document (GET /docs/openapi.json, the same bytes as docs/openapi/verification-api.json) and its
 * rendered reference (GET /docs). Public. docs/openapi.md.
 */
@Module({
  controllers: [
    openApiDocsController({
      path: 'docs',
      title: 'Tessera verification API',
      document: () => buildVerificationApiDocument(),
    }),
  ],
})
export class DocsModule {}
