import { Injectable } from '@nestjs/common';
import { createAddressBookEntrySchema, listAddressBookSchema } from '@tessera/contracts';
import { badRequest, conflict, notFound } from '@tessera/platform';
import type { Caller } from '../../common/caller';
import { isUuid } from '../../common/validation';
import { AssetsService } from '../assets/assets.service';
import { normalizeExternalAddress } from '../chain/addresses';
import { type AddressBookRow, AddressBookRepository } from './address-book.repository';

const entryDto = (row: AddressBookRow) => ({
  id: row.id,
  assetId: row.assetId,
  address: row.address,
  tag: row.tag,
  label: row.label,
  createdAt: new Date(row.createdAt).toISOString(),
});

@Injectable()
export class AddressBookService {
  constructor(
    private readonly repository: AddressBookRepository,
    private readonly assets: AssetsService,
  ) {}

  private event(caller: Caller, action: 'created' | 'deleted') {
    return (row: AddressBookRow) => ({
      tenantId: caller.tenantId,
      eventType: 'address-book.changed',
      entityType: 'address-book',
      entityId: row.id,
      data: { action, ...entryDto(row) },
    });
  }

  async create(caller: Caller, input: unknown) {
    const body = createAddressBookEntrySchema.parse(input ?? {});
    const asset = await this.assets.startableByRef(caller.tenantId, body.assetId);
    if (!asset.requiresTag && body.tag !== undefined) {
      throw badRequest(`${asset.symbol} addresses take no tag`, { tag: ['This asset takes no tag'] });
    }
    // requiresTag: an entry without a tag would send funds to the exchange's pooled account unattributed.
    if (asset.requiresTag && body.tag === undefined) {
      throw badRequest(`${asset.symbol} addresses need a destination tag`, {
        tag: ['Required for this asset'],
      });
    }
    const normalized = normalizeExternalAddress(asset, caller.environment, body.address, body.tag);
    if (!normalized.ok) throw badRequest(normalized.message, { [normalized.field]: [normalized.message] });
    const row = await this.repository.create(
      caller,
      { assetId: asset.id, address: normalized.address, tag: normalized.tag, label: body.label },
      this.event(caller, 'created'),
    );
    // One entry per destination: with two, deleting one would leave withdrawals to it allowed (decision 0475).
    if ('existingId' in row)
      throw conflict(`This destination is already in the address book as entry ${row.existingId}`);
    return entryDto(row);
  }

  async list(caller: Caller, query: unknown) {
    const { assetId: ref } = listAddressBookSchema.parse(query ?? {});
    // The asset as POST takes it, by id or symbol; an id of no asset lists nothing, anything else is a 400.
    const assetId = ref === undefined ? undefined : ((await this.assets.findByRef(ref))?.id ?? ref);
    if (assetId !== undefined && !isUuid(assetId))
      throw badRequest('Unknown asset', { assetId: ['Unknown asset: give its id or its symbol'] });
    return { items: (await this.repository.list(caller, assetId)).map(entryDto) };
  }

  async get(caller: Caller, id: string) {
    const row = isUuid(id) ? await this.repository.find(caller, id) : undefined;
    if (!row) throw notFound('Address book entry not found');
    return entryDto(row);
  }

  async delete(caller: Caller, id: string): Promise<void> {
    if (!isUuid(id) || !(await this.repository.delete(caller, id, this.event(caller, 'deleted')))) {
      throw notFound('Address book entry not found');
    }
  }
}
