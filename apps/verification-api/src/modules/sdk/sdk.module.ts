import { Module } from '@nestjs/common';
import { QuestionnairesModule } from '../questionnaires/questionnaires.module';
import { SessionsModule } from '../sessions/sessions.module';
import { SDK_MEDIA_SOURCE } from './sdk-media';
import { SdkPageController } from './sdk-page.controller';
import { SdkPageService } from './sdk-page.service';
import { SdkController } from './sdk.controller';
import { SdkRepository } from './sdk.repository';
import { SdkService } from './sdk.service';
import type { ResourceSummary } from './step-requirements';

/**
 * No upload store is wired into this build yet (uploads belong to the media issue), so no step that needs a
 * document can be submitted: every media step answers 409 naming its missing upload.
 */
const noUploads = { listForEnrollment: async (): Promise<ResourceSummary[]> => [] };

@Module({
  imports: [SessionsModule, QuestionnairesModule],
  controllers: [SdkController, SdkPageController],
  providers: [SdkRepository, SdkService, SdkPageService, { provide: SDK_MEDIA_SOURCE, useValue: noUploads }],
})
export class SdkModule {}
