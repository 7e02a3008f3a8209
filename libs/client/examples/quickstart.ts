// A first transfer and a first applicant with @tessera/client, against `pnpm start` + `pnpm seed`:
//
//   eval "$(pnpm -s seed | grep '^export ')"
//   pnpm --filter @tessera/client example
//
// It is type-checked with the package (tsconfig.check.json), so it cannot drift from the client's surface.
import { createCustodyClient, createVerificationClient, TesseraApiError } from '../src';

function env(name: string): string {
  // A partner's program, not a Tessera service: its settings come from its own environment.
  // eslint-disable-next-line no-restricted-syntax
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run eval "$(pnpm -s seed | grep '^export ')" first`);
  return value;
}

async function custodyQuickstart(): Promise<void> {
  const custody = createCustodyClient({
    baseUrl: env('TESSERA_CUSTODY_URL'),
    apiKey: env('TESSERA_CUSTODY_KEY'),
    apiSecret: env('TESSERA_CUSTODY_SECRET'),
  });
  const { items: assets } = await custody.assets.list();
  const btc = assets.find((a) => a.symbol === 'BTC');
  if (!btc) throw new Error('BTC is not enabled for this tenant');

  const vault = await custody.vaults.create({ externalId: `example-${Date.now()}`, name: 'Example' });
  const a = await custody.wallets.create(vault.id, { assetId: btc.id, label: 'a' });
  const vault2 = await custody.vaults.create({ externalId: `example-${Date.now()}-2`, name: 'Example 2' });
  const b = await custody.wallets.create(vault2.id, { assetId: btc.id, label: 'b' });

  const deposit = await custody.sandbox.deposit({ walletId: a.walletId, amount: '0.5' });
  for (let status = ''; status !== 'Completed';) {
    await new Promise((r) => setTimeout(r, 500));
    status = (await custody.transactions.get(deposit.transactionId)).status;
  }
  const transfer = await custody.transactions.transfer(
    { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.1' },
    { idempotencyKey: `example-transfer-${vault.id}` },
  );
  console.log('transfer', transfer.transactionId, transfer.status);
  console.log('balance', await custody.wallets.balance(a.walletId));
  for await (const tx of custody.transactions.list({ walletId: a.walletId, take: 50 }))
    console.log(tx.type, tx.status, tx.amount);
}

async function verificationQuickstart(): Promise<void> {
  const kyc = createVerificationClient({
    baseUrl: env('TESSERA_VERIFICATION_URL'),
    apiKey: env('TESSERA_VERIFICATION_KEY'),
    apiSecret: env('TESSERA_VERIFICATION_SECRET'),
    environment: 'sandbox',
  });
  const { items: levels } = await kyc.levels.list({ type: 'individual' });
  const externalUserId = `example-${Date.now()}`;
  await kyc.applicants.create({ externalUserId, firstName: 'Ada', lastName: 'Lovelace' });
  const link = await kyc.applicants.createSession(externalUserId, { verificationLevelName: levels[0].name });
  console.log('send the user to', link.url);
  await kyc.sandbox.review(externalUserId, { reviewAnswer: 'GREEN' });
  console.log('status', (await kyc.applicants.status(externalUserId)).status);
}

custodyQuickstart()
  .then(verificationQuickstart)
  .catch((err: unknown) => {
    if (err instanceof TesseraApiError) console.error(err.status, err.message, err.errors ?? '');
    else console.error(err);
    process.exitCode = 1;
  });
