import { Module } from '@nestjs/common';
import { buildCustodyApiDocument } from '@tessera/contracts';
import { openApiDocsController } from '@tessera/platform';
import { Access } from '../../common/caller';

const document = () => buildCustodyApiDocument();

/**
 * The OpenAPI document (the same bytes as docs/openapi/custody-api.json) and its rendered reference, at /docs
 * and at /swagger (the contract names /swagger/*): /docs/openapi.json, /swagger/openapi.json, /swagger/json.
 * Anonymous, under the per-IP limit. docs/openapi.md.
 */
@Module({
  controllers: [
    openApiDocsController({
      path: 'swagger',
      title: 'Tessera custody API',
      document,
      jsonAliases: ['json'],
      decorators: [Access('anonymous')],
    }),
    openApiDocsController({
      path: 'docs',
      title: 'Tessera custody API',
      document,
      decorators: [Access('anonymous')],
    }),
  ],
})
export class SwaggerDocsModule {}
