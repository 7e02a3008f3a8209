import multipart from '@fastify/multipart';
import { Module } from '@nestjs/common';
import type { HttpPlugin } from '@tessera/platform';
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
export class ResourcesModule {}

/**
 * The multipart plugin of the SDK upload call (registered by AppModule through the platform's httpPlugins):
 * bodies are streamed part by part (request.parts()); nothing is buffered to disk or memory.
 */
export const multipartPlugin = (env: Env): HttpPlugin => ({
  plugin: multipart,
  options: {
    limits: { fileSize: env.MEDIA_UPLOAD_MAX_BYTES, files: 1, fields: 10, fieldSize: 1024, parts: 12 },
  },
});
