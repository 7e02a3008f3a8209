import { Module } from '@nestjs/common';
import { CacheInvalidationModule } from '@tessera/platform';
import { AdminController } from './admin.controller';
import { AdminGuard } from './admin.guard';
import { TenantsRepository } from './tenants.repository';
import { TenantsService } from './tenants.service';

@Module({
  imports: [CacheInvalidationModule],
  controllers: [AdminController],
  providers: [TenantsRepository, TenantsService, AdminGuard],
  exports: [TenantsService],
})
export class TenantsModule {}
