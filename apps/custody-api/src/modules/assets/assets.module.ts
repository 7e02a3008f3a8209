import { Module } from '@nestjs/common';
import { AssetsController } from './assets.controller';
import { AssetsRepository } from './assets.repository';
import { AssetsService } from './assets.service';

@Module({
  controllers: [AssetsController],
  providers: [AssetsRepository, AssetsService],
  exports: [AssetsService],
})
export class AssetsModule {}

/** Asset lookups without the HTTP controller (worker role). */
@Module({ providers: [AssetsRepository, AssetsService], exports: [AssetsService] })
export class AssetsCoreModule {}
