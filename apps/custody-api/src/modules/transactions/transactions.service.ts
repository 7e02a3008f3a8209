import { HttpException, Injectable } from '@nestjs/common';
import {
  IDEMPOTENCY_KEY_PATTERN,
  listTransactionsSchema,
  sandboxDepositSchema,
  transferSchema,
  withdrawSchema,
} from '@tessera/contracts';
import { badRequest, forbidden, notFound, refuseNonDecimalNumbers, timeOrderedId } from '@tessera/platform';
import type { z } from 'zod';
import { parseAmount } from '../../common/amounts';
import type { Caller } from '../../common/caller';
import { isUuid } from '../../common/validation';
import { holdBookEntry } from '../address-book/address-book.repository';
import { AssetsService } from '../assets/assets.service';
import { PoliciesService } from '../policies/policies.service';
import type { AssetEntity } from '../assets/entities/asset.entity';
import { normalizeExternalAddress } from '../chain/addresses';
import type { WalletView } from '../vaults/vaults.repository';
import { VaultsService } from '../vaults/vaults.service';
import { decodeCursor, encodeCursor } from '../../common/cursor';
import {
  balanceUpdatedEvent,
  createdEvent,
  type TransactionRecord,
  type TransactionType,
  transactionDto,
  transactionFields,
} from './transaction.record';
import {
  type NewTransaction,
  type PolicyGate,
  type IdempotencyClaim,
  type StoredResponse,
  TransactionWriter,
} from './transaction-writer';
import { TransactionsRepository } from './transactions.repository';
import { bookThenPolicy } from './destination-gate';
import { bodyFingerprint, sameRequestBody } from './request-fingerprint';

type TransactionResponse = ReturnType<typeof transactionDto>;

/** An Idempotency-Key claim with the parsed body, which keys stored before decision 0477 are compared on. */
type BodyClaim = IdempotencyClaim & { parsed: Record<string, unknown> };

@Injectable()
export class TransactionsService {
  constructor(
    private readonly repository: TransactionsRepository,
    private readonly writer: TransactionWriter,
    private readonly vaults: VaultsService,
    private readonly assets: AssetsService,
    private readonly policies: PoliciesService,
  ) {}

