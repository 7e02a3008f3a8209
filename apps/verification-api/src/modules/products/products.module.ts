import { Module } from '@nestjs/common';
import { CacheInvalidationModule } from '@tessera/platform';
import { ProductsRepository } from './products.repository';
import { ProductsService } from './products.service';

@Module({
  imports: [CacheInvalidationModule],
  providers: [ProductsRepository, ProductsService],
  exports: [ProductsService],
})
export class ProductsModule {}
