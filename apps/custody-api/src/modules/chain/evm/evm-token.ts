import { type Hex, parseEventLogs, type TransactionReceipt } from 'viem';
import { TRANSFER_EVENT } from './evm-rpc';

/**
 * What an ERC-20 `transfer` really did, read from the chain rather than from the call's success (decision 0466).
 * Tokens depart from ERC-20's letter in ways a receipt's status does not show:
 * - some answer `false` and move nothing, without reverting (status 1, no Transfer log);
 * - mainnet USDT's `transfer` returns no value at all (so an empty answer is not a refusal);
 * - a fee-taking token (USDT with `basisPointsRate` above zero) moves the amount in two Transfer logs, the fee
 *   to its owner and the rest to the destination.
 */

/** Whether a simulated `transfer`'s return data is an explicit `false` (an empty answer is USDT's success). */
export function answersFalse(returnData: Hex | undefined): boolean {
  return returnData !== undefined && returnData.length === 66 && BigInt(returnData) === 0n;
}

/** The sum of `contract`'s Transfer logs in `receipt` that move tokens out of `from`. */
export function tokenAmountSent(receipt: TransactionReceipt, contract: string, from: string): bigint {
  const logs = parseEventLogs({ abi: [TRANSFER_EVENT], logs: receipt.logs, eventName: 'Transfer' });
  let sent = 0n;
  for (const log of logs) {
    if (log.removed || log.address.toLowerCase() !== contract.toLowerCase()) continue;
    if (log.args.from.toLowerCase() === from.toLowerCase()) sent += log.args.value;
  }
  return sent;
}

/** A withdrawal refused before it was sent: the simulated `transfer` answered false. */
export const TOKEN_REFUSED =
  'The token contract would refuse the transfer: it answers false without reverting';

/** A mined token withdrawal whose Transfer logs do not move its amount out of the sending address. */
export function notMoved(sent: bigint, amount: bigint): string {
  return sent === 0n
    ? 'The token contract accepted the transfer but moved nothing (no Transfer log from the sending address)'
    : `The token contract moved ${sent} of the ${amount} base units asked (Transfer logs from the sending address)`;
}