  private idempotencyKey(value: string | string[] | undefined): string {
    const key = Array.isArray(value) ? value[0] : value;
    if (!key) {
      throw badRequest('Idempotency-Key header is required', {
        'Idempotency-Key': ['Required on this endpoint'],
      });
    }
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw badRequest('Idempotency-Key must be 1 to 64 characters of A-Za-z0-9_-', {
        'Idempotency-Key': ['Up to 64 characters from A-Za-z0-9_-'],
      });
    }
    return key;
  }

  /**
   * Body wallets of another tenant or environment are a field error (400), not a 404. Only the not-found is
   * turned into it: a database that is away stays the filter's 503, which the client retries.
   */
  private async bodyWallet(caller: Caller, id: string, field: string): Promise<WalletView> {
    try {
      return await this.vaults.walletOrThrow(caller, id);
    } catch (err) {
      if (err instanceof HttpException && err.getStatus() === 404) {
        throw badRequest('Wallet not found', { [field]: ['No such wallet for this tenant'] });
      }
      throw err;
    }
  }

  private units(asset: AssetEntity, amount: string): bigint {
    const parsed = parseAmount(amount, asset.decimals);
    if (!parsed.ok) throw badRequest(`amount: ${parsed.message}`, { amount: [parsed.message] });
    return parsed.units;
  }

  private baseRecord(
    caller: Caller,
    type: TransactionType,
    wallet: WalletView,
    asset: AssetEntity,
    units: bigint,
  ): TransactionRecord {
    const now = new Date();
    return {
      id: timeOrderedId(),
      tenantId: caller.tenantId,
      environment: caller.environment,
      type,
      status: 'Submitted',
      vaultId: wallet.vaultId,
      vaultExternalId: wallet.vaultExternalId,
      vaultName: wallet.vaultName,
      assetId: asset.id,
      assetSymbol: asset.symbol,
      assetNetwork: asset.network,
      assetDecimals: asset.decimals,
      assetConfirmations: asset.confirmations,
      walletId: wallet.id,
      sourceWalletId: null,
      destinationWalletId: null,
      amount: units.toString(),
      sourceAddress: '',
      destinationAddress: '',
      destinationTag: null,
      txHash: null,
      networkFee: null,
      feeCurrency: null,
      note: null,
      failureReason: null,
      createdAt: now,
      updatedAt: now,
      completedAt: null,
      eventSequence: 1,
    };
  }

  async transfer(caller: Caller, keyHeader: string | string[] | undefined, input: unknown) {
    const key = this.idempotencyKey(keyHeader);
    const body = transferSchema.parse(input ?? {});
    const claim = { endpoint: 'transfer', key, requestHash: bodyFingerprint(input), parsed: body };
    return this.replayingOnRefusal(caller, claim, () => this.createTransfer(caller, body, claim));
  }

  private async createTransfer(
    caller: Caller,
    body: z.infer<typeof transferSchema>,
    claim: BodyClaim,
  ): Promise<TransactionResponse> {
    const source = await this.bodyWallet(caller, body.sourceWalletId, 'sourceWalletId');
    const destination = await this.bodyWallet(caller, body.destinationWalletId, 'destinationWalletId');
    if (source.id === destination.id) {
      throw badRequest('Source and destination wallets must differ', {
        destinationWalletId: ['Must differ from sourceWalletId'],
      });
    }
    if (source.assetId !== destination.assetId) {
      throw badRequest('Both wallets must hold the same asset', {
        destinationWalletId: ['Holds a different asset than the source wallet'],
      });
    }
    const asset = await this.assets.heldAsset(source.assetId);
    await this.assets.assertEnabledFor(caller.tenantId, asset, 'sourceWalletId');
    const units = this.units(asset, body.amount);
    const record: TransactionRecord = {
      ...this.baseRecord(caller, 'InternalTransfer', source, asset, units),
      sourceWalletId: source.id,
      destinationWalletId: destination.id,
      sourceAddress: source.depositAddress,
      destinationAddress: destination.depositAddress,
      destinationTag: destination.depositTag,
      note: body.note ?? null,
    };
    return this.create(
      caller,
      record,
      claim,
      [
        {
          walletId: source.id,
          transactionId: record.id,
          kind: 'transfer-out',
          total: -units,
          available: -units,
        },
        {
          walletId: destination.id,
          transactionId: record.id,
          kind: 'transfer-in',
          total: units,
          available: units,
        },
      ],
      [
        balanceUpdatedEvent(caller.tenantId, source.vaultId, asset.id),
        balanceUpdatedEvent(caller.tenantId, destination.vaultId, asset.id),
      ],
    );
  }

  async withdraw(caller: Caller, keyHeader: string | string[] | undefined, input: unknown) {
    const key = this.idempotencyKey(keyHeader);
    const body = withdrawSchema.parse(input ?? {});
    const claim = { endpoint: 'withdraw', key, requestHash: bodyFingerprint(input), parsed: body };
    return this.replayingOnRefusal(caller, claim, () => this.createWithdrawal(caller, body, claim));
  }

  private async createWithdrawal(
    caller: Caller,
    body: z.infer<typeof withdrawSchema>,
    claim: BodyClaim,
  ): Promise<TransactionResponse> {
    const source = await this.bodyWallet(caller, body.sourceWalletId, 'sourceWalletId');
    const asset = await this.assets.heldAsset(source.assetId);
    await this.assets.assertEnabledFor(caller.tenantId, asset, 'sourceWalletId');
    const units = this.units(asset, body.amount);
    if (asset.requiresTag && body.destinationTag === undefined) {
      throw badRequest(`${asset.symbol} withdrawals need a destination tag`, {
        destinationTag: ['Required for this asset'],
      });
    }
    if (!asset.requiresTag && body.destinationTag !== undefined) {
      throw badRequest(`${asset.symbol} withdrawals take no destination tag`, {
        destinationTag: ['This asset takes no tag'],
      });
    }
    const destination = normalizeExternalAddress(
      asset,
      caller.environment,
      body.destinationAddress,
      body.destinationTag,
    );
    // A malformed tag is the tag's error, as the address book says it; an invalid address stays "not in the
    // book", so the answer does not tell an invalid address from an unknown one.
    if (!destination.ok && destination.field === 'tag')
      throw badRequest(destination.message, { destinationTag: [destination.message] });
    if (!destination.ok) throw notInBook();
    const record: TransactionRecord = {
      ...this.baseRecord(caller, 'Withdrawal', source, asset, units),
      sourceWalletId: source.id,
      sourceAddress: source.depositAddress,
      destinationAddress: destination.address,
      destinationTag: destination.tag,
      note: body.note ?? null,
    };
    // The address book, then the tenant's withdrawal policy, checked in the same database transaction as the hold
    // (decision 0220): an entry deleted before that transaction refuses the withdrawal, one deleted after waits.
    const policy = bookThenPolicy(
      (manager) => holdBookEntry(manager, record),
      this.policies.gate(caller, {
        transactionId: record.id,
        walletId: source.id,
        vaultId: source.vaultId,
        asset,
        units,
        destinationAddress: destination.address,
        destinationTag: destination.tag,
      }),
    );
    return this.create(
      caller,
      record,
      claim,
      [{ walletId: source.id, transactionId: record.id, kind: 'hold', available: -units, locked: units }],
      [balanceUpdatedEvent(caller.tenantId, source.vaultId, asset.id)],
      policy,
    );
  }

  /** Sandbox only: an inbound deposit injected into the simulator chain. */
  async deposit(caller: Caller, input: unknown) {
    if (caller.environment !== 'sandbox') throw forbidden('Sandbox deposits need a test key');
    const body = sandboxDepositSchema.parse(input ?? {});
    const wallet = await this.bodyWallet(caller, body.walletId, 'walletId');
    // Deposits still arrive for a disabled asset (decision 0203: funds on chain cannot be refused).
    const asset = await this.assets.heldAsset(wallet.assetId);
    const units = this.units(asset, body.amount);
    const record: TransactionRecord = {
      ...this.baseRecord(caller, 'Deposit', wallet, asset, units),
      sourceAddress: body.sourceAddress ?? 'sim:external',
      destinationAddress: wallet.depositAddress,
      destinationTag: wallet.depositTag,
    };
    return this.create(
      caller,
      record,
      undefined,
      [{ walletId: wallet.id, transactionId: record.id, kind: 'deposit-pending', pending: units }],
      [balanceUpdatedEvent(caller.tenantId, wallet.vaultId, asset.id)],
    );
  }

  /**
   * Runs a create that its checks before the write (wallets, the asset enabled, the address book) may refuse.
   * When a request is refused while its Idempotency-Key holds a stored response, it answers that response (or
   * the body mismatch) instead: "same key and same body returns the original response", whatever changed since
   * the first call (an address-book entry deleted, an asset disabled). Nothing is looked up unless it is refused.
   */
  private async replayingOnRefusal(
    caller: Caller,
    claim: BodyClaim,
    create: () => Promise<TransactionResponse>,
  ): Promise<TransactionResponse> {
    try {
      return await create();
    } catch (err) {
      if (!(err instanceof HttpException) || err.getStatus() >= 500) throw err;
      const stored = await this.writer.stored(caller, claim);
      if (!stored) throw err;
      return this.storedOrMismatch(stored, claim);
    }
  }

  private storedOrMismatch(stored: StoredResponse, claim: BodyClaim): TransactionResponse {
    if (!sameRequestBody(stored.requestHash, claim.requestHash, claim.parsed)) {
      throw badRequest('Idempotency-Key was already used with a different request body', {
        'Idempotency-Key': ['Already used with a different body; use a new key for a new request'],
      });
    }
    return stored.response as TransactionResponse;
  }

  private async create(
    caller: Caller,
    record: TransactionRecord,
    claim: BodyClaim | undefined,
    deltas: NewTransaction['deltas'],
    balanceEvents: ReturnType<typeof balanceUpdatedEvent>[],
    policy?: PolicyGate,
  ): Promise<TransactionResponse> {
    // A withdrawal's answer carries its policy fields, like GET /transactions/{id}; the gate fills them in.
    const fields = transactionFields(record);
    const response = policy
      ? { ...transactionDto(record, fields), pendingApprovals: null, policyDecisions: [] }
      : transactionDto(record, fields);
    const outcome = await this.writer.create({
      caller,
      record,
      deltas,
      events: [createdEvent(record, fields), ...balanceEvents],
      idempotency: claim
        ? { endpoint: claim.endpoint, key: claim.key, requestHash: claim.requestHash, response }
        : undefined,
      policy,
    });
    if ('notInAddressBook' in outcome) throw notInBook();
    if ('policyRefusal' in outcome) {
      const { rule, message } = outcome.policyRefusal;
      throw badRequest(`Refused by the withdrawal policy (${rule}): ${message}`, {
        [`policy.${rule}`]: [message],
      });
    }
    if ('insufficientFunds' in outcome) {
      throw badRequest('Insufficient available balance', { amount: ['Exceeds the available balance'] });
    }
    if ('existing' in outcome) return this.storedOrMismatch(outcome.existing, claim!);
    // The worker's outbox relay starts the machine from the committed transaction.created event.
    return outcome.extras ? ({ ...response, ...outcome.extras } as TransactionResponse) : response;
  }

  async get(caller: Caller, id: string) {
    const record = isUuid(id) ? await this.repository.find(caller, id) : undefined;
    if (!record) throw notFound('Transaction not found');
    // A withdrawal carries its approval request and policy decisions (decision 0220).
    if (record.type !== 'Withdrawal') return transactionDto(record);
    return { ...transactionDto(record), ...(await this.policies.approvalFields(record.id, record.status)) };
  }

  async list(caller: Caller, query: unknown) {
    const q = listTransactionsSchema.parse(refuseNonDecimalNumbers(query ?? {}, ['take']));
    const rows = await this.repository.list(caller, {
      take: q.take + 1,
      after: q.cursor ? decodeCursor(q.cursor) : undefined,
      type: q.type,
      status: q.status,
      vaultId: q.vaultId,
      walletId: q.walletId,
      since: q.since,
    });
    const page = rows.slice(0, q.take);
    const last = page[page.length - 1];
    return {
      items: page.map((r) => transactionDto(r)),
      nextCursor: rows.length > q.take && last ? encodeCursor(last.createdAt, last.id) : null,
    };
  }
}

const notInBook = () =>
  badRequest('Destination address is not in the address book', {
    destinationAddress: ['Add this address to the address book for this asset first'],
  });
