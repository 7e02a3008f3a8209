import { EMPTY_POLICY, type PolicyDocument } from './policy-document';
import { evaluatePolicy, type WithdrawalFacts } from './policy-evaluator';

const BTC = 'a0000000-0000-4000-8000-000000000001';
const ETH = 'a0000000-0000-4000-8000-000000000002';

const facts = (over: Partial<WithdrawalFacts> = {}): WithdrawalFacts => ({
  assetId: BTC,
  assetSymbol: 'BTC',
  decimals: 8,
  units: 100_000_000n,
  requestedBy: 'ck_test_req',
  destination: { address: 'tb1qdest', tag: null },
  bookEntryAge: async () => ({ ageSeconds: 10_000, createdAt: new Date(0) }),
  withdrawnInWindow: async () => 0n,
  activeKeys: async (keys) => new Set(keys),
  ...over,
});

const policy = (over: Partial<PolicyDocument>): PolicyDocument => ({ ...EMPTY_POLICY, ...over });

describe('evaluatePolicy', () => {
  it('refuses on the first breach in order: destinations before the maximum', async () => {
    const result = await evaluatePolicy(
      policy({
        maxAmount: [{ assetId: BTC, units: '1' }],
        destinations: { mode: 'allow', entries: [{ assetId: BTC, address: 'tb1qother', tag: null }] },
      }),
      facts(),
    );
    expect(result).toMatchObject({ refused: true, rule: 'destinations' });
  });

  it('accepts an amount equal to the maximum and to what is left of the velocity window', async () => {
    const result = await evaluatePolicy(
      policy({
        maxAmount: [{ assetId: BTC, units: '100000000' }],
        velocity: [{ assetId: BTC, per: 'wallet', units: '300000000' }],
      }),
      facts({ withdrawnInWindow: async () => 200_000_000n }),
    );
    expect(result).toMatchObject({ refused: false, windows: ['wallet'], approval: null });
    if (!result.refused)
      expect(result.results.map((r) => [r.rule, r.outcome])).toEqual([
        ['maxAmount', 'passed'],
        ['velocity', 'passed'],
      ]);
  });

  it('refuses one base unit above the velocity window, naming the vault', async () => {
    const result = await evaluatePolicy(
      policy({ velocity: [{ assetId: BTC, per: 'vault', units: '100000000' }] }),
      facts({ units: 1n, withdrawnInWindow: async () => 100_000_000n }),
    );
    expect(result).toMatchObject({ refused: true, rule: 'velocity' });
    if (result.refused) expect(result.message).toContain('from this vault');
  });

  it('rules of another asset are not evaluated', async () => {
    const result = await evaluatePolicy(policy({ maxAmount: [{ assetId: ETH, units: '1' }] }), facts());
    expect(result).toEqual({ refused: false, results: [], windows: [], approval: null });
  });

  it('needs approval strictly above the threshold; the requester and revoked keys do not count', async () => {
    const approvals = [
      { assetId: BTC, aboveUnits: '100000000', required: 2, approvers: ['a', 'b', 'ck_test_req'] },
    ];
    const atThreshold = await evaluatePolicy(policy({ approvals }), facts());
    expect(atThreshold).toMatchObject({ refused: false, approval: null });
    const above = await evaluatePolicy(policy({ approvals }), facts({ units: 100_000_001n }));
    expect(above).toMatchObject({ refused: false, approval: { required: 2, windowSeconds: 86400 } });
    const revoked = await evaluatePolicy(
      policy({ approvals }),
      facts({ units: 100_000_001n, activeKeys: async () => new Set(['a', 'ck_test_req']) }),
    );
    expect(revoked).toMatchObject({ refused: true, rule: 'approvals' });
  });

  it('refuses a destination with no address-book entry old enough, saying when it becomes usable', async () => {
    const createdAt = new Date('2026-01-01T00:00:00Z');
    const result = await evaluatePolicy(
      policy({ addressCooldownSeconds: 3600 }),
      facts({ bookEntryAge: async () => ({ ageSeconds: 60, createdAt }) }),
    );
    expect(result).toMatchObject({ refused: true, rule: 'addressCooldown' });
    if (result.refused) expect(result.message).toContain('2026-01-01T01:00:00.000Z');
  });
});
