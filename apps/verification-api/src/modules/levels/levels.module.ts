import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CacheInvalidationModule } from '@tessera/platform';
import { LevelsController } from './levels.controller';
import { LevelsRepository } from './levels.repository';
import { LevelsService } from './levels.service';

@Module({
  imports: [AuthModule, CacheInvalidationModule],
  controllers: [LevelsController],
  providers: [LevelsRepository, LevelsService],
  exports: [LevelsService],
})
export class LevelsModule {}
