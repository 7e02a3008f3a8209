import { Body, Controller, Get, Param, Post, UseGuards } from '@nestjs/common';
import { questionnaireCreateSchema } from '@tessera/contracts';
import { z } from 'zod';
import { AdminAuthGuard } from '../auth/admin-auth.guard';
import { ProductsService } from '../products/products.service';
import { QuestionnairesService } from './questionnaires.service';

const uuid = z.uuid({ error: 'productId must be a UUID' });

/** Operator API: questionnaires a level attaches through `attachedQuestionnaireId`. */
@Controller('admin/v1/products/:productId/questionnaires')
@UseGuards(AdminAuthGuard)
export class QuestionnairesController {
  constructor(
    private readonly products: ProductsService,
    private readonly questionnaires: QuestionnairesService,
  ) {}

  @Post()
  async create(@Param('productId') productId: string, @Body() body: unknown) {
    await this.products.assertProduct(uuid.parse(productId));
    return this.questionnaires.create(productId, questionnaireCreateSchema.parse(body ?? {}));
  }

  @Get(':questionnaireId')
  async get(@Param('productId') productId: string, @Param('questionnaireId') id: string) {
    await this.products.assertProduct(uuid.parse(productId));
    return this.questionnaires.get(productId, id);
  }
}
