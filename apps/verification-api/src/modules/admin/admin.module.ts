import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { LevelsModule } from '../levels/levels.module';
import { QuestionnairesModule } from '../questionnaires/questionnaires.module';
import { ReviewsModule } from '../reviews/reviews.module';
import { AdminController } from './admin.controller';

@Module({
  imports: [AuthModule, LevelsModule, ReviewsModule, QuestionnairesModule],
  controllers: [AdminController],
})
export class AdminModule {}
