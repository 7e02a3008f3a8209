import { Module } from '@nestjs/common';
import { ProductsModule } from '../products/products.module';
import { AdminAuthGuard } from './admin-auth.guard';
import { PartnerAuthGuard } from './partner-auth.guard';
import { RateLimitService } from './rate-limit.service';

@Module({
  imports: [ProductsModule],
  providers: [RateLimitService, PartnerAuthGuard, AdminAuthGuard],
  exports: [RateLimitService, PartnerAuthGuard, AdminAuthGuard, ProductsModule],
})
export class AuthModule {}
