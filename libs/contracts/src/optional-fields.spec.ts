import {
  approveWithdrawalInput,
  createAddressBookEntrySchema,
  createWalletSchema,
  rejectWithdrawalInput,
  sandboxDepositSchema,
  transferSchema,
  withdrawalPolicyInput,
  withdrawSchema,
} from './index';

// Decision 0477: every optional field of a custody request body takes null as "left out".
describe('optional custody request fields sent as null', () => {
  const uuid = '00000000-0000-4000-8000-000000000001';
  it.each([
    ['transfer', transferSchema, { sourceWalletId: uuid, destinationWalletId: uuid, amount: '1' }, ['note']],
    [
      'withdraw',
      withdrawSchema,
      { sourceWalletId: uuid, destinationAddress: 'a', amount: '1' },
      ['destinationTag', 'note'],
    ],
    ['wallet', createWalletSchema, { assetId: 'ETH' }, ['label']],
    ['address book', createAddressBookEntrySchema, { assetId: 'ETH', address: 'a', label: 'l' }, ['tag']],
    ['sandbox deposit', sandboxDepositSchema, { walletId: uuid, amount: '1' }, ['sourceAddress']],
    ['approve', approveWithdrawalInput, {}, ['note']],
    ['reject', rejectWithdrawalInput, {}, ['reason']],
  ] as const)('%s', (_, schema, required, optional) => {
    const nulls = Object.fromEntries(optional.map((field) => [field, null]));
    const parsed = schema.parse({ ...required, ...nulls }) as Record<string, unknown>;
    for (const field of optional) expect(parsed[field]).toBeUndefined();
    for (const field of Object.keys(required)) {
      expect(schema.safeParse({ ...required, [field]: null }).success).toBe(false);
    }
  });

  // Decision 0484: the operator policy's destination entries too.
  it('policy destination entry', () => {
    const entry = { asset: 'XRP', address: 'a' };
    const parsed = withdrawalPolicyInput.parse({
      destinations: { mode: 'deny', entries: [{ ...entry, tag: null }] },
    });
    expect(parsed.destinations?.entries[0]).toEqual(entry);
    for (const field of Object.keys(entry)) {
      const body = { destinations: { mode: 'deny', entries: [{ ...entry, [field]: null }] } };
      expect(withdrawalPolicyInput.safeParse(body).success).toBe(false);
    }
  });
});
