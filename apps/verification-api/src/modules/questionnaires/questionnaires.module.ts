import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { QuestionnairesController } from './questionnaires.controller';
import { QuestionnairesRepository } from './questionnaires.repository';
import { QuestionnairesService } from './questionnaires.service';

@Module({
  imports: [AuthModule],
  controllers: [QuestionnairesController],
  providers: [QuestionnairesRepository, QuestionnairesService],
  exports: [QuestionnairesService],
})
export class QuestionnairesModule {}
