import { Module } from '@nestjs/common';
import { QuestionnairesModule } from '../questionnaires/questionnaires.module';
import { ResourcesModule } from '../resources/resources.module';
import { ResourcesService } from '../resources/resources.service';
import { SessionsModule } from '../sessions/sessions.module';
import { SDK_MEDIA_SOURCE, type SdkMediaSource } from './sdk-media';
import { SdkPageController } from './sdk-page.controller';
import { SdkPageService } from './sdk-page.service';
import { SdkController } from './sdk.controller';
import { SdkRepository } from './sdk.repository';
import { SdkService } from './sdk.service';

/** The step-submit presence checks read the enrollment's active uploads from the resources module. */
const mediaSource = {
  provide: SDK_MEDIA_SOURCE,
  inject: [ResourcesService],
  useFactory: (resources: ResourcesService): SdkMediaSource => ({
    listForEnrollment: (productId, applicantId, enrollmentId) =>
      resources.listForEnrollment(productId, applicantId, enrollmentId, { activeOnly: false }),
  }),
};

@Module({
  imports: [SessionsModule, QuestionnairesModule, ResourcesModule],
  controllers: [SdkController, SdkPageController],
  providers: [SdkRepository, SdkService, SdkPageService, mediaSource],
})
export class SdkModule {}
