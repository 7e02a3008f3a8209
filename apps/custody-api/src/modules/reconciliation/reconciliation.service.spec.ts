import { chainFinding, ledgerFinding } from './reconciliation.service';
import type { ChainWallet } from './reconciliation.repository';

const wallet = (over: Partial<ChainWallet> = {}): ChainWallet => ({
  walletId: '11111111-1111-4111-8111-111111111111',
  tenantId: '22222222-2222-4222-8222-222222222222',
  assetSymbol: 'ETH',
  assetDecimals: 18,
  addresses: ['0xabc'],
  total: '1000',
  internalNet: '0',
  unconfirmedIn: '0',
  inFlightOut: '0',
  inFlightFees: '0',
  feePayingSends: 0,
  ...over,
});

describe('chainFinding: the cause of an on-chain difference', () => {
  it('no finding when the chain holds exactly the settled total', () => {
    expect(chainFinding(wallet(), 1000n, 5n)).toBeUndefined();
  });

  it('unconfirmed_deposit (explained) when mined, uncredited deposits account for all of it', () => {
    expect(chainFinding(wallet({ unconfirmedIn: '250' }), 1250n, 5n)).toMatchObject({
      cause: 'unconfirmed_deposit',
      explained: true,
      expected: '1000',
      actual: '1250',
      difference: '250',
    });
  });

  it('in_flight_withdrawal (explained) for a shortfall within broadcast withdrawals plus their held fees', () => {
    const w = wallet({ inFlightOut: '300', inFlightFees: '21', feePayingSends: 1 });
    expect(chainFinding(w, 1000n - 300n - 15n, 5n)).toMatchObject({
      cause: 'in_flight_withdrawal',
      explained: true,
    });
    // Beyond amount + held fee: fees on chain disagree with the ledger.
    expect(chainFinding(w, 1000n - 300n - 22n, 5n)).toMatchObject({
      cause: 'fee_drift',
      explained: false,
      details: expect.objectContaining({ unexplained: '-322' }),
    });
  });

  it('missing_credit when the chain holds more than the ledger and its pending deposits', () => {
    expect(chainFinding(wallet({ unconfirmedIn: '10' }), 1100n, 5n)).toMatchObject({
      cause: 'missing_credit',
      explained: false,
      difference: '100',
      details: expect.objectContaining({ unexplained: '90', block: '5' }),
    });
  });

  it('internal transfers move the ledger, not the chain: the addresses should hold total − their net', () => {
    // Received 400 by internal transfer: the ledger says 1000, the address holds the 600 it received on chain.
    expect(chainFinding(wallet({ internalNet: '400' }), 600n, 5n)).toBeUndefined();
    // Sent 400: the ledger says 1000, the address still holds 1400.
    expect(chainFinding(wallet({ internalNet: '-400' }), 1400n, 5n)).toBeUndefined();
    // A real shortfall beside them is still found, measured against what the address should hold.
    expect(chainFinding(wallet({ internalNet: '400' }), 500n, 5n)).toMatchObject({
      cause: 'unexplained_shortfall',
      expected: '600',
      actual: '500',
      difference: '-100',
      details: expect.objectContaining({ ledgerTotal: '1000', internalTransfersNet: '400' }),
    });
  });

  it('unexplained_shortfall when funds left a wallet that never paid fees', () => {
    expect(chainFinding(wallet(), 900n, 5n)).toMatchObject({
      cause: 'unexplained_shortfall',
      explained: false,
      difference: '-100',
    });
  });
});

describe('ledgerFinding', () => {
  it('leads with the first differing bucket and keeps all four', () => {
    const f = ledgerFinding({
      walletId: '11111111-1111-4111-8111-111111111111',
      tenantId: '22222222-2222-4222-8222-222222222222',
      assetSymbol: 'BTC',
      assetDecimals: 8,
      balance: { total: '10', available: '10', pending: '7', locked: '0' },
      entries: { total: '10', available: '10', pending: '0', locked: '0' },
    });
    expect(f).toMatchObject({
      check: 'ledger',
      cause: 'ledger_balance_mismatch',
      explained: false,
      expected: '0',
      actual: '7',
      difference: '7',
      details: { bucket: 'pending' },
    });
  });
});
