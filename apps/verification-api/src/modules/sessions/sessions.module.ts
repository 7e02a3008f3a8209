import { Module } from '@nestjs/common';
import { ApplicantsModule } from '../applicants/applicants.module';
import { AuthModule } from '../auth/auth.module';
import { LevelsModule } from '../levels/levels.module';
import { SdkLinksController, SessionsController } from './sessions.controller';
import { SdkAuthGuard } from './sdk-auth.guard';
import { SessionContexts } from './session-contexts';
import { SessionsRepository } from './sessions.repository';
import { SessionsService } from './sessions.service';

@Module({
  imports: [AuthModule, ApplicantsModule, LevelsModule],
  controllers: [SessionsController, SdkLinksController],
  providers: [SessionsRepository, SessionsService, SessionContexts, SdkAuthGuard],
  exports: [SessionsService, SessionContexts, SdkAuthGuard, AuthModule],
})
export class SessionsModule {}
