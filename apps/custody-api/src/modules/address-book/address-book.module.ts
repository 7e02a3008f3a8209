import { Module } from '@nestjs/common';
import { AssetsModule } from '../assets/assets.module';
import { AddressBookController } from './address-book.controller';
import { AddressBookRepository } from './address-book.repository';
import { AddressBookService } from './address-book.service';

@Module({
  imports: [AssetsModule],
  controllers: [AddressBookController],
  providers: [AddressBookRepository, AddressBookService],
  exports: [AddressBookService],
})
export class AddressBookModule {}
