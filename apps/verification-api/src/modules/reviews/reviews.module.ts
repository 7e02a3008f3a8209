import { Module } from '@nestjs/common';
import { LevelsModule } from '../levels/levels.module';
import { ProductsModule } from '../products/products.module';
import { ReviewsRepository } from './reviews.repository';
import { ReviewsService } from './reviews.service';

@Module({
  imports: [ProductsModule, LevelsModule],
  providers: [ReviewsRepository, ReviewsService],
  exports: [ReviewsService, ReviewsRepository],
})
export class ReviewsModule {}
