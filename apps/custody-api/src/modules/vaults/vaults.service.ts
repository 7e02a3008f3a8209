import { Injectable } from '@nestjs/common';
import { createVaultSchema, createWalletSchema, listVaultsSchema } from '@tessera/contracts';
import { conflict, notFound, refuseNonDecimalNumbers, TtlCache } from '@tessera/platform';
import { formatAmount } from '../../common/amounts';
import type { Caller } from '../../common/caller';
import { decodeCursor, encodeCursor } from '../../common/cursor';
import { isUuid } from '../../common/validation';
import { AssetsService } from '../assets/assets.service';
import { deriveDepositAddress } from '../chain/addresses';
import { TenantsService } from '../tenants/tenants.service';
import { type VaultRow, VaultsRepository, type WalletView } from './vaults.repository';

export const walletDto = (w: WalletView) => ({
  walletId: w.id,
  vaultId: w.vaultId,
  assetId: w.assetId,
  label: w.label,
  depositAddress: w.depositAddress,
  depositTag: w.depositTag,
  status: w.status,
  createdAt: new Date(w.createdAt).toISOString(),
});

const vaultDto = (v: VaultRow) => ({
  id: v.id,
  externalId: v.externalId,
  name: v.name,
  status: v.status,
  createdAt: new Date(v.createdAt).toISOString(),
});

const WALLET_CACHE_MS = 60_000;

@Injectable()
export class VaultsService {
  private readonly walletCache = new TtlCache<WalletView>(WALLET_CACHE_MS, 50_000);

  constructor(
    private readonly repository: VaultsRepository,
    private readonly assets: AssetsService,
    private readonly tenants: TenantsService,
  ) {}

  async createVault(caller: Caller, input: unknown) {
    const body = createVaultSchema.parse(input ?? {});
    const result = await this.repository.createVault(caller, body.externalId, body.name);
    if ('existingId' in result) {
      throw conflict(`A vault with this externalId already exists: ${result.existingId}`);
    }
    return vaultDto(result.created);
  }

  async listVaults(caller: Caller, query: unknown) {
    const { take, cursor } = listVaultsSchema.parse(refuseNonDecimalNumbers(query ?? {}, ['take']));
    const after = cursor ? decodeCursor(cursor) : undefined;
    const rows = await this.repository.listVaults(caller, take + 1, after);
    const page = rows.slice(0, take);
    const last = page[page.length - 1];
    return {
      items: page.map(vaultDto),
      nextCursor: rows.length > take && last ? encodeCursor(last.createdAt, last.id) : null,
    };
  }

  async getVault(caller: Caller, id: string) {
    return vaultDto(await this.vaultOrThrow(caller, id));
  }

  private async vaultOrThrow(caller: Caller, id: string): Promise<VaultRow> {
    const vault = isUuid(id) ? await this.repository.findVault(caller, id) : undefined;
    if (!vault) throw notFound('Vault not found');
    return vault;
  }

  async createWallet(caller: Caller, vaultId: string, input: unknown) {
    const body = createWalletSchema.parse(input ?? {});
    await this.vaultOrThrow(caller, vaultId);
    const asset = await this.assets.startableByRef(caller.tenantId, body.assetId);
    const wallet = await this.repository.createWallet(
      caller,
      vaultId,
      asset.id,
      body.label ?? '',
      (seed, index) =>
        deriveDepositAddress(this.tenants.openSeed(caller.tenantId, seed), asset, caller.environment, index),
      (w) => ({
        tenantId: caller.tenantId,
        eventType: 'wallet.created',
        entityType: 'wallet',
        entityId: w.id,
        data: walletDto(w),
      }),
    );
    if (!wallet) throw conflict(`This vault already has a wallet for asset ${asset.symbol}`);
    return walletDto(wallet);
  }

  async listWallets(caller: Caller, vaultId: string) {
    await this.vaultOrThrow(caller, vaultId);
    return { items: (await this.repository.listWallets(caller, vaultId)).map(walletDto) };
  }

  /**
   * A wallet of the caller's tenant and environment. Found wallets are cached in process for a minute:
   * nothing about a wallet's view (vault, asset, first address) changes after creation.
   */
  async walletOrThrow(caller: Caller, id: string): Promise<WalletView> {
    const cacheKey = `${caller.tenantId}:${caller.environment}:${id}`;
    const cached = this.walletCache.get(cacheKey);
    if (cached) return cached;
    const wallet = isUuid(id) ? await this.repository.findWallet(caller, id) : undefined;
    if (!wallet) throw notFound('Wallet not found');
    this.walletCache.set(cacheKey, wallet);
    return wallet;
  }

  async getWallet(caller: Caller, id: string) {
    const wallet = await this.walletOrThrow(caller, id);
    return { ...walletDto(wallet), addresses: await this.repository.listAddresses(wallet.id) };
  }

  async addAddress(caller: Caller, id: string) {
    const wallet = await this.walletOrThrow(caller, id);
    const asset = await this.assets.heldAsset(wallet.assetId);
    // A new deposit address is something new started with the asset (decision 0203); the path names the wallet.
    await this.assets.assertEnabledFor(caller.tenantId, asset, 'walletId');
    const derived = await this.repository.addAddress(caller.tenantId, wallet.id, (seed, index) =>
      deriveDepositAddress(this.tenants.openSeed(caller.tenantId, seed), asset, caller.environment, index),
    );
    return { walletId: wallet.id, address: derived.address, tag: derived.tag, createdAt: derived.createdAt };
  }

  async balance(caller: Caller, id: string) {
    const wallet = await this.walletOrThrow(caller, id);
    const asset = await this.assets.heldAsset(wallet.assetId);
    const row = (await this.repository.balance(wallet.id))!;
    return {
      walletId: wallet.id,
      assetId: asset.id,
      assetSymbol: asset.symbol,
      total: formatAmount(row.total, asset.decimals),
      available: formatAmount(row.available, asset.decimals),
      pending: formatAmount(row.pending, asset.decimals),
      locked: formatAmount(row.locked, asset.decimals),
      updatedAt: new Date(row.updatedAt).toISOString(),
    };
  }
}
