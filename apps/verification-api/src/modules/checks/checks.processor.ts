import { Injectable } from '@nestjs/common';
import { JOBS, type VerificationStepCheckPayload } from '@tessera/contracts';
import { ProcessJob } from '@tessera/platform';
import type { z } from 'zod';
import type { verificationEnrollmentExpiryPayload } from '@tessera/contracts';
import { ChecksRepository } from './checks.repository';
import { ChecksService } from './checks.service';

/** The verification worker's consumers of the `verification.checks` queue. */
@Injectable()
export class ChecksProcessor {
  constructor(
    private readonly checks: ChecksService,
    private readonly repository: ChecksRepository,
  ) {}

  @ProcessJob(JOBS.VERIFICATION_STEP_CHECK)
  checkStep(payload: VerificationStepCheckPayload) {
    return this.checks.checkStep(payload);
  }

  @ProcessJob(JOBS.VERIFICATION_ENROLLMENT_EXPIRY)
  async expireEnrollments(payload: z.infer<typeof verificationEnrollmentExpiryPayload>) {
    return { expired: await this.repository.expireEnrollments(payload.batchSize) };
  }
}
