import { Module } from '@nestjs/common';
import { AssetsModule } from '../assets/assets.module';
import { TenantsModule } from '../tenants/tenants.module';
import { VaultsController } from './vaults.controller';
import { VaultsRepository } from './vaults.repository';
import { VaultsService } from './vaults.service';

@Module({
  imports: [AssetsModule, TenantsModule],
  controllers: [VaultsController],
  providers: [VaultsRepository, VaultsService],
  exports: [VaultsService],
})
export class VaultsModule {}
