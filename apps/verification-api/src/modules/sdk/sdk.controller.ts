import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import type { SdkTokenClaims } from '@tessera/auth';
import { questionnaireAnswersSchema, sdkPersonalInfoSchema } from '@tessera/contracts';
import { SdkAuthGuard, SdkSession } from '../sessions/sdk-auth.guard';
import { SdkService } from './sdk.service';

/** The hosted SDK API behind `Authorization: Bearer <token>` (DECISIONS "Hosted SDK API"). */
@Controller('api/v1/sdk')
@UseGuards(SdkAuthGuard)
export class SdkController {
  constructor(private readonly sdk: SdkService) {}

  @Get('session')
  session(@SdkSession() session: SdkTokenClaims) {
    return this.sdk.session(session);
  }

  @Post('personal-info')
  @HttpCode(200)
  personalInfo(@SdkSession() session: SdkTokenClaims, @Body() body: unknown) {
    return this.sdk.personalInfo(session, sdkPersonalInfoSchema.parse(body ?? {}));
  }

  @Post('questionnaire')
  @HttpCode(200)
  questionnaire(@SdkSession() session: SdkTokenClaims, @Body() body: unknown) {
    return this.sdk.answerQuestionnaire(session, questionnaireAnswersSchema.parse(body ?? {}).answers);
  }

  @Post('steps/:kind/submit')
  @HttpCode(200)
  submitStep(@SdkSession() session: SdkTokenClaims, @Param('kind') kind: string) {
    return this.sdk.submitStep(session, kind);
  }

  @Post('submit')
  @HttpCode(202)
  submit(@SdkSession() session: SdkTokenClaims) {
    return this.sdk.submit(session);
  }
}
