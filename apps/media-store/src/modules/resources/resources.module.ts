import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { APP_CONFIG } from '@tessera/platform';
import type { FastifyInstance } from 'fastify';
import { blobRepositoryFor } from './blobs/blob-driver';
import { BlobRepository } from './blobs/blob.repository';
import { InternalAuthGuard } from './internal-auth.guard';
import { ResourcesRpcController } from './resources-rpc.controller';
import { ResourcesController } from './resources.controller';
import { ResourcesRepository } from './resources.repository';
import { ResourcesService } from './resources.service';
import { StagedUploadSweeper } from './staged-upload-sweeper';

@Module({
  controllers: [ResourcesController, ResourcesRpcController],
  providers: [
    { provide: BlobRepository, useFactory: blobRepositoryFor, inject: [APP_CONFIG] },
    ResourcesRepository,
    ResourcesService,
    StagedUploadSweeper,
    InternalAuthGuard,
  ],
  exports: [ResourcesService],
})
export class ResourcesModule implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  /** Upload bodies are left unread by Fastify so that the PUT handler streams them (no body limit applies). */
  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addContentTypeParser('application/octet-stream', (_request, _payload, done) => done(null));
  }
}
