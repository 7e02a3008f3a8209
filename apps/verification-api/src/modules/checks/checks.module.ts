import { Module } from '@nestjs/common';
import { LevelsModule } from '../levels/levels.module';
import { QuestionnairesModule } from '../questionnaires/questionnaires.module';
import { ResourcesModule } from '../resources/resources.module';
import { ReviewsModule } from '../reviews/reviews.module';
import { ScreeningModule } from '../screening/screening.module';
import { ChecksProcessor } from './checks.processor';
import { ChecksRepository } from './checks.repository';
import { ChecksService } from './checks.service';
import { MediaChecksService } from './media-checks.service';
import { MediaInspectorService } from './media-inspector.service';
import { StepDiscoveryService } from './step-discovery.service';

/** The worker side of verification: step checks, their discovery, and enrollment expiry. */
@Module({
  imports: [ReviewsModule, LevelsModule, ScreeningModule, ResourcesModule, QuestionnairesModule],
  providers: [
    ChecksRepository,
    ChecksService,
    ChecksProcessor,
    StepDiscoveryService,
    MediaChecksService,
    MediaInspectorService,
  ],
})
export class ChecksModule {}
