import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData, type Hex, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { freePort } from '@tessera/testing';

const HARDHAT_DIR = join(__dirname, '../../../deploy/hardhat');
const ARTIFACT = JSON.parse(readFileSync(join(HARDHAT_DIR, 'TetherStandIn.json'), 'utf8')) as {
  bytecode: Hex;
};
/** Tokens that depart from ERC-20's letter, put in the stand-in's place by `oddToken` (decision 0466). */
const ODD_TOKEN = JSON.parse(readFileSync(join(HARDHAT_DIR, 'OddToken.json'), 'utf8')) as {
  deployedBytecode: Hex;
};
/** OddToken's `mode` slot: 0 answers false and moves nothing, 1 takes a 1 % fee, 2 returns no value. */
export type OddTokenMode = 0 | 1 | 2;
/** Where OddToken's mode 1 sends its fee. */
export const ODD_TOKEN_FEE_SINK = '0x000000000000000000000000000000000000FEE0';
const ODD_TOKEN_MODE_SLOT = '0x64';
const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

const ERC20 = parseAbi([
  'function transfer(address to, uint256 value) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
]);

/** Hardhat's first default account ("test test … junk" mnemonic): publicly known, local use only. */
export const FUNDER = privateKeyToAccount(
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
);

/** A Hardhat config file like deploy/hardhat's, with another chain id, in a temporary folder. */
function otherChainConfig(chainId: number): { file: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-hardhat-'));
  const file = join(dir, 'hardhat.config.js');
  writeFileSync(file, `module.exports = { networks: { hardhat: { chainId: ${chainId} } } };\n`);
  return { file, dir };
}

export type HardhatNode = Awaited<ReturnType<typeof startHardhat>>;

/**
 * A real Hardhat node (chain id 31337 unless `chainId` says otherwise) on a free loopback port (or `port`), started as a child `node` process (not npx,
 * whose death would leave the node running) with the USDT stand-in deployed from its committed artifact.
 * `stop()` kills that process.
 */
export async function startHardhat(opts: { port?: number; chainId?: number } = {}) {
  const port = opts.port ?? (await freePort());
  const chainId = opts.chainId ?? 31337;
  const cli = require.resolve('hardhat/internal/cli/cli.js');
  // Another chain id gets a config of its own beside this folder's (Hardhat takes the id from the config only).
  // Removed when the node stops.
  const other = chainId === 31337 ? undefined : otherChainConfig(chainId);
  const config = other?.file ?? join(HARDHAT_DIR, 'hardhat.config.js');
  const child: ChildProcess = spawn(
    process.execPath,
    [cli, 'node', '--config', config, '--hostname', '127.0.0.1', '--port', String(port)],
    {
      // Hardhat insists on being resolvable from its working directory ("non-local installation").
      cwd: join(__dirname, '..'),
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true' },
    },
  );
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += String(d)));
  const url = `http://127.0.0.1:${port}`;
  let id = 0;
  const rpc = async <T = unknown>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    });
    const body = (await res.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  const started = Date.now();
  for (;;) {
    try {
      await rpc('eth_chainId');
      break;
    } catch {
      if (child.exitCode !== null || Date.now() - started > 60_000) {
        child.kill('SIGKILL');
        throw new Error(`Hardhat node did not start: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const hex = (n: bigint | number) => `0x${BigInt(n).toString(16)}`;
  const receiptOf = async (hash: string) => {
    for (let i = 0; i < 200; i++) {
      const r = await rpc<{
        status: string;
        blockNumber: string;
        blockHash: string;
        contractAddress: string;
      } | null>('eth_getTransactionReceipt', [hash]);
      if (r) return r;
      await new Promise((res) => setTimeout(res, 25));
    }
    throw new Error(`no receipt for ${hash}`);
  };
  const send = async (tx: Record<string, unknown>) =>
    rpc<string>('eth_sendTransaction', [{ from: FUNDER.address, ...tx }]);
  const deployHash = await send({
    data: ARTIFACT.bytecode + (1_000_000_000n * 10n ** 6n).toString(16).padStart(64, '0'),
    gas: hex(3_000_000),
  });
  const usdt = (await receiptOf(deployHash)).contractAddress;

  let nonce: number | undefined;
  /** Signs locally (the raw bytes can be sent again after a revert) and sends from FUNDER. */
  const signed = async (tx: { to: string; value?: bigint; data?: Hex }) => {
    nonce ??= Number(await rpc<string>('eth_getTransactionCount', [FUNDER.address, 'pending']));
    const raw = await FUNDER.signTransaction({
      chainId,
      type: 'eip1559',
      nonce: nonce++,
      to: tx.to as Hex,
      value: tx.value ?? 0n,
      data: tx.data,
      gas: tx.data ? 100_000n : 21_000n,
      maxFeePerGas: 50_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    return raw;
  };

  return {
    url,
    port,
    usdt,
    rpc,
    receiptOf,
    head: async () => Number(await rpc<string>('eth_blockNumber')),
    /**
     * Mines blocks one `evm_mine` at a time: `hardhat_mine` with a count makes "reserved" blocks whose
     * parentHash does not match the previous block's hash, which the scanner would take for a reorg.
     */
    mine: async (blocks = 1) => {
      for (let i = 0; i < blocks; i++) await rpc('evm_mine');
    },
    snapshot: () => rpc<string>('evm_snapshot'),
    revert: (snapshotId: string) => rpc<boolean>('evm_revert', [snapshotId]),
    automine: (on: boolean) => rpc('evm_setAutomine', [on]),
    resetNonce: () => {
      nonce = undefined;
    },
    /** A signed transfer from FUNDER: ETH, or USDT when `token` is set. Returns the raw transaction. */
    signTransfer: (to: string, amount: bigint, token = false) =>
      token
        ? signed({
            to: usdt,
            data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [to as Hex, amount] }),
          })
        : signed({ to, value: amount }),
    sendRaw: (raw: string) => rpc<string>('eth_sendRawTransaction', [raw]),
    balance: async (address: string) => BigInt(await rpc<string>('eth_getBalance', [address, 'latest'])),
    tokenBalance: async (address: string) =>
      BigInt(
        await rpc<string>('eth_call', [
          {
            to: usdt,
            data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [address as Hex] }),
          },
          'latest',
        ]),
      ),
    /**
     * Puts OddToken's code in the USDT stand-in's place (`hardhat_setCode`; the same storage layout, so every
     * balance stays) in `mode`, and answers a function that puts the stand-in back.
     */
    oddToken: async (mode: OddTokenMode) => {
      const original = await rpc<string>('eth_getCode', [usdt, 'latest']);
      await rpc('hardhat_setCode', [usdt, ODD_TOKEN.deployedBytecode]);
      await rpc('hardhat_setStorageAt', [usdt, ODD_TOKEN_MODE_SLOT, word(mode)]);
      return async () => {
        await rpc('hardhat_setStorageAt', [usdt, ODD_TOKEN_MODE_SLOT, word(0)]);
        await rpc('hardhat_setCode', [usdt, original]);
      };
    },
    /** Changes the mode of the OddToken code in place (pending transactions run with the new one). */
    oddTokenMode: (mode: OddTokenMode) =>
      rpc('hardhat_setStorageAt', [usdt, ODD_TOKEN_MODE_SLOT, word(mode)]),
    encodeTokenTransfer: (to: string, amount: bigint) =>
      encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [to as Hex, amount] }),
    stop: async () => {
      if (other) rmSync(other.dir, { recursive: true, force: true });
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
