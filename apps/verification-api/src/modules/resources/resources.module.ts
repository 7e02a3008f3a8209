import multipart from '@fastify/multipart';
import { Module } from '@nestjs/common';
import { carriesBody, type HttpPlugin, mediaTypeOf, notJson } from '@tessera/platform';
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

/** The one route that takes a multipart body. */
const UPLOAD_ROUTE = '/api/v1/sdk/uploads/:slot';

/**
 * A multipart body on any other route is refused with 415 before it is parsed, as a form or text body is
 * (decision 0481): the multipart parser above serves the whole app, and a JSON call read a form into no body at
 * all, so `POST /api/v1/sdk/personal-info` answered 200 and stored nothing. An unknown route stays 404. Applied to
 * the whole app (`skip-override`, what fastify-plugin sets), like the parser.
 */
export const multipartOnlyOnUploads: HttpPlugin = {
  plugin: Object.assign(
    (fastify: FastifyInstance, _options: unknown, done: () => void) => {
      fastify.addHook('preParsing', (request, _reply, payload, next) => {
        const route = request.routeOptions.url;
        if (
          route !== undefined &&
          route !== UPLOAD_ROUTE &&
          carriesBody(request.headers) &&
          mediaTypeOf(request.headers) === 'multipart/form-data'
        )
          return next(notJson());
        next(null, payload);
      });
      done();
    },
    { [Symbol.for('skip-override')]: true },
  ),
};
