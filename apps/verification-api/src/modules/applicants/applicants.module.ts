import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { LevelsModule } from '../levels/levels.module';
import { ApplicantsController } from './applicants.controller';
import { ApplicantsRepository } from './applicants.repository';
import { ApplicantsService } from './applicants.service';

@Module({
  imports: [AuthModule, LevelsModule],
  controllers: [ApplicantsController],
  providers: [ApplicantsRepository, ApplicantsService],
  exports: [ApplicantsService],
})
export class ApplicantsModule {}
