import multipart from '@fastify/multipart';
import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { APP_CONFIG } from '@tessera/platform';
import type { FastifyInstance } from 'fastify';
import type { Env } from '../../config/env';
import { ApplicantsModule } from '../applicants/applicants.module';
import { AuthModule } from '../auth/auth.module';
import { SessionsModule } from '../sessions/sessions.module';
import { ResourcesController, SdkUploadsController } from './resources.controller';
import { ResourcesRepository } from './resources.repository';
import { ResourcesService } from './resources.service';

/**
 * Media on the verification side: partner resource endpoints, the SDK upload call, and ResourcesService
 * (listForEnrollment, openBytes) for the other modules. media-store owns the bytes.
 */
@Module({
  imports: [AuthModule, ApplicantsModule, SessionsModule],
  controllers: [ResourcesController, SdkUploadsController],
  providers: [ResourcesRepository, ResourcesService],
  exports: [ResourcesService],
})
export class ResourcesModule implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {}

  /** Multipart bodies are streamed part by part (request.parts()); nothing is buffered to disk or memory. */
  async onModuleInit(): Promise<void> {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    if (fastify.hasContentTypeParser('multipart/form-data')) return;
    await fastify.register(multipart, {
      limits: { fileSize: this.env.MEDIA_UPLOAD_MAX_BYTES, files: 1, fields: 10, fieldSize: 1024, parts: 12 },
    });
  }
}
