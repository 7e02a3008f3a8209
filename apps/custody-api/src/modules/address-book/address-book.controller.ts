import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { type Caller, CurrentCaller, RequireScope } from '../../common/caller';
import { AddressBookService } from './address-book.service';

@ApiTags('address-book')
@ApiSecurity('signed')
@Controller('address-book')
export class AddressBookController {
  constructor(private readonly book: AddressBookService) {}

  @Post()
  @RequireScope('address-book:write')
  @ApiOperation({ summary: 'Add a withdrawal destination {assetId, address, tag?, label}' })
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.book.create(caller, body);
  }

  @Get()
  @RequireScope('address-book:read')
  list(@CurrentCaller() caller: Caller, @Query() query: unknown) {
    return this.book.list(caller, query);
  }

  @Get(':id')
  @RequireScope('address-book:read')
  get(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    return this.book.get(caller, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScope('address-book:write')
  remove(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    return this.book.delete(caller, id);
  }
}
