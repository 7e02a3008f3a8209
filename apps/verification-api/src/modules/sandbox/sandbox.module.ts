import { Module } from '@nestjs/common';
import { ApplicantsModule } from '../applicants/applicants.module';
import { AuthModule } from '../auth/auth.module';
import { ReviewsModule } from '../reviews/reviews.module';
import { SandboxController } from './sandbox.controller';

/** Sandbox-only partner calls (DECISIONS "Sandbox"). */
@Module({
  imports: [AuthModule, ApplicantsModule, ReviewsModule],
  controllers: [SandboxController],
})
export class SandboxModule {}
