import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { type Caller, CurrentCaller, RequireScope } from '../../common/caller';
import { VaultsService } from './vaults.service';

@ApiTags('vaults')
@ApiSecurity('signed')
@Controller()
export class VaultsController {
  constructor(private readonly vaults: VaultsService) {}

  @Post('vaults')
  @RequireScope('vaults:write')
  @ApiOperation({ summary: 'Create a vault {externalId, name}' })
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.vaults.createVault(caller, body);
  }

  @Get('vaults')
  @RequireScope('vaults:read')
  list(@CurrentCaller() caller: Caller, @Query() query: unknown) {
    return this.vaults.listVaults(caller, query);
  }

  @Get('vaults/:vaultId')
  @RequireScope('vaults:read')
  get(@CurrentCaller() caller: Caller, @Param('vaultId') vaultId: string) {
    return this.vaults.getVault(caller, vaultId);
  }

  @Post('vaults/:vaultId/wallets')
  @RequireScope('wallets:create')
  @ApiOperation({ summary: 'Create a wallet {assetId, label?}; answers the wallet.created payload' })
  createWallet(@CurrentCaller() caller: Caller, @Param('vaultId') vaultId: string, @Body() body: unknown) {
    return this.vaults.createWallet(caller, vaultId, body);
  }

  @Get('vaults/:vaultId/wallets')
  @RequireScope('wallets:read')
  listWallets(@CurrentCaller() caller: Caller, @Param('vaultId') vaultId: string) {
    return this.vaults.listWallets(caller, vaultId);
  }

  @Get('wallets/:id')
  @RequireScope('wallets:read')
  getWallet(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    return this.vaults.getWallet(caller, id);
  }

  @Post('wallets/:id/addresses')
  @RequireScope('wallets:create')
  addAddress(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    return this.vaults.addAddress(caller, id);
  }

  @Get('wallets/:id/balance')
  @RequireScope('wallets:read')
  balance(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    return this.vaults.balance(caller, id);
  }
}
