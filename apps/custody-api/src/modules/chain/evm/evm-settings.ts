import type { Env } from '../../../config/env';

/** The EVM chain's settings (env CHAIN_EVM_*), present only when CHAIN_EVM_RPC_URL is set. */
export interface EvmSettings {
  rpcUrl: string;
  chainId: number;
  usdtContract?: string;
  /** Overrides every EVM asset's confirmations (local use); undefined: the asset's own count. */
  confirmations?: number;
  pollMs: number;
  startBlock: number;
  scanBatch: number;
  stuckAfterMs: number;
  masterKey: string;
}

export const EVM_SETTINGS = Symbol('EVM_SETTINGS');

export function evmSettingsFromEnv(env: Env): EvmSettings | undefined {
  if (!env.CHAIN_EVM_RPC_URL) return undefined;
  if (!env.SECRETS_MASTER_KEY)
    throw new Error('CHAIN_EVM_RPC_URL needs SECRETS_MASTER_KEY (it opens the signing seeds)');
  return {
    rpcUrl: env.CHAIN_EVM_RPC_URL,
    chainId: env.CHAIN_EVM_CHAIN_ID,
    usdtContract: env.CHAIN_EVM_USDT_CONTRACT?.toLowerCase(),
    confirmations: env.CHAIN_EVM_CONFIRMATIONS,
    pollMs: env.CHAIN_EVM_POLL_MS,
    startBlock: env.CHAIN_EVM_START_BLOCK,
    scanBatch: env.CHAIN_EVM_SCAN_BATCH,
    stuckAfterMs: env.CHAIN_EVM_STUCK_AFTER_MS,
    masterKey: env.SECRETS_MASTER_KEY,
  };
}

/** Live keys use the EVM chain for assets on the `ethereum` network; everything else stays on the simulator. */
export const isEvmTransaction = (
  settings: EvmSettings | undefined,
  t: { environment: string; assetNetwork: string },
) => settings !== undefined && t.environment === 'production' && t.assetNetwork === 'ethereum';

/** Confirmations a transaction of this asset needs on the EVM chain. */
export const evmThreshold = (settings: EvmSettings, assetConfirmations: number) =>
  settings.confirmations ?? assetConfirmations;
