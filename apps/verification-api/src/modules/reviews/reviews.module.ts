import { Module } from '@nestjs/common';
import { LevelsModule } from '../levels/levels.module';
import { ProductsModule } from '../products/products.module';
import { ApplicantActionsRepository } from './applicant-actions.repository';
import { CheckResultsRepository } from './check-results.repository';
import { ReviewCompletionRepository } from './review-completion.repository';
import { ReviewsRepository } from './reviews.repository';
import { ReviewsService } from './reviews.service';
import { StepDecisionsRepository } from './step-decisions.repository';

@Module({
  imports: [ProductsModule, LevelsModule],
  providers: [
    ReviewsRepository,
    ReviewCompletionRepository,
    StepDecisionsRepository,
    CheckResultsRepository,
    ApplicantActionsRepository,
    ReviewsService,
  ],
  exports: [ReviewsService, ReviewCompletionRepository],
})
export class ReviewsModule {}
