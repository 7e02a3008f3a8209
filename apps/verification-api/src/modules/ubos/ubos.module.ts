import { Module } from '@nestjs/common';
import { ApplicantsModule } from '../applicants/applicants.module';
import { AuthModule } from '../auth/auth.module';
import { LevelsModule } from '../levels/levels.module';
import { ReviewsModule } from '../reviews/reviews.module';
import { SessionsModule } from '../sessions/sessions.module';
import { UbosController } from './ubos.controller';
import { UbosRepository } from './ubos.repository';
import { UbosService } from './ubos.service';

@Module({
  imports: [AuthModule, ApplicantsModule, LevelsModule, ReviewsModule, SessionsModule],
  controllers: [UbosController],
  providers: [UbosRepository, UbosService],
})
export class UbosModule {}
