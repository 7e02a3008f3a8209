import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { LevelsModule } from '../levels/levels.module';
import { AdminController } from './admin.controller';

@Module({
  imports: [AuthModule, LevelsModule],
  controllers: [AdminController],
})
export class AdminModule {}
