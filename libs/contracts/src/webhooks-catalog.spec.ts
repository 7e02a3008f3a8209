import {
  balanceUpdatedData,
  publicCatalog,
  transactionCreatedData,
  transactionStatusUpdatedData,
  WEBHOOK_CATALOG,
  webhookEnvelope,
} from './webhooks-catalog';

describe('webhook event catalog', () => {
  it('has the four custody types of the contract plus webhook.test', () => {
    expect(WEBHOOK_CATALOG.custody.map((e) => [e.eventType, e.entityType])).toEqual([
      ['transaction.created', 'transaction'],
      ['transaction.status.updated', 'transaction'],
      ['wallet.created', 'wallet'],
      ['balance.updated', 'balance'],
      ['webhook.test', 'webhook'],
    ]);
    expect(WEBHOOK_CATALOG.custody.every((e) => e.description.length > 10)).toBe(true);
  });

  it('transaction.created carries every Transaction field', () => {
    expect(Object.keys(transactionCreatedData.shape).sort()).toEqual(
      [
        'transactionId',
        'type',
        'status',
        'vaultId',
        'vaultExternalId',
        'vaultName',
        'assetId',
        'assetSymbol',
        'assetNetwork',
        'sourceWalletId',
        'destinationWalletId',
        'amount',
        'sourceAddress',
        'destinationAddress',
        'destinationTag',
        'txHash',
        'networkFee',
        'feeCurrency',
        'amountUSD',
        'feeUSD',
        'note',
        'createdAt',
      ].sort(),
    );
  });

  it('transaction.status.updated carries the listed fields', () => {
    expect(Object.keys(transactionStatusUpdatedData.shape).sort()).toEqual(
      [
        'transactionId',
        'type',
        'status',
        'previousStatus',
        'vaultId',
        'vaultExternalId',
        'vaultName',
        'assetId',
        'assetSymbol',
        'assetNetwork',
        'sourceWalletId',
        'amount',
        'sourceAddress',
        'destinationAddress',
        'txHash',
        'networkFee',
        'feeCurrency',
        'amountUSD',
        'feeUSD',
        'failureReason',
        'completedAt',
      ].sort(),
    );
  });

  it('balance.updated carries only vaultAccountId and assetId', () => {
    const ok = {
      vaultAccountId: '3f1c2a8e-5b7d-4c9e-8a1f-2b3c4d5e6f70',
      assetId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    };
    expect(balanceUpdatedData.parse(ok)).toEqual(ok);
    expect(() => balanceUpdatedData.parse({ ...ok, total: '1' })).toThrow();
  });

  it('lists the verification events of DECISIONS.md plus webhook.test, with JSON Schemas', () => {
    expect(WEBHOOK_CATALOG.verification.map((e) => e.eventType)).toEqual([
      'applicantCreated',
      'applicantPending',
      'applicantReviewed',
      'applicantOnHold',
      'applicantReset',
      'applicantDeactivated',
      'applicantActivated',
      'applicantPersonalInfoChanged',
      'companyChildrenCompleted',
      'webhook.test',
    ]);
    const reviewed = publicCatalog('verification').find((e) => e.eventType === 'applicantReviewed')!;
    expect((reviewed.dataSchema as { properties: Record<string, unknown> }).properties).toHaveProperty(
      'reviewResult',
    );
  });
});

describe('envelope sequence (decision 0225)', () => {
  it('every catalog entry of both sources documents the envelope with a required, described sequence', () => {
    for (const source of ['custody', 'verification'] as const) {
      for (const entry of publicCatalog(source)) {
        const schema = entry.envelopeSchema as {
          required: string[];
          properties: Record<string, { type?: string; description?: string }>;
        };
        expect(Object.keys(schema.properties)).toEqual([
          'eventType',
          'entityType',
          'entityId',
          'timestamp',
          'data',
          'sequence',
        ]);
        expect(schema.required).toContain('sequence');
        expect(schema.properties.sequence).toMatchObject({ type: 'integer', minimum: 1 });
        expect(schema.properties.sequence!.description).toMatch(/without gaps/);
        // The gaps of a partial subscription are named, so a receiver does not wait for them.
        expect(schema.properties.sequence!.description).toMatch(/subscribed to some types only/);
      }
    }
  });

  it('the envelope schema takes the five contract fields plus a positive integer sequence', () => {
    const base = {
      eventType: 'wallet.created',
      entityType: 'wallet',
      entityId: 'w-1',
      timestamp: '2026-11-21T00:00:00.000Z',
      data: {},
    };
    expect(webhookEnvelope.safeParse({ ...base, sequence: 3 }).success).toBe(true);
    expect(webhookEnvelope.safeParse({ ...base, sequence: 0 }).success).toBe(false);
    expect(webhookEnvelope.safeParse({ ...base, sequence: 1.5 }).success).toBe(false);
    expect(webhookEnvelope.safeParse(base).success).toBe(false);
  });
});
