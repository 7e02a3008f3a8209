import { Module } from '@nestjs/common';
import { SanctionsListRepository } from './sanctions-list.repository';
import { ScreeningService } from './screening.service';

@Module({
  providers: [SanctionsListRepository, ScreeningService],
  exports: [ScreeningService],
})
export class ScreeningModule {}
